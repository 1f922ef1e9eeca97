"""One verdict (issue 20 item 3): a GPU grading also grades each lab on the kit's CPU simulator, beside the GPU work,
and a lab's correctness is what both platforms allow.

    python3 -m grader            the GPU and the simulator's check (the default)
    python3 -m grader --no-simulator-check      the GPU alone (for debugging; results.json says so)

labs.toml's [limits] simulator_check = false turns it off for every grading (make grade, make grade-class, the
Gradescope run: they all grade through grade.py's Grader); simulator_check_seconds bounds the simulator's share of a
lab (its runs past it are "could not tell"), so that a lab's grading takes at most that much longer than on the GPU.

How it runs. Once a lab has built and passed its static checks on the GPU side, SimCheck grades the same file on the
simulator in a thread of its own (a Grader on check_platform: grader/sim/simulator.py's SimPlatform, with its
adversarial schedules, linked by mk/sim.mk in BUILD_DIR/sim/LAB from the GPU build's own student.o, so that it
simulates the PTX of the very object the GPU runs and its folders never meet the GPU build's; its device shows the
runner the graded GPU's name, memory and shape: sim_target.graded_gpu_env), while the GPU runs the lab's
correctness groups, compute-sanitizer and the benchmark; the simulator is CPU-only, and the labs' checks run side by
side (WORKERS of them, half the machine's cores at most), each lab's runs (every case in order and
under its three adversarial schedules, grader/sim/schedules.py) started ahead in one pool as wide
(grader/run/runs_ahead.py, as in make grade SIM=1: the verdict of the runs one at a time). The
simulator's harness objects are built once, beside the GPU's. When every lab is graded on the GPU, combine() lays the
simulator's rows over the GPU's:

- a correctness group scores the lesser of the two; where they disagree the row says which platform failed it and
  why ("the simulator: ..."); a group the simulator cannot tell about (sizes above its limit, a kernel it cannot
  simulate, its instruction budget, its own wall-clock limit, its share of time spent) keeps the GPU's row, whose
  detail says that the simulator could not tell and why;
- the sanitizers row fails when compute-sanitizer or the simulator's hazard checks found something in the student's
  code, with the finding (file:line) of whichever found it; the hazard then costs labs.toml's hazard_cost of every
  correctness group that earned points, as on either platform alone;
- performance stays the GPU's, unless the combined correctness lost points: then it is not counted, as on either
  platform ("every correctness test must pass first");
- a failure of the simulator's side that is not the student's (its harness does not build, its static checks cannot
  run, the check itself failed) costs nothing: a note says so and the GPU's verdict stands.
- where the GPU gave every correctness group of a lab 0 points (a hung kernel, a blank lab), the simulator cannot
  lower anything: its check of that lab is stopped as soon as the GPU's rows are in (drop: its run in progress is
  killed), and results.json says "skipped" and why, so a hung lab is known in the GPU's time, not the simulator's.

Every row of a checked lab records both platforms' words (data["platforms"]) and results.json's
extra_data.simulator_check records, per lab, what the simulator's check did and each platform's rows.
"""
import concurrent.futures
import copy
import functools
import inspect
import os
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from grader.run import gpuinfo, runs_ahead
from grader.sim import estimate, sim_target
from grader.sim.sim_report import KIT as KIT_FAULT, STUDENT
from grader.config import SANITIZERS
from grader.run.run import Outcome
from grader.score.score import (FORBIDDEN, HAZARD, STATIC_CHECKS, TestResult, apply_hazards, hazards_of, not_run,
                          student_paths)

FOLDER = "sim"  # BUILD_DIR/sim/LAB: the simulator's build and runs of a lab, apart from BUILD_DIR/LAB (the GPU's)
SIM = "the simulator"
GPU = "the GPU"
DEFAULT_LAB_SECONDS = 900.0  # labs.toml [limits] simulator_check_seconds, when it gives none
NO_GPU_RUN = "there is no GPU run to compare with (no CUDA device)"  # why a check is skipped where no GPU ran
# The simulator's row statuses that give no verdict on the student's code; whose() says whose doing that is.
NEEDS_GPU_STATUS, NOT_GRADED_STATUS = "needs GPU", "not graded"
COULD_NOT_TELL = (NEEDS_GPU_STATUS, NOT_GRADED_STATUS, "not run", "ERROR", "NO BUILD", FORBIDDEN)
SIZE = "size"
KIT_NOTE = "the kit's fault: the instructors should look at it (the gradebook's notes name it)"


def workers(cpus: int | None = None) -> int:
    """How many labs the simulator checks at once, and how many of their runs go at once (grader/run/runs_ahead.py):
    half the machine's cores (the GPU runs' host side keeps the rest), at least one."""
    return max(1, (cpus if cpus is not None else os.cpu_count() or 2) // 2)


@dataclass
class Verdict:
    """What the simulator's check of one lab gave. status: "ran" (results are its rows), "kit error" (its harness
    did not build, or its static checks could not run: not the student's doing), "error" (the check itself failed:
    a kit bug), "skipped" (no GPU run to compare with). message: why, for the last three."""

    status: str
    results: list = field(default_factory=list)
    message: str = ""
    seconds: float = 0.0
    stages: dict = field(default_factory=dict)  # the simulator's grading's own stage seconds (build, correctness...)


def brief(r: TestResult | None) -> dict | None:
    """What a platform said of one row, for results.json."""
    if r is None:
        return None
    return {"status": r.status, "score": r.score, "max_score": r.max_score, "summary": r.summary}


def _with(r: TestResult, **changes) -> TestResult:
    new = copy.copy(r)
    new.data = dict(r.data or {})
    for k, v in changes.items():
        setattr(new, k, v)
    return new


def _join(*parts) -> str:
    return "\n".join(p for p in parts if p)


def said(platform: str, summary: str) -> str:
    """summary led by the platform that said it ("the simulator: ..."), once."""
    return summary if summary.startswith(platform) else f"{platform}: {summary}"


def words(r: TestResult) -> str:
    """A row's status and summary, the status once ("pass: 16 cases passed", "not run: no GPU")."""
    return r.summary if r.summary.lower().startswith(r.status.lower()) else f"{r.status}: {r.summary}"


def could_not_tell(r: TestResult | None) -> str:
    """Why the simulator's row r gives no verdict on the student's code ("" when it does): a status of
    COULD_NOT_TELL, or a TIMEOUT of its wall clock (a backstop: the work limits stop a kernel that loops and host
    code that spins), not of its instruction limit (the kernel looped)."""
    if r is None:
        return "it did not grade this test"
    if r.status in COULD_NOT_TELL:
        return r.summary or r.status
    if r.status == "TIMEOUT" and r.data.get("wall_clock"):
        return f"its wall-clock backstop stopped a run ({r.summary}): the kit's fault, not your code's"
    return ""


def whose(r: TestResult | None) -> str:
    """Whose doing it is that the simulator's row r gives no verdict (could_not_tell): STUDENT (a launch past the
    instruction budget: the file does far more work than the lab needs; a group not run after the file hung or used
    up its CPU time), SIZE (sizes the simulator does not run: the GPU alone judges them, by design) or KIT (the
    simulator's gap or fault: an instruction it lacks, its crash, its build, its wall-clock backstop or time
    share)."""
    if r is not None and r.status == NEEDS_GPU_STATUS:
        return SIZE
    if r is not None and r.status in (NOT_GRADED_STATUS, "not run"):  # "not run" after the file's hang: its own
        return (r.data or {}).get("whose", KIT_FAULT)
    return KIT_FAULT


def kit_failure_rows(lab, gpu_results: list, verdict: Verdict) -> list:
    """The GPU's rows of lab, each noting that the simulator's check did not run (verdict), for no loss of points."""
    words = f"the simulator's check of this lab did not run (not your code's doing: {verdict.message}); the GPU's " \
            f"verdict stands"
    out = []
    for r in gpu_results:
        if r.name in (STATIC_CHECKS, "performance"):
            out.append(r)
            continue
        new = _with(r, detail=_join(r.detail, words))
        new.data["platforms"] = {"gpu": brief(r), "simulator": {"status": verdict.status, "summary": verdict.message}}
        new.data["kit_fault"] = f"the simulator's check did not run: {verdict.message}"
        out.append(new)
    return out


def combine(lab, gpu_results: list, verdict: Verdict | None) -> list:
    """The rows of lab from the GPU's (gpu_results: its static checks, groups, sanitizers and performance rows, as
    Grader.grade_lab gives them) and the simulator's check (verdict; None: not checked, the GPU's rows as they are).
    The module's docstring says how; pure (the rows given are not changed)."""
    if verdict is None or verdict.status == "skipped":
        return gpu_results
    if verdict.status != "ran":
        return kit_failure_rows(lab, gpu_results, verdict)
    sim = {r.name: r for r in verdict.results}
    first = next((r for r in verdict.results if r.name != STATIC_CHECKS), None)
    whole = ""  # why the simulator could tell nothing of the whole lab
    if sim.get(STATIC_CHECKS) is not None and sim[STATIC_CHECKS].status == FORBIDDEN:
        whole = f"its build's static checks refused it ({sim[STATIC_CHECKS].summary})"
    elif first is not None and first.status == "NO BUILD":
        whole = f"it could not build the file ({first.summary})"
    groups = [g.name for g in lab.groups]
    out = []
    for r in gpu_results:
        if r.name in groups:
            out.append(_group(r, None if whole else sim.get(r.name), whole, lab))
        elif r.name == SANITIZERS:
            out.append(_sanitizers(r, None if whole else sim.get(r.name), whole))
        else:
            out.append(r)
    # a hazard only the simulator found costs the groups it has not cost yet (those the simulator could not run)
    row = next((r for r in out if r.name == SANITIZERS), None)
    if row is not None and lab.sanitizers and hazards_of(row):
        fresh = [r for r in out if r.name in groups and r.status != HAZARD]
        apply_hazards([*fresh, row], [r.name for r in fresh], lab.sanitizers.hazard_cost)
    correct = all(r.full for r in out if r.name not in (STATIC_CHECKS, "performance"))
    gpu_correct = all(r.full for r in gpu_results if r.name not in (STATIC_CHECKS, "performance"))
    for k, r in enumerate(out):
        if r.name == "performance" and gpu_correct and not correct:
            lost = next(x for x in out if x.name not in (STATIC_CHECKS, "performance") and not x.full)
            new = not_run(r.lab, r.name, r.max_score,
                          f"not run: every correctness test must pass first ({lost.name} did not, on "
                          f"{_platform(lost)})",
                          f"Its benchmark ran on the GPU ({words(r)}) but counts only once every "
                          f"correctness test passes on both platforms.")
            new.data = {"platforms": {"gpu": brief(r)}}
            out[k] = new
    return out


def _platform(r: TestResult) -> str:
    said = (r.data or {}).get("failed_on")
    return {"simulator": SIM, "gpu": GPU}.get(said, "the GPU and the simulator")


def _group(gpu: TestResult, sim: TestResult | None, whole: str = "", lab=None) -> TestResult:
    """One correctness group's row: the lesser of the two platforms', saying which failed it. Where the simulator
    gives no verdict (could_not_tell) because of the student's file (whose: STUDENT), the check fails closed: the
    group's points are withheld, saying why and what to change, unless the lab's labs.toml table says
    simulator_check_open = true (the GPU's verdict then stands, saying so); where it is the kit's, the GPU's verdict
    stands and the row is marked for the instructors (data["kit_fault"])."""
    why = whole or could_not_tell(sim)
    owner = KIT_FAULT if whole else whose(sim)
    platforms = {"gpu": brief(gpu), "simulator": brief(sim) if sim is not None else {"summary": why}}
    if why and owner == STUDENT and not getattr(lab, "simulator_check_open", False):
        new = _with(sim, summary=said(SIM, sim.summary),
                    detail=_join(sim.detail, f"The simulator's check could not judge this group because of what "
                                             f"{gpu.lab}'s file does, so its points are withheld until it can (on "
                                             f"the GPU: {words(gpu)}). The check watches every graded program; a "
                                             f"file it cannot judge earns nothing it guards."))
        new.data.pop("run_seconds", None)
        new.data["failed_on"] = "simulator"
    elif why:
        new = _with(gpu, detail=_join(gpu.detail, f"{SIM} could not tell: {why}"))
        if owner == STUDENT:
            new.detail = _join(new.detail, f"grader/labs.toml's simulator_check_open = true for {gpu.lab} lets the "
                                           f"GPU's verdict stand where the check could not judge the file")
            new.data["check_relaxed"] = why
        elif owner == KIT_FAULT:
            new.detail = _join(new.detail, f"That is {KIT_NOTE}.")
            new.data["kit_fault"] = why
    elif sim.score < gpu.score:
        new = _with(sim, summary=said(SIM, sim.summary),
                    detail=_join(sim.detail, f"On the GPU this group passed ({gpu.summary}); {SIM} runs it under "
                                             f"orders of blocks and warps a GPU may choose too, and checks for "
                                             f"hazards: its verdict counts as the GPU's does."))
        new.data.pop("run_seconds", None)
        if "run_seconds" in gpu.data:
            new.data["run_seconds"] = gpu.data["run_seconds"]
        new.data["failed_on"] = "simulator"
    elif gpu.score < sim.score:
        new = _with(gpu, summary=gpu.summary if gpu.status == "not run" else said(GPU, gpu.summary),
                    detail=_join(gpu.detail, f"On {SIM} this group passed ({sim.summary})."))
        new.data["failed_on"] = "gpu"
    else:
        new = _with(gpu)
        if not gpu.full:
            new.detail = _join(gpu.detail, f"On {SIM}: {words(sim)}")
    new.data["platforms"] = platforms
    return new


def _sanitizers(gpu: TestResult, sim: TestResult | None, whole: str = "") -> TestResult:
    """The sanitizers row: FAIL when either compute-sanitizer or the simulator's hazard checks found a hazard in the
    student's code, with the finding of whichever found it."""
    why = whole or (could_not_tell(sim) if sim is None or sim.status != "FAIL" else "")
    platforms = {"gpu": brief(gpu), "simulator": brief(sim) if sim is not None else {"summary": why}}
    gpu_found, sim_found = hazards_of(gpu), (hazards_of(sim) if sim is not None and not why else [])
    if sim_found and not gpu_found:
        new = _with(sim, summary=said(SIM, sim.summary),
                    detail=_join(sim.detail, f"compute-sanitizer on the GPU: {words(gpu)}"))
        new.data["failed_on"] = "simulator"
    elif gpu_found and not sim_found and sim is not None and sim.status == "pass":
        new = _with(gpu, summary=said(GPU, gpu.summary),
                    detail=_join(gpu.detail, f"{SIM}'s hazard checks: {sim.summary}"))
        new.data["failed_on"] = "gpu"
    else:
        new = _with(gpu)
        if sim_found:  # both found hazards: the GPU's row, the simulator's findings beside
            new.detail = _join(gpu.detail, f"{SIM} found too: {sim.summary}")
        elif why:
            new.detail = _join(gpu.detail, f"{SIM}'s hazard checks could not tell: {why}")
    new.data["platforms"] = platforms
    return new


def check_platform(*, deadline: float, stop=None, run_pool=None):
    """The simulator's back end for the check (grader/sim/simulator.py's SimPlatform with these changes): no
    performance estimate (performance is the GPU's), a wall-clock timeout marked as such, and a deadline for the
    lab's runs (deadline: time.monotonic() past which no run starts; stop: () -> why to start no further run, "" to
    go on)."""
    from grader.sim.simulator import NEEDS_GPU, TIMEOUT, SimPlatform

    class CheckPlatform(SimPlatform):
        def __init__(self):
            super().__init__(run_pool=run_pool)
            self.deadline = deadline
            self.stop = stop or (lambda: "")

        def run_case(self, grader, lab, tag, program, args, timeout):
            left = self.deadline - time.monotonic()
            why = self.stop() or ("" if left > 1 else f"the simulator's share of this lab's grading was spent (grader/"
                                                      f"labs.toml [limits] simulator_check_seconds)")
            if why:
                outcome = Outcome("not-simulated", f"not graded: {why}")
                outcome.whose = KIT_FAULT  # a share of wall-clock time, a dropped check: never the student's
                self.group_outcomes.append(outcome)
                self.group_args.append(list(args))
                return outcome
            return super().run_case(grader, lab, tag, program, args, min(timeout, left))

        def ahead_limit(self, timeout: float) -> float:
            return max(1.0, min(timeout, self.deadline - time.monotonic()))

        def host_memory_mib(self, limits) -> int:
            # the GPU's limit, not the simulator's smaller one: a runner that mallocs past 512 MiB must not learn
            # that it is watched (the simulated sizes need little either way)
            return limits.for_run(False)

        def grade_group(self, grader, lab, index, group, program):
            result = super().grade_group(grader, lab, index, group, program)
            if result.status == TIMEOUT and not any(getattr(o, "instruction_limit", False)
                                                    for o in self.group_outcomes):
                result.data["wall_clock"] = True
            return result

        def grade_performance(self, grader, lab, program, correct, report):
            return TestResult(lab.name, "performance", lab.performance.points, 0.0, NEEDS_GPU,
                              "performance is the GPU's")

    return CheckPlatform()


@functools.lru_cache(maxsize=4)
def graded_gpu_view(visible: str | None, order: str | None) -> dict:
    """sim_target.graded_gpu_env of the GPU this process grades on (nvidia-smi's, gpuinfo.identity), asked once a
    process: a class run checks each student apart; {} where nvidia-smi cannot tell."""
    gpu = gpuinfo.identity(visible, order)
    if not gpu:
        return {}
    try:
        specs = estimate.load_specs()
    except estimate.EstimateError:  # grader/gpus.toml broken: the name, memory and target alone
        specs = ({}, None)
    return sim_target.graded_gpu_env(gpu, specs)


class GivenVerdicts:
    """SimCheck's stand-in in a Grader whose labs the simulator checks apart from its GPU work: a class run checks
    each student's labs in its CPU pool, beside other students' GPU turns (grader/classroom/student.py's simulate),
    so that the student's GPU turn neither waits for the simulator nor holds the GPU while it works. verdicts: lab
    name -> Verdict, none while the grading runs (Grader.sim_later): Grader.lay_over_sim_checks lays them over its
    report once they are in."""

    def __init__(self, grader, verdicts: dict):
        self.grader, self.verdicts, self.submitted, self.dropped = grader, dict(verdicts), set(), {}

    def start(self, patterns) -> None:
        pass

    def submit(self, lab) -> None:
        self.submitted.add(lab.name)

    def drop(self, lab, why: str) -> None:
        self.dropped[lab.name] = why

    def verdict(self, lab) -> Verdict | None:
        if lab.name not in self.submitted:
            return None
        if lab.name in self.dropped:
            return Verdict("skipped", message=self.dropped[lab.name])
        if self.grader.no_device:
            return Verdict("skipped", message=NO_GPU_RUN)
        return self.verdicts.get(lab.name)

    def close(self) -> None:
        pass


def check_ahead(grader, grader_class, labs, *, hooks=None, lab_seconds: float = DEFAULT_LAB_SECONDS) -> dict:
    """The simulator's Verdict of each of labs (lab name -> Verdict), checked now, for a grading that lays them over
    its report later (Grader.lay_over_sim_checks). grader: the Grader whose submission, seed, kit and build folder the GPU side
    will use."""
    check = SimCheck(grader, grader_class, hooks=hooks, lab_seconds=lab_seconds)
    try:
        check.start(list(dict.fromkeys(lab.pattern for lab in labs)))
        for lab in labs:
            check.submit(lab)
        return {lab.name: check.verdict(lab) for lab in labs}
    finally:
        check.close()


class SimCheck:
    """The simulator's check of a GPU grading (grader: the grade.Grader; grader_class: the class its own graders are
    made from, grade.Grader, handed in so that this module needs no import of grade.py): start() builds the
    simulator's harness objects, submit(lab) grades a lab on the simulator in a thread, verdict(lab) waits for its
    Verdict.

    hooks: build, build_harness, run for the simulator's side (default grader/sim/simulator.py's build_lab_sim,
    build_harness_sim, run_harness_sim)."""

    def __init__(self, grader, grader_class, *, hooks=None, lab_seconds: float = DEFAULT_LAB_SECONDS,
                 max_workers: int | None = None):
        from grader.sim import simulator
        hooks = dict(hooks or {})
        self.build = hooks.get("build", simulator.build_lab_sim)
        self.build_harness = hooks.get("build_harness", simulator.build_harness_sim)
        self.run = hooks.get("run", simulator.run_harness_sim)
        self.grader, self.grader_class, self.lab_seconds = grader, grader_class, lab_seconds
        self.folder = Path(grader.build_dir) / FOLDER
        # at a lower CPU priority than the GPU side, whose CPU work is the grading's critical path
        # (runs_ahead.background)
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers or workers(), thread_name_prefix="sim-check",
                                                          initializer=runs_ahead.background)
        self.run_pool = runs_ahead.RunPool(runs_ahead.ahead_jobs(workers(runs_ahead.share())), background=True)
        self.harnesses, self.futures = {}, {}
        self.cancelled = threading.Event()
        self.stops = {}  # lab -> the Event that stops its runs (drop)
        self.dropped = {}  # lab -> why its check was dropped

    def start(self, patterns) -> None:
        """Builds each pattern's harness for the simulator, in the pool (beside the GPU's harness builds), and gives
        the simulator's device the graded GPU's identity (nvidia-smi's: sim_target.graded_gpu_env), so that a
        runner reading the device's properties cannot tell that it is watched."""
        if not self.grader.no_device:
            sim_target.set_graded_gpu(graded_gpu_view(os.environ.get("CUDA_VISIBLE_DEVICES"),
                                                      os.environ.get("CUDA_DEVICE_ORDER")))
        for pattern in patterns:
            self.harnesses[pattern] = self.pool.submit(self.build_harness, self.grader.kit, pattern,
                                                       timeout=self.grader.build_timeout)

    def submit(self, lab) -> None:
        """Starts the simulator's grading of lab (its file as the GPU side built it)."""
        self.stops[lab.name] = threading.Event()
        self.futures[lab.name] = self.pool.submit(self._grade, lab)

    def drop(self, lab, why: str) -> None:
        """Stops lab's check where its verdict can change nothing (why: the GPU gave its groups no points, a hung
        kernel for one): its run in progress is killed and no other starts, so the grading does not wait for the
        simulator to find the same. Its verdict is then "skipped", saying why."""
        if lab.name in self.stops:
            self.dropped[lab.name] = why
            self.stops[lab.name].set()

    def verdict(self, lab) -> Verdict | None:
        """The Verdict of lab's check (waiting for it), or None when it was never started."""
        future = self.futures.get(lab.name)
        if future is None:
            return None
        return Verdict("skipped", message=self.dropped[lab.name]) if lab.name in self.dropped else future.result()

    def close(self) -> None:
        """Stops the runs not started yet and lets the pool go."""
        self.cancelled.set()
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.run_pool.close()

    def _stop(self, lab=None) -> str:
        if self.cancelled.is_set():
            return "the grading was stopped"
        if self.grader.no_device:
            return NO_GPU_RUN
        return self.dropped.get(lab.name, "") if lab is not None else ""

    def _grade(self, lab) -> Verdict:
        start = time.monotonic()
        try:
            built = self.harnesses[lab.pattern].result()
            if not built.ok:
                return Verdict("kit error", message=f"the simulator's {lab.pattern} harness does not build: "
                                                    f"{(built.message.splitlines() or [''])[0]}",
                               seconds=time.monotonic() - start)
            if self._stop(lab):
                return Verdict("skipped", message=self._stop(lab))
            grader = self._grader(start, lab)
            report = grader.grade([lab])
            if report.kit_error:
                return Verdict("kit error", message=(report.kit_error.splitlines() or [""])[0],
                               seconds=time.monotonic() - start)
            results = [r for r in report.results if r.lab == lab.name]
            mine = self.grader.submission / lab.name / lab.source
            student_paths(results, self.folder / lab.name / lab.source, mine, self.grader.kit)
            return Verdict("ran", results, seconds=time.monotonic() - start,
                           stages=dict(report.stage_seconds.get(lab.name, {})))
        except Exception as e:  # a bug of the check: never the student's points
            self.grader.log(f"{lab.name}: simulator check failed: {traceback.format_exc()}")
            return Verdict("error", message=f"the check failed ({type(e).__name__}: {e})",
                           seconds=time.monotonic() - start)

    def _grader(self, start: float, lab):
        main, harnesses = self.grader, self.harnesses
        log = main.log
        run = self.run
        if "cancel" in inspect.signature(run).parameters:  # drop() kills the run in progress (run_harness_sim)
            run = functools.partial(run, cancel=self.stops[lab.name])
        platform = check_platform(deadline=start + self.lab_seconds, stop=lambda: self._stop(lab),
                                  run_pool=self.run_pool)
        build = self.build
        gpu_object = Path(main.build_dir) / lab.name / "student.o"
        if "object_from" in inspect.signature(build).parameters and gpu_object.is_file():
            # the very object the GPU runs, its PTX simulated: no #if __CUDA_ARCH__ tells the check from the GPU
            build = functools.partial(build, object_from=gpu_object)
        return self.grader_class(
            main.config, main.submission, kit=main.kit, build_dir=self.folder, seed=main.seed,
            build_timeout=main.build_timeout, sandbox=main.sandbox, build=build,
            build_harness=lambda kit, pattern, **kw: harnesses[pattern].result(), run=run, check=main.check,
            log=lambda message: log(f"[simulator] {message}"), platform=platform)
