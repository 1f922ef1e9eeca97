"""Grades a submission of the Parallel Patterns Lab: builds each lab from the kit's harness plus the student's one
file, runs the test groups of grader/labs.toml, and reports points as a table and as Gradescope's results.json.

    python3 -m grader [--submission labs|solutions|DIR] [--lab 03] [--results PATH]

Each lab's compiled file first goes through the static checks (grader/compile/static_check.py): a file that uses what it
may not (a library, a host copy, files, processes, code before main) scores 0 on every test of its lab, and none runs.

Exit status: 0 full marks (on every lab but the bonus labs), 1 points lost, 2 the grader or the kit is broken (bad
labs.toml, the harness does not build, nm or objdump is missing for the static checks), 77 no CUDA device here
(the run-time tests are reported as not run; compile errors and static check findings are still reported).

--simulator (`make grade SIM=1`) grades correctness without a GPU, on the kit's CPU simulator (grader/sim/simulator.py):
groups of large sizes, performance and compute-sanitizer score 0 as "needs GPU"; exit status 0 when every test it
ran got full marks.

On a GPU, each lab is also graded on the simulator, beside the GPU's runs, and a lab's correctness is what both allow
(grader/sim/sim_check.py: one verdict); --no-simulator-check (or labs.toml's [limits] simulator_check = false) grades on
the GPU alone, for debugging, and results.json says so (extra_data.simulator_check).
"""
import argparse
import concurrent.futures
import contextlib
import json
import secrets
import sys
import threading
import time
from pathlib import Path

from grader.compile import build as build_mod
from grader.run import gpuinfo, lifetime
from grader.run.no_gpu import shown
from grader.report import charts, report_html
from grader.sim import sim_check as sim_check_mod
from grader.compile import static_check
from grader.config import SANITIZERS, ConfigError, DEFAULT_PATH, load_config
from grader.platform import GpuPlatform
from grader.report.report import Report, format_table, gradescope_results, write_results
from grader.run.process import left_by_us
from grader.report.text import printable
from grader.run.run import NO_DEVICE_MESSAGE, run_harness, run_harness_runs
from grader.sanitize.runs import run_sanitizers
from grader.score.score import (FORBIDDEN, HANG_NOTE_START, STATIC_CHECKS, TestResult, apply_hazards, hang_note,
                                hung_labs, no_device, not_run, note_writes_past_the_end, score_group,
                                score_static_check, student_path_mapper, student_paths)

KIT = Path(__file__).resolve().parent.parent
DEFAULT_TIMEOUT = 120.0
EXIT_FULL, EXIT_LOST, EXIT_BROKEN, EXIT_NO_DEVICE = 0, 1, 2, 77


class Grader:
    """Grades labs of one submission. After a run times out, the rest of that lab is not run (a hung kernel would
    hang again, and each hang costs a whole timeout); after a run finds no CUDA device, no further run is made.
    build, build_harness and run are hooks a test may replace:

    build(kit, pattern, source, folder, timeout=, harness_build=) -> build.BuildResult
    build_harness(kit, pattern, timeout=, harness_build=) -> build.BuildResult
    run(program, args, timeout=, workdir=, cwd=, source=) -> run.Outcome   (source: the lab's file name)
    run_many(program, runs, timeouts=, workdir=, cwd=, source=) -> [run.Outcome]: every correctness run of a lab
        through one lab program and one runner (run.run_harness_runs); None (the default when `run` is replaced):
        one `run` per argument list
    check(object, pattern) -> static_check.Verdict   (raises static_check.ToolError when it cannot check at all)
    sim_check: "auto" (the simulator's check of every lab, grader/sim/sim_check.py, when the grading builds and runs on
        a GPU as the kit does: build and run not replaced; labs.toml's [limits] simulator_check can turn it off),
        True (always, also with replaced hooks), False (never: --no-simulator-check); sim_hooks: the simulator's
        side's build, build_harness and run (a dict; default grader/sim/simulator.py's); sim_later: the simulator's
        check is made apart (a class run's CPU pool) and laid over the report after the grading
        (lay_over_sim_checks)
    sanitize(program, runs, tools=, timeout=, workdir=, cwd=, source=, source_path=, kit=, log=) -> sanitize.Outcome
        (a class attribute: a test sets it on its Grader)
    platform: the back end (grader/platform.py): GpuPlatform (the default), or the simulator's SimPlatform
        (grader/sim/simulator.py); it gives the build, build_harness and run not given here, the build folder, and
        grades the correctness groups (run_groups, run_group, run_case: this class's engine, which it may wrap), the
        sanitizers row and performance.
    """

    sanitize = staticmethod(run_sanitizers)
    # a grader.run.gpu_lock.GpuLock where graders share the GPU (a class run): runs shared, benchmarks alone
    gpu_lock = None
    gpu_snapshot = staticmethod(gpuinfo.snapshot)  # () -> nvidia-smi's view of the GPUs, before and after a benchmark
    gpu_apps = staticmethod(gpuinfo.snapshot)  # () -> the same view, before grading and after each lab

    def __init__(self, config, submission, *, kit=KIT, build_dir=None, timeout=None,
                 build_timeout=build_mod.DEFAULT_BUILD_TIMEOUT, seed=None, harness_build=None, log=None,
                 build=None, build_harness=None, run=None, run_many=None, check=static_check.check_object,
                 sandbox="auto", sim_check="auto", sim_hooks=None, sim_later=False, platform=None):
        self.platform = platform if platform is not None else GpuPlatform()
        hooks = self.platform.hooks()
        build, build_harness = build or hooks["build"], build_harness or hooks["build_harness"]
        run = run or hooks["run"]
        self.config, self.kit = config, Path(kit).resolve()
        self.submission = Path(submission)
        self.build_dir = Path(self.platform.build_folder(build_dir)).resolve()
        # timeout None: each correctness run's limit comes from labs.toml's [limits] where this GPU was calibrated
        # (run_timeout), else DEFAULT_TIMEOUT; a number (--timeout, make grade-class TIMEOUT=) applies as it is
        self.explicit_timeout = timeout is not None
        self.timeout, self.build_timeout = (timeout or DEFAULT_TIMEOUT), build_timeout
        self.device_name = ""  # this machine's GPU as nvidia-smi names it (a kit process), for run_timeout
        self.seed = secrets.randbits(63) if seed is None else seed
        self.harness_build = self.platform.harness_folder(kit, harness_build)
        self.log = log or (lambda message: None)
        self.build, self.build_harness, self.run, self.check = build, build_harness, run, check
        self.run_many = run_many if run_many is not None else (run_harness_runs if run is run_harness else None)
        self.sandbox = sandbox  # "auto", or "require": a run fails unless every layer of the sandbox is in force
        self.sandbox_layers = {}  # lab -> the checker's sandbox line (layers, missing) of its first run
        self.build_layers = {}  # lab -> {"layers": [...], "missing": [...]}: what held the compile of its file
        self.no_device = False
        self.hung = set()  # labs in which a run timed out or used up its CPU time: their later tests are not run
        self.spent = set()  # those of them whose run used up its CPU time (labs.toml [limits] simulator_cpu_seconds)
        self.bench_tails = {}  # lab -> platform.BenchTail: its benchmark as its correctness program's last list
        self.sim_check, self.sim_hooks = sim_check, sim_hooks
        self.sim_later = sim_later
        self.sim_checker = None  # the running sim_check.SimCheck of a grading, or None
        self.sim_apart = None  # with sim_later: the GivenVerdicts whose labs lay_over_sim_checks completes
        self.platform.attach(self)

    def sim_check_plan(self) -> tuple:
        """(whether this grading runs the simulator's check, why) for results.json (grader/sim/sim_check.py)."""
        if self.platform.simulator_check_off:
            return False, self.platform.simulator_check_off
        if self.sim_check is False:
            return False, "turned off (--no-simulator-check)"
        if not self.config.limits.simulator_check:
            return False, "turned off by grader/labs.toml's [limits] simulator_check = false"
        if self.sim_check == "auto" and not (self.build is build_mod.build_lab and self.run is run_harness):
            return False, "the grading's build or run is not the kit's (a test's hooks)"
        return True, (f"each lab's correctness groups of sizes up to 2^21 and its hazard checks also ran on the "
                      f"kit's CPU simulator, under its adversarial schedules; a lab's correctness is what both "
                      f"platforms allow")

    def grade(self, labs) -> Report:
        """Grades each lab in turn and returns the Report; a lab that fails to build scores 0 and grading goes on."""
        start = time.monotonic()
        report = Report(str(self.submission), self.seed)
        self.report = report
        patterns = list(dict.fromkeys(lab.pattern for lab in labs))

        def build_harness(pattern):
            self.log(f"building the {pattern} harness")
            with self.stage("kit", f"{pattern} harness"):
                return self.build_harness(self.kit, pattern, timeout=self.build_timeout,
                                          harness_build=self.harness_build)

        # side by side: each pattern's CUB yardstick is one long nvcc (objects they share are renamed into place
        # whole: mk/lab.mk)
        checking, why = self.sim_check_plan()
        report.simulator_check = {"enabled": checking, "why": why, "labs": {}}
        if checking and self.sim_later:  # checked apart, laid over after the grading (a class run)
            self.sim_checker = self.sim_apart = sim_check_mod.GivenVerdicts(self, {})
        elif checking:  # the simulator's harness objects build beside the GPU's
            self.sim_checker = sim_check_mod.SimCheck(self, Grader, hooks=self.sim_hooks,
                                                      lab_seconds=self.config.limits.simulator_check_seconds)
            self.sim_checker.start(patterns)
        try:
            report = self._grade(labs, report, patterns, build_harness, start)
        finally:
            if self.sim_checker is not None:
                self.sim_checker.close()
                self.sim_checker = None
        self.platform.graded(self, report)
        return report

    def _grade(self, labs, report, patterns, build_harness, start) -> Report:
        with self.stage("kit", "harness builds"), concurrent.futures.ThreadPoolExecutor(len(patterns) or 1) as pool:
            harnesses = list(pool.map(build_harness, patterns))
        for built in harnesses:
            if not built.ok:
                report.kit_error = built.message
                report.notes.append(built.message)
                for lab in labs:
                    report.results.extend(self._mark(lab, [not_run(lab.name, name, points,
                                                                   "not run: the kit's harness does not build")
                                                           for name, points in self._all_tests(lab)]))
                report.seconds = time.monotonic() - start
                return report
        before = self._gpu_pids()
        # Each lab builds and goes through its static checks (CPU work, one lab at a time, in order) while the labs
        # before it run on the GPU: a lab then adds about its GPU work alone to a grading of several.
        ahead = concurrent.futures.ThreadPoolExecutor(1)
        try:
            prepared = [ahead.submit(self.prepare, lab) for lab in labs]
            self._grade_labs(labs, report, prepared, before)
        finally:
            ahead.shutdown(wait=True, cancel_futures=True)
        return self._finish(labs, report, start)

    def _grade_labs(self, labs, report, prepared, before) -> None:
        """Grades each lab in turn with its build and static checks from prepared (futures of prepare)."""
        log = self.log
        for k, lab in enumerate(labs):
            copy, mine = self.build_dir / lab.name / lab.source, self.submission / lab.name / lab.source
            mapped = student_path_mapper(copy, mine, self.kit)
            self.log = lambda message: log(mapped(message))  # progress lines name the student's file too
            try:
                with self.stage(lab.name, "total"):
                    results = self.grade_lab(lab, report, prepared[k])
            except static_check.ToolError as e:  # no lab can be checked, so none is graded
                report.kit_error = str(e)
                report.notes.append(f"The static checks cannot run: {e}")
                for rest in labs[k:]:
                    report.results.extend(self._mark(rest, [
                        not_run(rest.name, name, points, "not run: the grader's static checks cannot run here (a kit "
                                                         "problem)") for name, points in self._all_tests(rest)]))
                break
            finally:
                self.log = log
            student_paths(results, copy, mine, self.kit)  # the student's file, not the copy the grader compiled
            report.results.extend(self._mark(lab, results))
            groups = [r for r in results if r.name in {g.name for g in lab.groups}]
            blanks = [] if all(r.full for r in groups) else blanks_left(mine)
            if blanks:
                report.notes.append(f"{lab.name}: {lab.source} still has {len(blanks)} blank"
                                    f"{'s' if len(blanks) != 1 else ''} to fill (`// @@ TODO` at line"
                                    f"{'s' if len(blanks) != 1 else ''} {', '.join(map(str, blanks))}); the "
                                    f"lab's handout explains each")
            moot = self.sim_check_moot(groups)
            if moot and self.sim_checker is not None:
                self.sim_checker.drop(lab, moot)
            with self.stage(lab.name, "GPU queries"):
                self.check_gpu_released(lab, report, before)

    @staticmethod
    def sim_check_moot(groups) -> str:
        """Why the simulator's check of a lab can change nothing once the GPU has given its correctness groups'
        rows (groups), or "": every group scored 0 on the GPU (a hung kernel, a blank lab), so the lesser of the two
        platforms' scores is 0 whatever the simulator finds, and performance is not run either way."""
        if groups and all(r.score == 0 for r in groups):
            return ("the GPU gave every correctness group 0 points, which the simulator cannot lower: its check was "
                    "stopped")
        return ""

    def _finish(self, labs, report, start) -> Report:
        """The report's closing parts once every lab is graded: the simulator's check laid over, notes, seconds."""
        if self.sim_checker is not None and self.sim_apart is None:
            self.combine_sim_checks(labs, report)
        self.note_hangs(report)
        report.no_device = self.no_device
        ran = any(r.status not in ("not run", "FORBIDDEN", "NO BUILD") for r in report.results
                  if r.name != "static checks")
        if ran and not report.device and not self.no_device:
            # no benchmark ran (a correctness test failed), yet the labs ran on this machine's GPU (if any)
            report.device = self.platform.device_name(self)
        report.sandbox = dict(self.sandbox_layers)
        report.build_sandbox = dict(self.build_layers)
        missing = sorted({m for layers in self.sandbox_layers.values()
                          for m in str(layers.get("missing", "")).split(",") if m})
        if missing:
            report.notes.append(f"Sandbox: the lab's code ran without {', '.join(missing)} on this machine "
                                f"(results.json extra_data.sandbox; --require-sandbox refuses to grade so)")
        unboxed = sorted({m for layers in self.build_layers.values() for m in layers.get("missing", [])})
        if unboxed:
            labs_named = ", ".join(lab for lab, layers in self.build_layers.items() if layers.get("missing"))
            report.notes.append(f"Sandbox: the compile of {labs_named} ran without "
                                f"{'; '.join(unboxed)} (results.json extra_data.build_sandbox; --require-sandbox "
                                f"refuses to build so; install bubblewrap: sudo apt-get install bubblewrap)")
        if self.no_device:
            report.notes.append(NO_DEVICE_MESSAGE.replace("not run: ", "Run-time tests not run: "))
            report.notes.append("Without a GPU, `make grade SIM=1` (python3 -m grader --simulator) runs the "
                                "correctness tests of small sizes on the kit's CPU simulator.")
        report.seconds = time.monotonic() - start
        return report

    @staticmethod
    def note_hangs(report) -> None:
        """The note under the table that names the labs with a hung run (hang_note), in place of any said before."""
        report.notes = [n for n in report.notes if not n.startswith(HANG_NOTE_START)]
        hung = hung_labs(report)
        if hung:
            report.notes.append(hang_note(hung))

    def lay_over_sim_checks(self, labs, report, verdicts: dict, submitted, dropped: dict) -> None:
        """Completes a grading whose simulator's check was made apart (sim_later): lays verdicts (lab name ->
        sim_check.Verdict: sim_check.check_ahead's) over report as the grading's end does (combine_sim_checks), for
        the labs the grading submitted to the check and with the checks it dropped (lab -> why: that grading's
        sim_apart), then names the hung labs again (the simulator's rows may add one)."""
        self.report, self.no_device = report, report.no_device
        checker = sim_check_mod.GivenVerdicts(self, verdicts)
        checker.submitted, checker.dropped = set(submitted), dict(dropped)
        self.sim_checker = checker
        try:
            self.combine_sim_checks(labs, report)
        finally:
            self.sim_checker = None
        self.note_hangs(report)

    def combine_sim_checks(self, labs, report) -> None:
        """Waits for each lab's simulator check and lays it over the lab's GPU rows in report (sim_check.combine);
        results.json's extra_data.simulator_check.labs gets what each platform said."""
        for lab in labs:
            with self.stage(lab.name, "simulator check (waiting)"):
                verdict = self.sim_checker.verdict(lab)
            if verdict is None:
                continue
            gpu = [r for r in report.results if r.lab == lab.name]
            rows = self._mark(lab, sim_check_mod.combine(lab, gpu, verdict))
            at = report.results.index(gpu[0])
            report.results[at:at + len(gpu)] = rows
            report.stage_seconds.setdefault(lab.name, {})["simulator check"] = round(verdict.seconds, 3)
            sims = {r.name: r for r in verdict.results}
            report.simulator_check["labs"][lab.name] = {
                "status": verdict.status, "message": verdict.message, "seconds": round(verdict.seconds, 1),
                "stages": verdict.stages,
                "tests": {r.name: {"gpu": sim_check_mod.brief(r), "simulator": sim_check_mod.brief(sims.get(r.name))}
                          for r in gpu if r.name != "performance"}}
            relaxed = [r.name for r in rows if (r.data or {}).get("check_relaxed")]
            if relaxed:
                report.notes.append(f"{lab.name}: the simulator's check could not judge {', '.join(relaxed)} because "
                                    f"of the file, and labs.toml's simulator_check_open = true let the GPU's verdict "
                                    f"stand")
            if verdict.status in ("kit error", "error"):
                report.notes.append(f"{lab.name}: the simulator's check did not run ({verdict.message}): a kit "
                                    f"problem, not the student's; this lab is graded on the GPU alone")
            self.log(f"{lab.name}: simulator check: {verdict.status}"
                     + (f" ({verdict.message})" if verdict.message else ""))

    @contextlib.contextmanager
    def stage(self, lab: str, name: str):
        """Adds the wall time of the with-block to report.stage_seconds[lab][name] (seconds; make bench-grader reads
        them from results.json). Stages that run side by side (correctness and sanitizers) each count their own."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.add_stage(lab, name, time.monotonic() - start)

    def add_stage(self, lab: str, name: str, seconds: float) -> None:
        """Adds seconds to report.stage_seconds[lab][name], for a stage timed otherwise than by a with-block."""
        stages = self.report.stage_seconds.setdefault(lab, {}) if getattr(self, "report", None) else {}
        stages[name] = round(stages.get(name, 0.0) + seconds, 3)

    def _gpu_pids(self) -> set | None:
        """The pids of the compute processes on the GPUs now (nvidia-smi), or None where it cannot say."""
        return self.platform.gpu_pids(self)

    def check_gpu_released(self, lab, report, before):
        """After a lab: a compute process that was not there before the grading and holds the GPU still, left behind
        by this grading, is reported (the sandbox's pid namespace and parent-death signal should make it impossible).
        Left behind means a descendant of this grader, or an orphan (its parent is pid 1): another grading's runner
        on the same GPU at the same time (a class run's workers, the attack suite) has a living parent of its own."""
        if before is None or self.no_device:
            return
        snap = self.gpu_apps()
        left = [app for app in snap.get("apps", []) if app.get("pid") not in before and left_by_us(app.get("pid"))]
        for app in left:
            report.notes.append(f"{lab.name}: warning: after its tests, process {app.get('pid')} "
                                f"({app.get('process_name', '?')}, {app.get('used_memory_mib', '?')} MiB) still held "
                                f"the GPU: it was not there before grading (the lab's code left it running?)")

    @staticmethod
    def _mark(lab, results) -> list:
        """The results of lab, marked as bonus points when lab is a bonus lab."""
        for r in results:
            r.bonus = lab.bonus
        return results

    @staticmethod
    def _tests(lab) -> list:
        """(name, points) of the lab's graded tests: its correctness groups and its performance test."""
        tests = [(g.name, g.points) for g in lab.groups]
        tests += [(SANITIZERS, lab.sanitizers.points)] if lab.sanitizers else []
        return tests + ([("performance", lab.performance.points)] if lab.performance else [])

    @classmethod
    def _all_tests(cls, lab) -> list:
        """The rows of a lab in the report: the static checks (no points), then _tests."""
        return [(STATIC_CHECKS, 0.0), *cls._tests(lab)]

    def prepare(self, lab):
        """(the lab's build.BuildResult, its static checks' verdict or None where the build left no object), or None
        for a file refused unread for its size. Raises static_check.ToolError when the checks cannot run here. Runs
        ahead of the lab's turn (Grader._grade), so it only builds and checks: grade_lab reports."""
        source = self.submission / lab.name / lab.source
        if self.oversized(lab, source):
            return None
        with self.stage(lab.name, "build"):
            required = {"sandbox": "require"} if self.sandbox == "require" else {}  # hooks that take no sandbox
            built = self.build(self.kit, lab.pattern, source, self.build_dir / lab.name, timeout=self.build_timeout,
                               harness_build=self.harness_build, **required)
        if built.object is None:
            return built, None
        with self.stage(lab.name, "static checks"):
            return built, self.check(built.object, lab.pattern)

    def grade_lab(self, lab, report: Report, prepared=None) -> list:
        """The TestResults of one lab: its static checks, its correctness groups and compute-sanitizer's row (on a GPU
        their runs side by side), then its performance test, timed alone. prepared: a future of prepare(lab), made
        ahead; None: prepared now."""
        source = self.submission / lab.name / lab.source
        too_big = self.oversized(lab, source)
        if too_big:
            return self.refused(lab, too_big)
        self.log(f"{lab.name}: building {source}")
        with self.stage(lab.name, "waiting for the build"):
            built, verdict = prepared.result() if prepared is not None else self.prepare(lab)
        required = self.sandbox == "require"
        if getattr(built, "layers", None):
            self.build_layers[lab.name] = {"layers": list(built.layers), "missing": list(built.missing)}
        if required and not built.ok and getattr(built, "missing", None) and built.object is None:
            # --require-sandbox and no bubblewrap here: the kit's (the machine's) problem, never the student's
            report.kit_error = built.message
            if built.message not in report.notes:
                report.notes.append(built.message)
            return [not_run(lab.name, name, points, "not run: the build's sandbox cannot run here (a kit problem)")
                    for name, points in self._all_tests(lab)]
        headline = (built.message.splitlines() or ["the build failed"])[0].rstrip(":")
        checked = self.static_check(lab, built, headline, verdict)
        if checked.status == FORBIDDEN:
            self.log(f"{lab.name}: static checks: {checked.summary}")
            why = f"not run: the static checks found what {lab.source} may not use (see {STATIC_CHECKS})"
            return [checked, *(not_run(lab.name, name, points, why) for name, points in self._tests(lab))]
        if not built.ok:
            results = [not_run(lab.name, name, points, f"not run: {headline}") for name, points in self._tests(lab)]
            first = results[0]
            first.status, first.summary = "NO BUILD", f"{headline}: every test of this lab scores 0"
            first.detail = "\n".join(built.message.splitlines()[1:])
            self.log(f"{lab.name}: {headline}")
            return [checked, *results]
        if self.sim_checker is not None and not self.no_device:  # the simulator grades it beside the GPU
            self.sim_checker.submit(lab)
        with self._gpu("shared"):
            results = self._run_time_tests(lab, built, checked)
        if self.gpu_lock is not None and self._may_be_a_neighbours(results):
            # Beside other students' runs a lab can run out of GPU memory or time through no fault of its own (a
            # neighbour may take the GPU's memory on purpose): such a lab runs again with the GPU alone, and that
            # verdict counts (a red-team helper's point about GRADERS_PER_GPU)
            self.log(f"{lab.name}: a run failed while other students' runs shared the GPU: again, alone")
            self.hung.discard(lab.name)
            self.spent.discard(lab.name)
            with self._gpu("exclusive"):
                results = self._run_time_tests(lab, built, checked)
        if lab.performance:
            results.append(self.grade_performance(lab, built.program, all(r.full for r in results), report))
        return results

    def oversized(self, lab, source: Path) -> str:
        """Why the lab's file is refused unread for its size (labs.toml's [limits] lab_file_kib), or ""."""
        try:
            size = source.stat().st_size if source.is_file() else 0
        except OSError:
            return ""
        cap = self.config.limits.lab_file_bytes
        if size <= cap:
            return ""
        return (f"{lab.source} is refused unread: it is {_size(size)}, over the {_size(cap)} a lab file may be "
                f"(grader/labs.toml [limits] lab_file_kib); a lab's file is a few KiB of code: remove what is not "
                f"(long comments, data tables, pasted output) and submit it again")

    def refused(self, lab, why: str) -> list:
        """The rows of a lab whose file is refused before its build: NO BUILD first, every test 0, nothing run."""
        self.log(f"{lab.name}: {why}")
        results = [not_run(lab.name, name, points, f"not run: {why}") for name, points in self._tests(lab)]
        if results:
            results[0].status, results[0].summary = "NO BUILD", f"{why}: every test of this lab scores 0"
        return [not_run(lab.name, STATIC_CHECKS, 0.0, "not run: the file was refused before it was compiled"),
                *results]

    NEIGHBOUR_STATUSES = ("TIMEOUT", "CRASH", "CUDA ERROR", "ERROR")  # what another process on the GPU can cause

    @classmethod
    def _may_be_a_neighbours(cls, results) -> bool:
        """Whether a run-time row lost points in a way another process on the GPU could have caused: a timeout, a
        crash, a CUDA error (out of memory), a harness error, or a sanitizers row whose runs did not reach their end.
        A wrong answer or a hazard the sanitizers found is the lab's own (on a GPU of its own too): not run again."""
        return any(not r.full and (r.status in cls.NEIGHBOUR_STATUSES or
                                   r.name == SANITIZERS and r.data.get("ran_to_the_end") is False)
                   for r in results if r.name != STATIC_CHECKS)

    def _gpu(self, how: str):
        """The class's GPU lock, taken shared or exclusive (grader/run/gpu_lock.py); nothing where there is none."""
        return getattr(self.gpu_lock, how)() if self.gpu_lock is not None else contextlib.nullcontext()

    def _run_time_tests(self, lab, built, checked) -> list:
        """The static checks' row, the correctness groups' and compute-sanitizer's (on a GPU side by side), with the
        hazards' cost applied."""
        if lab.sanitizers and self.run_many is not None and self.platform.sanitizers_apart:
            # compute-sanitizer's runs (small inputs, programs of their own) go beside the correctness runs: half a
            # lab's grading time on an H100. The row reads as it would after them: a hang skips it.
            cancel = threading.Event()  # set when the correctness runs hung: the row is not graded then
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                sanitized = pool.submit(self.grade_sanitizers, lab, built.program, cancel)
                tail = self.platform.bench_tail(self, lab, lambda: checked.full and sanitized.result().full)
                if tail is not None:
                    self.bench_tails[lab.name] = tail
                try:
                    with self.stage(lab.name, "correctness"):
                        results = [checked, *self.grade_groups(lab, built.program)]
                    if tail is not None and tail.opened is not None and tail.correct_until is not None:
                        # the stage ends with the last correctness list, not with the benchmark after it
                        self.add_stage(lab.name, "correctness", tail.correct_until - time.monotonic())
                except BaseException:  # an error, or Ctrl-C: nothing will read the row
                    cancel.set()
                    raise
                if lab.name in self.hung:
                    cancel.set()
                row = sanitized.result()
            results.append(self._skip(lab, SANITIZERS, lab.sanitizers.points) if lab.name in self.hung
                           else row)
        else:
            with self.stage(lab.name, "correctness"):
                results = [checked, *self.grade_groups(lab, built.program)]
            if lab.sanitizers:  # a finding in the student's file stops performance, as a failed group does
                results.append(self.grade_sanitizers(lab, built.program))
        if lab.sanitizers:  # a hazard in the student's code costs correctness points (labs.toml's hazard_cost)
            apply_hazards(results, [g.name for g in lab.groups], lab.sanitizers.hazard_cost)
            note_writes_past_the_end(results)
        return results

    def static_check(self, lab, built, headline: str, verdict) -> TestResult:
        """The static checks' row of a lab from their verdict on the object its build left (also when only the link
        failed; None: there was no object)."""
        if built.object is None:
            why = headline if not built.ok else "the build left no object file to check (a kit bug)"
            return not_run(lab.name, STATIC_CHECKS, 0.0, f"not run: {why}")
        return score_static_check(lab.name, verdict, lab.source)

    def _args(self, args) -> list:
        """A run's arguments with the host memory and CPU time of labs.toml's [limits] and the grader's sandbox
        demand."""
        limits = ["--host-memory-mib", str(self.host_memory_mib())]
        cpu = self.platform.cpu_seconds(self.config.limits)
        limits += ["--cpu-seconds", f"{cpu:g}"] if cpu else []
        return [*args, *limits, "--sandbox", self.sandbox] if self.sandbox != "auto" else [*args, *limits]

    def host_memory_mib(self) -> int:
        return self.platform.host_memory_mib(self.config.limits)

    def _seen(self, lab, outcome):
        """What every run's outcome tells the grader: no device, a hang, the sandbox's layers."""
        outcome.message = outcome.message.replace(f"{self.kit}/", "")  # harness paths, shown relative to the kit
        if outcome.status == "no-device":
            self.no_device = True
        elif outcome.status == "timeout":
            self.hung.add(lab.name)
        elif outcome.status == "crash" and "SIGXCPU" in outcome.message:
            self.hung.add(lab.name)  # it would spin as long again in every later run: one budget a lab
            self.spent.add(lab.name)
            cpu = self.platform.cpu_seconds(self.config.limits)
            outcome.message += (f": a process of the lab's program used up its CPU time ({cpu:g} s, labs.toml "
                                f"[limits] simulator_cpu_seconds, many times what the reference solutions' slowest "
                                f"program takes). Host code that spins or waits in a loop does this; the limit "
                                f"counts work, not seconds, so a busy machine does not change it")
        elif outcome.status == "crash" or outcome.status == "cuda-error" and any(
                words in outcome.message.lower() for words in ("out of memory", "memory allocation")):
            # perhaps out of host memory: say where the limit is
            outcome.message += (f" (the process that runs {lab.source} may take at most {self.host_memory_mib()} MiB "
                                f"of host memory, the CUDA runtime's and the harness's included: past it malloc "
                                f"returns NULL and new throws; labs.toml [limits])")
        if getattr(outcome, "sandbox", None):
            self.sandbox_layers.setdefault(lab.name, outcome.sandbox)
        return outcome

    def _run(self, lab, tag: str, program, args, timeout):
        """One run of lab's program, as the platform makes it (run_case, or its own around it)."""
        return self.platform.run_case(self, lab, tag, program, args, timeout)

    def run_case(self, lab, tag: str, program, args, timeout):
        """One run of lab's program through self.run, its outcome seen (_seen)."""
        workdir = self.build_dir / lab.name / "runs" / tag
        outcome = self.run(program, self._args(args), timeout=timeout, workdir=workdir, cwd=self.kit,
                           source=lab.source)
        return self._seen(lab, outcome)

    def grade_groups(self, lab, program) -> list:
        """Every correctness group of a lab, as the platform grades them (run_groups, or its own around it)."""
        return self.platform.grade_groups(self, lab, program)

    def run_groups(self, lab, program) -> list:
        """Every correctness group of a lab: through run_many, all their runs in one lab program (one runner, one
        CUDA context), each group scored on its own runs up to the first that does not pass; else group by group."""
        if self.run_many is None:
            return [self.grade_group(lab, k, group, program) for k, group in enumerate(lab.groups)]
        plans, flat, timeouts = [], [], []
        for group in lab.groups:
            try:
                runs = self.group_runs(group, lab.args)
            except ValueError as e:
                plans.append((group, None, str(e)))
                continue
            plans.append((group, (len(flat), len(flat) + len(runs)), None))
            call = self.call_args(lab, group)
            flat += [self._args([*args, *call]) for args in runs]
            timeouts += [self.run_timeout(lab, group)] * len(runs)
        outcomes = []
        if flat and not self._skip(lab, "", 0):
            tail, k = self.bench_tails.get(lab.name), len(flat)
            more = {} if tail is None else {"gate": lambda j: j < k or tail.open(k), "ends": tail.ends}
            outcomes = self.run_many(program, flat + ([self._args(tail.args)] if tail else []),
                                     timeouts=timeouts + ([tail.timeout] if tail else []),
                                     workdir=self.build_dir / lab.name / "runs" / "correctness", cwd=self.kit,
                                     source=lab.source, **more)
            if tail is not None:  # the benchmark's outcome is seen when it is scored (grade_performance), as alone
                tail.outcome, outcomes = (outcomes[k] if len(outcomes) > k else None), outcomes[:k]
            outcomes = [self._seen(lab, o) for o in outcomes]
        results = []
        for group, span, error in plans:
            if error is not None:
                results.append(TestResult(lab.name, group.name, group.points, 0.0, "ERROR", error))
                continue
            mine = outcomes[span[0]:span[1]] if outcomes else []
            if not mine or mine[0].status in ("not-run", "no-device"):
                results.append(self._skip(lab, group.name, group.points) or
                               not_run(lab.name, group.name, group.points,
                                       mine[0].message if mine else "not run"))
                continue
            done = []
            for args, outcome in zip(flat[span[0]:span[1]], mine):
                done.append((args, outcome))
                if not outcome.passed:
                    outcome.message += self.limit_note(lab, group) if outcome.status == "timeout" else ""
                    break
            result = score_group(lab.name, group, done, program=Path(program).name)
            self.log(f"{lab.name}: {group.name}: {result.summary}")
            results.append(result)
        return results

    def _skip(self, lab, name: str, points: float) -> TestResult | None:
        """The not-run result of a test that cannot run now (no device, or a hang earlier in this lab), else None."""
        if self.no_device:
            return no_device(lab.name, name, points)
        if lab.name in self.spent:
            skipped = not_run(lab.name, name, points, "not run: an earlier run of this lab used up its CPU time (it "
                                                      "would again; fix it first)")
        elif lab.name in self.hung:
            skipped = not_run(lab.name, name, points, "not run: an earlier test of this lab timed out (a hung "
                                                      "kernel would hang again; fix it first)")
        else:
            return None
        skipped.data["whose"] = sim_check_mod.STUDENT  # the file's doing: the check withholds it (sim_check.whose)
        return skipped

    def group_runs(self, group, extra=()) -> list:
        """The argument lists of a group's runs, each followed by extra (the lab's own arguments); ValueError naming
        the problem if its datasets are missing."""
        if group.datasets is None:
            return [[*args, *extra, "--seed", str(self.seed)] for args in group.runs]
        folder = self.kit / group.datasets
        found = sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
        if not found:
            raise ValueError(f"no datasets found in {group.datasets}/ (a kit problem: run `make datasets`)")
        files = ("input.raw", "expected.raw") if group.expected else ("input.raw",)
        runs = []
        for d in found:
            missing = [f for f in files if not (d / f).is_file()]
            if missing:
                raise ValueError(f"{d.relative_to(self.kit)} lacks {' and '.join(missing)} (a kit problem)")
            rel = d.relative_to(self.kit)
            run = ["--dataset", str(rel / "input.raw")]
            if group.expected:
                run += ["--expected", str(rel / "expected.raw")]
            runs.append([*run, *extra])
        return runs

    def grade_group(self, lab, index: int, group, program) -> TestResult:
        """One correctness group, as the platform grades it (run_group, or its own around it)."""
        return self.platform.grade_group(self, lab, index, group, program)

    def run_group(self, lab, index: int, group, program) -> TestResult:
        """Runs one correctness group, stopping at its first run that does not pass, and scores it."""
        skipped = self._skip(lab, group.name, group.points)
        if skipped:
            return skipped
        try:
            runs = self.group_runs(group, lab.args)
        except ValueError as e:
            return TestResult(lab.name, group.name, group.points, 0.0, "ERROR", str(e))
        timeout, call = self.run_timeout(lab, group), self.call_args(lab, group)
        done = []
        for k, args in enumerate(runs):
            outcome = self._run(lab, f"{index}-{k}", program, [*args, *call], timeout)
            done.append((args, outcome))
            if not outcome.passed:
                outcome.message += self.limit_note(lab, group) if outcome.status == "timeout" else ""
                break
        result = score_group(lab.name, group, done, program=Path(program).name)
        self.log(f"{lab.name}: {group.name}: {result.summary}")
        return result

    def _reference_limit(self, lab, group):
        """(the limit labs.toml's [limits] rule gives a run of group here, the reference's seconds), or (None, None)."""
        if self.explicit_timeout:
            return None, None
        reference = self.platform.reference_seconds(self, lab, group)
        return self.config.limits.run_limit(reference), reference

    def run_timeout(self, lab, group) -> float:
        """The time limit of one correctness run of group, the kit's work included: the grader's --timeout where one
        was given, else the larger of the group's own timeout and DEFAULT_TIMEOUT."""
        return max(group.timeout or 0, self.timeout)

    def call_args(self, lab, group) -> list:
        """The checker's --call-seconds for group's runs: on a GPU model calibrated for this group, labs.toml's
        [limits] rule (run_reference_factor times the reference solution's slowest run there, at least
        run_floor_seconds) bounds each case's call of the lab's code, so a hung kernel is known within seconds; the
        kit's own work in a run (making the inputs, copying them, checking the outputs) is not counted, so a loaded
        machine (a class run, graders side by side) does not time out an honest run. [] where no rule applies."""
        limit, _ = self._reference_limit(lab, group)
        return [] if limit is None else ["--call-seconds", f"{limit:g}"]

    def limit_note(self, lab, group) -> str:
        """Why a run's limit was what it was, for a timeout's message, where labs.toml's rule set it; else ""."""
        limit, reference = self._reference_limit(lab, group)
        if limit is None:
            return ""
        return (f"; a case's call may take {self.config.limits.run_reference_factor:g}x the reference solution's "
                f"slowest run of this group on this GPU ({reference:g} s), at least "
                f"{self.config.limits.run_floor_seconds:g} s (grader/labs.toml [limits])")

    def grade_sanitizers(self, lab, program, cancel=None) -> TestResult:
        """The sanitizers row of lab, as the platform scores it (cancel: a threading.Event that stops its runs)."""
        return self.platform.grade_sanitizers(self, lab, program, cancel)

    def grade_performance(self, lab, program, correct: bool, report: Report) -> TestResult:
        """The performance row of lab, as the platform scores it (correct: every correctness group passed)."""
        return self.platform.grade_performance(self, lab, program, correct, report)


def blanks_left(path) -> list:
    """The line numbers of the blanks a lab's file still has (a line whose code is a `// @@ TODO` comment, as the
    skeletons leave them: tools/author/make_skeletons.py), none for a file that cannot be read."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return [k for k, line in enumerate(lines, 1) if line.lstrip().startswith("// @@ TODO")]


def _size(size: int) -> str:
    """A file size for a message: 5.0 MiB, 256 KiB."""
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    return f"{size / 1024:.0f} KiB" if size >= 1024 else f"{size} bytes"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--submission", default="labs",
                   help="a folder shaped like labs/ (one NN-stage folder per lab); default: labs")
    p.add_argument("--lab", help="grade only the labs whose name starts with this (03, 03-sequential)")
    p.add_argument("--results", help="where to write Gradescope's results.json (default: BUILD_DIR/results.json)")
    p.add_argument("--build-dir", default="build/grade", help="where the labs are built (default: build/grade)")
    p.add_argument("--timeout", type=float,
                   help=f"seconds per harness run, unless labs.toml gives a group more (default: labs.toml's [limits] "
                        f"rule on a calibrated GPU, else {DEFAULT_TIMEOUT:g})")
    p.add_argument("--build-timeout", type=float, default=build_mod.DEFAULT_BUILD_TIMEOUT,
                   help="seconds per build (default %(default)g)")
    p.add_argument("--seed", type=int, help="the data seed, to rerun a grading (default: a fresh random seed)")
    p.add_argument("--config", default=str(DEFAULT_PATH), help="the labs file (default: grader/labs.toml)")
    p.add_argument("--quiet", action="store_true", help="no progress lines, no details under failed tests")
    p.add_argument("--json-only", action="store_true", help="print results.json to stdout and nothing else")
    p.add_argument("--require-sandbox", action="store_true",
                   help="refuse to build or run a lab's code unless every layer of the sandbox is in force (the "
                        "compile in bubblewrap; the run in namespaces, as an unprivileged uid, under seccomp and "
                        "rlimits): a build or run where one is missing fails as a kit problem")
    p.add_argument("--simulator", action="store_true",
                   help="no GPU needed: run the kernels on the kit's CPU simulator (correctness of small sizes only; "
                        "built in build/grade-sim unless --build-dir)")
    p.add_argument("--no-simulator-check", action="store_true",
                   help="on a GPU, grade on the GPU alone: without the simulator's check of each lab beside it "
                        "(grader/sim/sim_check.py), for debugging; results.json records it")
    p.add_argument("--gpu", default="H100",
                   help="with --simulator: the GPU of the performance estimate (grader/sim/estimate.py, "
                        "grader/gpus.toml: H100, H200, A100, T4; default %(default)s); an estimate, never points")
    return p.parse_args(argv)


def main(argv=None, **hooks) -> int:
    """Runs the grader as from the command line and returns its exit status; hooks go to Grader. SIGTERM, SIGHUP
    and the end of the program that started it (make) kill every program it runs, then the grader (lifetime.py)."""
    with lifetime.stop_on_signals():
        lifetime.watch_starter()
        return _main(argv, **hooks)


def _main(argv, **hooks) -> int:
    args = parse_args(argv)
    try:
        config = load_config(args.config)
        labs = config.select(args.lab)
    except ConfigError as e:
        print(f"python3 -m grader: {e}", file=sys.stderr)
        return EXIT_BROKEN
    submission = Path(args.submission)
    if not submission.is_dir():
        print(f"python3 -m grader: --submission {args.submission}: no such folder (give the folder that holds "
              f"your lab folders, e.g. make grade SUBMISSION=labs)", file=sys.stderr)
        return EXIT_BROKEN
    charts.preload()  # report.html's chart at the end needs matplotlib: imported meanwhile
    quiet = args.quiet or args.json_only
    # progress lines carry student text (compiler messages, summaries): printed without its control characters
    log = None if quiet else (lambda message: print(printable(message), file=sys.stderr, flush=True))
    platform = hooks.pop("platform", None)
    if platform is None and args.simulator:
        from grader.sim.simulator import SimPlatform
        platform = SimPlatform(estimate_gpu=hooks.pop("estimate_gpu", args.gpu))
    platform = platform if platform is not None else GpuPlatform()
    if args.build_dir == "build/grade":
        args.build_dir = platform.build_dir
    if args.no_simulator_check:
        hooks["sim_check"] = False
    results_path = args.results or Path(args.build_dir) / "results.json"
    # a grading that does not reach its end leaves no results.json at all, never the previous submission's
    Path(results_path).unlink(missing_ok=True)
    grader = Grader(config, submission, build_dir=args.build_dir, timeout=args.timeout,
                    build_timeout=args.build_timeout, seed=args.seed, log=log,
                    sandbox="require" if args.require_sandbox else "auto", platform=platform, **hooks)
    report = grader.grade(labs)
    calibration = config.calibration
    report.notes.append(f"Performance thresholds: {calibration['calibrated_on']} (GPU: {calibration['gpu']})")
    write_results(report, results_path)
    page = report_html.write(report, labs, results_path)  # report.html beside it: the table and the speed chart
    if args.json_only:
        print(json.dumps(gradescope_results(report), indent=2))
    else:
        print(format_table(report, details=not args.quiet))
        print(f"Results: {shown(results_path)}" + (f"; the same with a chart, for a browser: {shown(page)}"
                                                         if page else ""))
    if report.kit_error:
        return EXIT_BROKEN
    if report.no_device:
        return EXIT_NO_DEVICE
    return EXIT_FULL if platform.full_marks(report) else EXIT_LOST

