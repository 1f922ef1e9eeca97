"""Grading correctness without a GPU, on the kit's SIMT simulator (sim/): `python3 -m grader --simulator`,
`make grade SIM=1`.

The lab programs are the same (the kit's checker, and its runner: the harness and the student's one file), built by
mk/sim.mk so that the runner's kernels run on the CPU (grader/compile/build.py with makefile="sim.mk"). SimPlatform, the
back end grade.Grader is given for it (grader/platform.py), makes these changes:

- a correctness group runs only when every size it asks for is at most SIM_MAX_N elements (the datasets, the edge
  sizes, exact data); a group of larger sizes scores 0 as "needs a GPU", saying so;
- the performance test needs a GPU too: 0 points, and in its place the simulator's counts (warp instructions, SIMT
  efficiency, divergence, bank conflicts, memory sectors) of one small run, for the student to read, and the
  performance estimate of grader/sim/estimate.py (the lab's time and speedup on a named GPU from a roofline model of the
  counts, labelled an estimate: never points; data["estimate"] in results.json);
- the sanitizers row (compute-sanitizer on a GPU) is scored from the simulator's own hazard checks of the runs
  (races on shared memory, uninitialized reads, barriers not every thread reaches);
- a run's failure carries the simulator's own diagnostic (the kernel, the PTX instruction, file:line, block and
  thread of an out-of-bounds access, a barrier deadlock, the instruction limit of a kernel that never ends), and a
  kernel the simulator cannot run is "not graded" (0 points: grade on a GPU), not the student's fault nor a pass;
- a failed run's "to reproduce" line is the simulator's command that reruns it here (make sim LAB=NN ARGS='...'),
  not the GPU's lab program, which cannot run without one;
- a run that hangs (a TIMEOUT, bonus lab or not) makes the grading fail (exit status 1), saying so under the table;
- a passing case runs again under three adversarial schedules (grader/sim/schedules.py), and a lab's runs all start
  ahead in four lab programs (run_lists_sim: every case in order, and every case under its schedule of each kind),
  side by side where there are cores to spare, the grading taking their outcomes in its own order
  (grader/run/runs_ahead.py: the verdict of the runs one at a time, up to a failure; after it, runs one at a time).

The report channel. The lab's kernels run in the simulator's device process (sim/device_main.c), which the checker
starts beside the runner, each in a sandbox of its own (mk/sim.mk's lab program passes --sim-device): the runner's
CUDA calls go to it over a socket, and its runtime writes the report (counts, findings, and its own errors with
their kind: a kernel fault, or "cannot-simulate") as JSON lines to a descriptor, PPL_SIM_REPORT_FD=N: a pipe the
grader made and passed with the checker's --runner-fd N, which in that mode goes to the device and never to the
runner. Every finding, fault and limitation the grader uses comes from there, never from the program's stdout or
stderr, which the student's code shares: it can close them, or print the simulator's own words. The student's code
holds no descriptor of the channel and cannot reach the device's memory (tests/attacks/46 and 47 did both when the
simulator ran in the runner); all it can do is break its socket to the device, which stops the device and fails
the run. The device also names each module by the build ("student": its device code lies in the student's object),
so whose kernel a finding is in does not depend on the file names of the line table. The simulator's findings and
errors only grow during a run: the grader keeps the union of every report line it read and the counts of the last.
grader/sim/sim_report.py reads the channel's lines (SimReport) and says in words what they carry.

Points earned on the simulator are those of the groups it can run; the report says that the rest needs a GPU.
"""
import fcntl
import json
import os
import shlex
import threading
import time
from pathlib import Path

from grader.compile import build as build_mod
from grader.run import runs_ahead
from grader.run.process import Process
from grader.run.run import Drain, interpret, read_result_lines, result_file, run_harness_runs, run_process
from grader.sanitize.findings import NAME as SANITIZERS_NAME, defines_function, kit_defines_function, owner_of
from grader.platform import Platform
from grader.sim.estimate import EstimateError, estimate_for  # the estimate from the counts: never points
from grader.run.runs_ahead import RunsAhead
from grader.sim.schedules import case_schedules, run_schedules, schedule_env
from grader.run.seed import SeedPipe, split_seed
from grader.run.no_gpu import in_lab_folder
from grader.patterns import parse_size, pattern as pattern_named
from grader.report.report import NEEDS_GPU, NOT_GRADED
from grader.score.score import TestResult, hung_labs, reproduce_line
from grader.sim.sim_target import SIM_MAX_INSTRUCTIONS, sim_env, sim_harness_build
from grader.sim.sim_report import (KIT as KIT_FAULT, ReportReader, RunsReportReader, SimReport, as_count, as_text,
                                   barrier_first, counts_summary, demangle, diagnostic, fault_text, finding_text,
                                   hazard_key, load_report, not_graded_message, whose_limit)

KIT = Path(__file__).resolve().parents[2]
SIM_MAKEFILE = KIT / "mk" / "sim.mk"
SIM_MAX_N = 1 << 21  # the largest size a group may ask for to run on the simulator (the edge sizes go to 2^20+1)
# The wall-clock backstop of a run on the simulator, seconds: never a verdict on the student's code. What can change
# a verdict counts work, which a busy machine does not change: the launch's instruction budget (a kernel that never
# ends: sim_target.SIM_MAX_INSTRUCTIONS) and the CPU time of each of the program's processes (host code that spins:
# labs.toml [limits] simulator_cpu_seconds, 60 s). A run still going after this was stopped by neither, so the kit
# is at fault (a run waiting on something that never comes): it is graded again once and, if it hits the backstop
# again, "not graded", the kit's (judge_run). 600 s is 10 times the CPU limit: a program's runner and device at
# their limits on a machine with every core busy five times over still end first. PPL_SIM_TIMEOUT=S overrides it.
SIM_TIMEOUT = float(os.environ.get("PPL_SIM_TIMEOUT", "600"))
SIM_PREFIX = "ppl-sim: "  # every line the simulator's runtime prints starts so (sim/runtime_internal.h): for people
TIMEOUT = "TIMEOUT"  # the table status of a group whose run hung (grader/score/score.py's STATUS_WORDS)
REPORT_FD_MIN = 10  # the report pipe's write end is moved to a descriptor at least this (--runner-fd: >= 5)
DRAIN_GRACE = 2.0  # seconds the channel is still read after the program ended


def build_harness_sim(kit, pattern, **kwargs):
    """build.build_harness with mk/sim.mk (the harness objects in build/sim/harness, and the simulator's library)."""
    return build_mod.build_harness(kit, pattern, makefile="sim.mk", **kwargs)


def build_lab_sim(kit, pattern, source, folder, object_from=None, **kwargs):
    """build.build_lab with mk/sim.mk: the same program, its kernels run by the simulator. object_from: the GPU
    build's student.o, linked as it is (the simulator's check: one build, the GPU's PTX), else source compiled for
    the simulator's target."""
    return build_mod.build_lab(kit, pattern, source, folder, makefile="sim.mk", object_from=object_from, **kwargs)


def _high_pipe(minimum: int) -> tuple:
    """(read end, write end at minimum or above), both close-on-exec: run_process passes the write end alone. The
    pipe may not be opened again for reading through /proc/self/fd (mode write-only): the runner, which holds the
    write end, must not be able to take the reports away from the grader."""
    read_fd, write_fd = os.pipe()
    moved = fcntl.fcntl(write_fd, fcntl.F_DUPFD_CLOEXEC, minimum)
    os.close(write_fd)
    os.fchmod(moved, 0o222)
    return read_fd, moved


def run_with_report(program, args, *, timeout: float, workdir, cwd=None, source: str = "the lab's file", env=None,
                    cancel=None):
    """run.run_harness with the simulator's report channel: `program args --result-fd W --quiet --runner-fd N`, the
    seed through --seed-fd, PPL_SIM_REPORT_FD=N and the grader's instruction limit (env: more variables, such as
    the estimate's PPL_SIM_DEVICE; cancel: a threading.Event that stops the run, as its timeout does). Returns
    (Outcome, SimReport); workdir keeps result.jsonl, output.log (the program's output, for people) and
    sim-report.json (what the channel carried, as the grader read it)."""
    workdir, result = result_file(workdir)
    args, seed = split_seed(args)
    result_read, result_write = os.pipe()
    report_read, report_write = _high_pipe(REPORT_FD_MIN)
    os.set_blocking(report_read, False)
    copy, reader = Drain(result_read, result), ReportReader(report_read)
    copy.start()
    reader.start()
    try:
        with SeedPipe(seed) as pipe:
            argv = [str(program), *args, "--result-fd", str(result_write), "--quiet", "--runner-fd", str(report_write),
                    *pipe.argv]
            proc = run_process(argv, timeout=timeout, cwd=cwd, log_path=workdir / "output.log",
                               pass_fds=[result_write, report_write, *pipe.fds],
                               env={**sim_env(budget=True, report_fd=report_write), **(env or {})}, cancel=cancel)
    finally:
        for fd in (result_write, report_write):
            os.close(fd)
        copy.join(timeout=30)
        reader.stop(DRAIN_GRACE)
        os.close(report_read)
    report = reader.report
    (workdir / "sim-report.json").write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
    return interpret(proc, read_result_lines(result), timeout, source), report


class _ListsProgress:
    """What run_lists_sim has seen of its program so far: each list's result lines and end, and how far the report
    channel is. A list is over once its run-end line has come and the report has moved past it (the device program
    begins the next list's report only after the checker ended this one) or the program ended. on_ready(k, Outcome)
    is called, in order, for each list that passed as soon as it is over; on the first list that did not pass (or a
    kernel at the instruction limit) `stop` is set: no later list could be taken (grader/run/runs_ahead.py)."""

    def __init__(self, runs, timeouts, source, reports, on_ready):
        self.runs, self.timeouts, self.source, self.reports, self.on_ready = runs, timeouts, source, reports, on_ready
        self.lock = threading.Lock()
        self.lines, self.ends, self.common = {}, {}, []
        self.report_at, self.told, self.start = -1, 0, time.monotonic()
        self.stop = threading.Event()

    def result_line(self, raw: bytes) -> None:
        try:
            line = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return
        if not isinstance(line, dict):
            return
        with self.lock:
            run = line.get("run")
            if not isinstance(run, int):
                self.common.append(line)
                return
            self.lines.setdefault(run, []).append(line)
            if line.get("kind") == "run-end":
                self.ends[run] = (line.get("exit"), time.monotonic())
                if line.get("exit") != 0:
                    self.stop.set()
        self.tell()

    def report_line(self, run: int) -> None:
        with self.lock:
            self.report_at = max(self.report_at, run)
        self.tell()

    def tell(self) -> None:
        """on_ready for every list now over that passed, in order."""
        if self.on_ready is None:
            return
        while True:
            with self.lock:
                k = self.told
                end = self.ends.get(k)
                if end is None or end[0] != 0 or self.report_at <= k or k >= len(self.runs):
                    return
                self.told += 1
                lines = self.common + self.lines.get(k, [])
                started = self.ends.get(k - 1, (0, self.start))[1]
            outcome = interpret(Process(0, "", end[1] - started), lines, self.timeouts[k], self.source)
            outcome.result_lines = lines
            _judge_list(outcome, self.reports.get(k, SimReport()), self.runs[k])
            self.on_ready(k, outcome)


def _judge_list(outcome, report, args) -> None:
    """run_harness_sim's verdict of one list of run_lists_sim's, its report in outcome.sim."""
    outcome.sim = report
    judge_run(outcome, report)
    report.run = {"status": outcome.status, "message": (outcome.message.splitlines() or [""])[0],
                  "args": split_seed(args)[0]}


def run_lists_sim(program, runs, *, timeouts, workdir, cwd=None, source: str = "the lab's file", cancel=None,
                  on_ready=None, gate=None) -> list:
    """Runs several argument lists through one lab program on the simulator (run.run_harness_runs: the checker's
    --runs-fd, one runner and one device program for all), with the report channel; returns an Outcome per list, as
    run_harness_sim's, its SimReport in outcome.sim (the device program starts the report afresh at each list:
    sim_report.RunsReportReader). A list may carry --schedule SPEC: the simulator then runs it under that schedule,
    its launches numbered from the first, as the case alone would run (PPL_SIM_SCHEDULE=SPEC).

    The program stops at the first list that does not pass, and at the first kernel that reaches the simulator's
    instruction limit (it would hang on a GPU: that list is a timeout); the lists after it are "not-run". on_ready(k,
    outcome), when given, gets each list that passed as soon as it is over (_ListsProgress), before the program
    ends. gate(k), when given, is asked (and may wait) before list k goes to the program: False, and the lists end
    there (run.run_harness_runs). workdir keeps the program's result.jsonl and output.log; save_list_run writes a
    list's own files where the grading wants them."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    report_read, report_write = _high_pipe(REPORT_FD_MIN)
    os.set_blocking(report_read, False)
    limited = threading.Event()
    reports = {}
    progress = _ListsProgress(runs, timeouts, source, reports, on_ready)
    reader = RunsReportReader(report_read, on_limit=lambda run: limited.set(), on_run=progress.report_line,
                              reports=reports)
    reader.start()
    try:
        outcomes = run_harness_runs(program, runs, timeouts=timeouts, workdir=workdir, cwd=cwd, source=source,
                                    more_argv=["--runner-fd", str(report_write)], pass_fds=[report_write],
                                    env=sim_env(budget=True, report_fd=report_write),
                                    cancel=runs_ahead.any_of(cancel, limited, progress.stop),
                                    on_line=progress.result_line, gate=gate)
    finally:
        os.close(report_write)
        reader.stop(DRAIN_GRACE)
        os.close(report_read)
    stopped = None
    for k, (args, outcome) in enumerate(zip(runs, outcomes)):
        report = reports.get(k, SimReport())
        if stopped is not None:  # after the list that hung or failed: not run
            outcome.status, outcome.message = "not-run", stopped
        elif not any(isinstance(ln.get("run"), int) for ln in getattr(outcome, "result_lines", [])):
            outcome.status, outcome.message = "not-run", "not run: the list never reached the program"
            stopped = outcome.message
        elif limited.is_set() and any(e["status"] == "limit" for e in report.faults()):
            outcome.status = "timeout"  # stopped here: judge_run says why
            stopped = "not run: an earlier run of this lab hung (a hung kernel would hang again; fix it first)"
        elif not outcome.passed:
            stopped = "not run: an earlier run in this program did not pass"
        _judge_list(outcome, report, args)
    with progress.lock:
        progress.report_at = len(runs)  # the program is over: every list's report is whole
    progress.tell()
    return outcomes


def save_list_run(outcome, workdir, batch_folder) -> None:
    """Writes in workdir what run_harness_sim leaves of a run (result.jsonl, sim-report.json, and output.log, which
    points to the program's) for a list of run_lists_sim's that the grading takes as its run."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "result.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in outcome.result_lines),
                                          encoding="utf-8")
    (workdir / "output.log").write_text(f"[this run was one of the lab's runs in one program: its output is in "
                                        f"{batch_folder}/output.log]\n", encoding="utf-8")
    (workdir / "sim-report.json").write_text(json.dumps(outcome.sim.to_json(), indent=1) + "\n", encoding="utf-8")


def grader_runner(program, args_of, *, workdir, cwd, source: str, timeout: float):
    """The estimate's run(args, env) -> report kernels list for the grader (make grade SIM=1; estimate.local_runner
    is the tools'): the lab program run as every grading run, in the sandbox with the report channel
    (run_with_report), args_of adding the grader's sandbox demand. EstimateError when a run does not pass."""

    def run(args, env):
        outcome, report = run_with_report(program, args_of(args), timeout=timeout, workdir=workdir, cwd=cwd,
                                          source=source, env=env)
        if not outcome.passed:
            raise EstimateError(f"its run {' '.join(args)} did not pass: {outcome.message[:300]}")
        return report.kernels
    return run


def run_harness_sim(program, args, *, timeout: float, workdir, cwd=None, source: str = "the lab's file", env=None,
                    cancel=None):
    """run.run_harness on the simulator (run_with_report), its channel's verdict in the Outcome.

    A kernel the simulator cannot run makes a run that did not pass "not-simulated" (SimPlatform scores it 0 as not
    graded). A launch that reached the instruction limit is a timeout (the kernel would hang on a GPU: the lab's
    later tests are not run). Any other failure gets the simulator's diagnostic (kernel faults, findings) in its
    message. outcome.sim is the SimReport. env: more environment (a schedule: grader/sim/schedules.py); cancel: as
    run_with_report's."""
    outcome, report = run_with_report(program, args, timeout=timeout, workdir=workdir, cwd=cwd, source=source,
                                      env=env, cancel=cancel)
    outcome.sim = report
    judge_run(outcome, report)
    report.run = {"status": outcome.status, "message": (outcome.message.splitlines() or [""])[0],
                  "args": split_seed(args)[0]}
    (Path(workdir) / "sim-report.json").write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
    return outcome


def judge_run(outcome, report: SimReport) -> None:
    """run_harness_sim's verdict of a run that did not pass, from its channel (outcome changed in place)."""
    limit = report.limitation()
    if outcome.passed:
        return
    if limit:
        outcome.status, outcome.message = "not-simulated", not_graded_message(limit)
        outcome.whose = whose_limit(limit)
    elif outcome.status == "timeout" and not any(e["status"] == "limit" for e in report.faults()):
        # the wall clock stopped it, not the work limits: the kit's backstop, never the student's hang
        outcome.status, outcome.whose, outcome.backstop = "not-simulated", KIT_FAULT, True
        outcome.message = (f"not graded: the simulator's wall-clock backstop stopped this run ({outcome.message}), "
                           f"which its work limits (the instruction budget, the CPU time limit) had not: a fault "
                           f"of the kit, not of your code; grade again, or on a GPU")
    elif any(e["status"] == "limit" for e in report.faults()):
        outcome.status = "timeout"
        # the simulator saw the kernel loop, not the wall clock (grader/sim/sim_check.py)
        outcome.instruction_limit = True
        outcome.message = (f"a kernel ran {os.environ.get('PPL_SIM_MAX_INSTRUCTIONS', SIM_MAX_INSTRUCTIONS)} warp "
                           f"instructions in one launch, the simulator's limit, ten times what any reference "
                           f"solution's launch needs at the sizes it grades: it probably loops forever (on a GPU it "
                           f"would hang)\nthe simulator says: {diagnostic(report)}")
    else:
        said = diagnostic(report)
        if said and said not in outcome.message:
            outcome.message = f"{outcome.message}\nthe simulator says: {said}".strip()


def largest_size(runs) -> int:
    """The largest --n size among the argument lists runs (0 when none gives --n: datasets)."""
    largest = 0
    for args in runs:
        for k, arg in enumerate(args[:-1]):
            if arg == "--n":
                for part in args[k + 1].split(","):
                    size = parse_size(part)
                    largest = max(largest, size if size is not None else SIM_MAX_N + 1)
    return largest


def needs_gpu(lab: str, name: str, points: float, why: str, detail: str = "") -> TestResult:
    """A test the simulator does not run: 0 points, status NEEDS_GPU, and why."""
    return TestResult(lab, name, points, 0.0, NEEDS_GPU, why, detail)


def sim_full_marks(report) -> bool:
    """Every test the simulator ran, outside the bonus labs, got its full points, and no run hung, in any lab
    (grade.py's exit status 0); a test not graded because of a kernel the simulator cannot run is not full."""
    return (all(r.full for r in report.results if not r.bonus and r.status != NEEDS_GPU)
            and not hung_labs(report))


def sim_reproduce_line(lab: str, args, submission=None, kit=KIT, here: bool = False, schedule=None) -> str:
    """How a student reruns one of the grader's runs on the simulator: make sim with the run's arguments (without
    --sandbox, which a run in one process does not take), in the lab's folder (here: the grading was started
    there) or from the kit's root with LAB= and, for a folder other than the kit's labs/, SUBMISSION=; with
    SCHEDULE= when it failed under an adversarial schedule."""
    args = list(args)
    while "--sandbox" in args[:-1]:
        k = args.index("--sandbox")
        del args[k:k + 2]
    words = ["make", "sim"]
    if not here:
        words.append(f"LAB={lab[:2]}")
        folder, kit = Path(submission or Path(kit) / "labs").resolve(), Path(kit).resolve()
        if folder != kit / "labs":
            shown = folder.relative_to(kit) if folder.is_relative_to(kit) else folder
            words.append(f"SUBMISSION={shlex.quote(str(shown))}")
    if schedule:
        words.append(f"SCHEDULE={schedule}")
    where = "in this lab's folder" if here else "from the kit's root"
    return f"to reproduce on the simulator, {where}: {' '.join(words)} ARGS={shlex.quote(shlex.join(args))}"


def counts_text(program, pattern: str, workdir, cwd, timeout: float, lab: str = "NN") -> str:
    """The simulator's counts per kernel (from its report channel) of one small run of program (the pattern's
    counts_run, grader/patterns.py), for people (sim_report.counts_summary); "" when the run did not pass."""
    args = list(pattern_named(pattern).counts_run)
    outcome, report = run_with_report(program, args, timeout=timeout, workdir=workdir, cwd=cwd)
    return counts_summary(report, args, lab) if outcome.passed else ""


# ---- the sanitizers row ----

MODULE_OWNERS = ("student", "kit")  # what the device process calls a module (sim/device_main.c)


def kernel_modules(reports) -> dict:
    """{kernel name (as the report has it): the set of module origins of the kernels of that name} from the reports'
    "kernels" lists. The device process names each module by the build: "student" when its device code lies in the
    student's object, "kit" otherwise; a report written in the runner's own process (tests of the runtime, make sim
    by hand before the device) names the program's path instead, which says nothing of the owner."""
    modules = {}
    for report in reports:
        for k in getattr(report, "kernels", None) or []:
            if isinstance(k, dict) and as_text(k.get("module")) in MODULE_OWNERS:
                modules.setdefault(as_text(k.get("name")), set()).add(as_text(k.get("module")))
    return modules


def finding_owner(f: dict, source: str, kit=KIT, source_text: str = "", modules: dict | None = None) -> str:
    """"student" or "kit": whose finding it is. By the build when the report says which module its kernel is in
    (modules, kernel_modules'): a kernel of the student's object is the student's whatever its line table says (a
    #line naming the kit's harness changes the file names, not the object), and a name found in both is the
    student's. Otherwise by the line table's files (sanitize.owner_of: the kit's only under its harness/ folder; a
    path the source made up is the student's) and, for an instruction without a line, by whether the student's file
    defines its kernel."""
    origins = (modules or {}).get(as_text(f.get("kernel")))
    if origins:
        return "student" if "student" in origins else "kit"
    kernel = demangle(as_text(f.get("kernel")))
    owners = [owner_of(as_text(f.get(name)), kernel, source, kit, source_text)
              for name in ("file", "other_file") if as_text(f.get(name))]
    if owners:
        return "student" if "student" in owners else "kit"
    if defines_function(source_text, kernel) or not kit_defines_function(str(Path(kit)), kernel):
        return "student"
    return "kit"


# Kernel faults that are hazards (what compute-sanitizer's memcheck and synccheck report), as the report names them:
# they fail their run, and count in the sanitizers row like the findings.
HAZARD_FAULTS = ("out-of-bounds", "misaligned", "deadlock", "bad-sync-mask")
# How a run may end and still have been checked to its end (a wrong answer is a run that went to its end).
CHECKED_TO_THE_END = ("pass", "fail")
ENDED = {"crash": "the lab crashed", "timeout": "the lab hung (TIMEOUT)",
         "cuda-error": "the lab stopped at a CUDA error", "harness-error": "the harness could not run the lab",
         "no-device": "there was no device"}


def not_checked(run: dict) -> str:
    """What stopped a run before the simulator's checks could finish: "the lab crashed (--n 1,33: died of
    SIGSEGV)"."""
    status, message = as_text(run.get("status")), as_text(run.get("message"))
    args = " ".join(as_text(a) for a in run.get("args") or [])
    said = "; ".join(x for x in (args, message) if x)
    return f"{ENDED.get(status, 'the run ended as ' + status)}{f' ({said})' if said else ''}"


MAX_HAZARDS_SHOWN = 10  # hazards the sanitizers row's detail and make sim list (sim/report.c's SIM_TEXT_FINDINGS)


def hazards_found(reports, source: str, *, kit=KIT, source_text: str = "") -> tuple:
    """(the student's hazards, the kit's): the findings and HAZARD_FAULTS kernel faults of reports (SimReports), one
    line each for people. A finding is one hazard per (kind, kernel, pair of source lines) over all the runs
    (sim_report.hazard_key, as the simulator records it), its counts summed, the races between warps first
    (barrier_first); a fault, one per text. make grade's sanitizers row and make sim both count and list these, so
    that their counts agree."""
    modules = kernel_modules(reports)
    merged, faults = {}, {}
    for report in reports:
        for f in report.findings:
            key = hazard_key(f)
            if key in merged:
                merged[key]["count"] = as_count(merged[key].get("count")) + as_count(f.get("count"))
            else:
                merged[key] = dict(f)
        for e in report.faults():
            if e["status"] in HAZARD_FAULTS:
                faults.setdefault(fault_text(e), e)
    found = [(f, finding_text(f)) for f in barrier_first(list(merged.values()))]
    found += [({"kernel": e["what"].removeprefix("kernel ")}, text) for text, e in faults.items()]
    mine, kits = [], []
    for f, text in found:
        (mine if finding_owner(f, source, kit, source_text, modules) == "student" else kits).append(demangle(text))
    return mine, kits


def hazard_listing(mine: list, source: str) -> list:
    """The lines that list the student's hazards (at most MAX_HAZARDS_SHOWN, then how many more): the sanitizers
    row's detail, and make sim's closing list."""
    more = len(mine) - MAX_HAZARDS_SHOWN
    return [f"the simulator's hazard checks found, in {source}:", *mine[:MAX_HAZARDS_SHOWN],
            *([f"... and {more} more hazard{'s' if more != 1 else ''} (each listed once per kind and pair of lines)"]
              if more > 0 else [])]


def score_hazards(lab: str, points: float, source: str, reports, *, kit=KIT, source_text: str = "") -> TestResult:
    """The sanitizers row on the simulator: compute-sanitizer needs a GPU, but the simulator checks the same hazards
    (races on shared and global memory, uninitialized reads, barriers not every thread reaches, out-of-bounds and
    misaligned accesses) in every run. reports: the SimReports of the lab's runs.

    FAIL when the student's code has a hazard: a finding, or a kernel fault of HAZARD_FAULTS, in a kernel of the
    student's (finding_owner); data["hazards"] lists them, each with its file:line, for grader/score/score.py's
    apply_hazards, which takes labs.toml's hazard_cost of the lab's correctness points. One in the kit's own kernels
    (only device code found whole in the kit's harness objects is, sim/device_main.c) makes the row "not graded" (0
    points: the kit's own code is at fault, the instructors must look; the reference solutions have none), so that
    passing one's kernel off as the kit's can never earn the row. Otherwise the row says what happened: "not graded"
    when a kernel could not be simulated; "not run" when no run reached the simulator's checks, or when a run ended
    before them (a crash, a hang, a CUDA error: its group failed for it), saying which and what the other runs found;
    "pass" only when every run was checked to its end (a run of a wrong answer is) and nothing of the student's was
    found."""
    reports = [r for r in reports if r is not None]
    mine, kits = hazards_found(reports, source, kit=kit, source_text=source_text)
    note = ("\nIn the kit's own kernels (a kit bug: tell the instructors):\n" + "\n".join(kits) if kits else "")
    if mine:
        more = f" (and {len(mine) - 1} more below)" if len(mine) > 1 else ""
        return TestResult(lab, SANITIZERS_NAME, points, 0.0, "FAIL", f"the simulator found: {mine[0]}{more}",
                          "\n".join(hazard_listing(mine, source)) + note, {"hazards": mine})
    if kits:
        return TestResult(lab, SANITIZERS_NAME, points, 0.0, NOT_GRADED,
                          f"not graded: the simulator found a hazard in the kit's own code, not in {source} "
                          f"({kits[0]}); tell the instructors", note.strip())
    limit = next((r.limitation() for r in reports if r.limitation()), None)
    if limit:
        return TestResult(lab, SANITIZERS_NAME, points, 0.0, NOT_GRADED,
                          not_graded_message(limit).replace(f"{Path(kit).resolve()}/", ""), note.strip())
    if not reports:
        return TestResult(lab, SANITIZERS_NAME, points, 0.0, "not run",
                          f"not run: no run of {lab} reached the simulator (its groups need a GPU, or were not run)",
                          note.strip())
    if not any(r.lines for r in reports):
        first = next((r.run for r in reports if r.run and r.run.get("status") not in CHECKED_TO_THE_END), None)
        why = f": {not_checked(first)}" if first else ""
        return TestResult(lab, SANITIZERS_NAME, points, 0.0, "not run",
                          f"not run: none of the {len(reports)} runs reached the simulator's checks{why}",
                          note.strip())
    stopped = [r.run for r in reports if r.run and r.run.get("status") not in CHECKED_TO_THE_END]
    if stopped:
        checked = len(reports) - len(stopped)
        rest = (f"; the other {'run' if checked == 1 else f'{checked} runs'} found nothing in {source}" if checked
                else "")
        more = f" (and {len(stopped) - 1} more runs)" if len(stopped) > 1 else ""
        return TestResult(lab, SANITIZERS_NAME, points, 0.0, "not run",
                          f"not run to the end: {not_checked(stopped[0])}{more}, before the simulator's checks could "
                          f"finish{rest}",
                          "\n".join([*(f"- {not_checked(run)}" for run in stopped), note.strip()]).strip())
    return TestResult(lab, SANITIZERS_NAME, points, points, "pass",
                      f"the simulator found no races, uninitialized reads, out-of-bounds accesses or barrier hazards "
                      f"in {source} ({len(reports)} runs, each checked to its end; compute-sanitizer itself needs a "
                      f"GPU)", note.strip())


def _source_text(path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def lab_programs(grader, lab) -> list:
    """[(group index, {program name: calls})]: the runs the simulator's grader (SimPlatform) may make of lab's groups,
    with the arguments, folder and limit its _run gives each, as four lab programs a group (run_lists_sim: each
    run's start, about 25 ms, costs more than a small case's simulation): "inorder" runs the group's cases in order,
    and one for each kind of adversarial schedule runs every case under its own schedule of that kind (--schedule).
    A call is (args, workdir, env, timeout, the program's argument list): RunsAhead.start_lists's."""
    found = []
    for index, group in enumerate(lab.groups):
        try:
            runs = grader.group_runs(group, lab.args)
        except ValueError:
            continue
        if largest_size(runs) > SIM_MAX_N:
            continue
        timeout = grader.platform.ahead_limit(grader.run_timeout(lab, group))
        call = grader.call_args(lab, group)
        programs = {"inorder": []}
        for k, args in enumerate(runs):
            tag, case = f"{index}-{k}", [*args, *call]
            workdir, full = grader.build_dir / lab.name / "runs" / tag, grader._args(case)
            programs["inorder"].append((full, workdir, None, timeout, full))
            for spec in case_schedules(lab.name, tag, case):
                programs.setdefault(spec.split(":")[0], []).append(
                    (full, workdir / spec.replace(":", "-"), schedule_env(spec), timeout, [*full, "--schedule", spec]))
        found.append((index, programs))
    return found


class SimPlatform(Platform):
    """The simulator's back end (grade.Grader's platform), with the changes the module docstring lists.
    estimate_gpu: the GPU of the performance estimate (grader/gpus.toml); run_pool: where runs go ahead
    (grader/run/runs_ahead.py; default the process's shared pool)."""

    build_dir = "build/grade-sim"
    simulator_check_off = "graded on the simulator itself (--simulator)"
    sanitizers_apart = False  # the row is scored from the correctness runs' reports

    def __init__(self, estimate_gpu: str = "H100", run_pool=None):
        self.estimate_gpu = estimate_gpu
        self.run_pool = run_pool or runs_ahead.shared_pool()
        self.sim_failed = set()  # labs with a group that ran on the simulator and did not pass
        self.group_outcomes = []  # the Outcomes of the group being graded
        self.group_args = []  # and the arguments of each of its runs, in the same order
        self.kit_run, self.run_now, self.ahead = False, None, None

    def hooks(self) -> dict:
        return {"build": build_lab_sim, "build_harness": build_harness_sim, "run": run_harness_sim}

    def build_folder(self, build_dir):
        return self.build_dir if build_dir in (None, "build/grade") else build_dir

    def harness_folder(self, kit, harness_build):
        # mk/sim.mk's own folder, whatever HARNESS_BUILD says in the environment (a GPU's shared folder: the objects
        # have the same names, and a GPU's link would take the simulator's; gradescope.py's prebuild does the same)
        return harness_build if harness_build is not None else sim_harness_build(kit)

    def attach(self, grader) -> None:
        grader.timeout = SIM_TIMEOUT
        # the kit's run (itself or with a cancel: sim_check.py), whose runs go ahead (grader/run/runs_ahead.py)
        self.kit_run = getattr(grader.run, "func", grader.run) is run_harness_sim
        self.run_now, grader.run = grader.run, self._run_or_take

    def host_memory_mib(self, limits) -> int:
        return limits.for_run(True)

    def reference_seconds(self, grader, lab, group):
        return None  # no GPU's calibration applies: the work limits and the backstop bound each run

    def cpu_seconds(self, limits) -> float | None:
        # CPU time counts the work of the runner's host code and of the simulation alike, whatever else the machine
        # runs: a limit that cannot change with the load (labs.toml [limits] simulator_cpu_seconds)
        return limits.simulator_cpu_seconds

    def gpu_pids(self, grader):
        return None

    def device_name(self, grader) -> str:
        return ""

    def full_marks(self, report) -> bool:
        return sim_full_marks(report)

    def _run_or_take(self, program, args, **kwargs):
        """The grader's run: the outcome of this run started ahead (grader/run/runs_ahead.py), else the run made now."""
        taken = self.ahead.take(program, args, **kwargs) if self.ahead is not None else None
        return taken if taken is not None else self.run_now(program, args, **kwargs)

    def grade_groups(self, grader, lab, program):
        """The correctness groups as the Grader grades them, one run after another, each run started ahead where
        there is more than one core (grader/run/runs_ahead.py: the same verdict, in the time of the slowest runs
        rather than their sum)."""
        if not self.kit_run or self.run_pool.executor is None or grader._skip(lab, "", 0):
            return grader.run_groups(lab, program)
        self.ahead = RunsAhead(self.run_now, self.run_pool.executor)
        try:
            self._start_ahead(grader, lab, program)
            return grader.run_groups(lab, program)
        finally:
            self.ahead.close()
            self.ahead = None

    def _start_ahead(self, grader, lab, program) -> None:
        """Starts every run grade_group may make of lab's groups in lab programs of many lists (lab_programs), the
        schedules' programs of a group each following its in-order one, case by case."""
        for index, programs in lab_programs(grader, lab):
            in_order = None
            for name, calls in programs.items():  # in order first
                started = self.ahead.start_lists(
                    run_lists_sim, program, calls, save=save_list_run, cwd=grader.kit, group=index,
                    folder=grader.build_dir / lab.name / "lists" / f"{index}-{name}", source=lab.source,
                    after=in_order)
                in_order = in_order or started

    def ahead_limit(self, timeout: float) -> float:
        """The time limit of a run started ahead (the check's platform lowers it to its share of time left)."""
        return timeout

    def graded(self, grader, report) -> None:
        report.simulator = True
        report.notes.append(
            f"Graded on the kit's CPU simulator (--simulator), not a GPU: only the correctness groups of sizes up "
            f"to {SIM_MAX_N} elements ran, and the simulator's hazard checks stand for compute-sanitizer; larger "
            f"sizes and performance need a GPU and score 0 here. Grade on a GPU for the full marks.")

    def run_case(self, grader, lab, tag, program, args, timeout):
        outcome = grader.run_case(lab, tag, program, args, timeout)
        if getattr(outcome, "backstop", False):  # the kit's wall-clock backstop, not a verdict: once more
            grader.log(f"{lab.name}: a run hit the simulator's wall-clock backstop: graded again")
            outcome = grader.run_case(lab, tag, program, args, timeout)
        if outcome.passed and self.kit_run:  # and under three other orders (grader/sim/schedules.py)
            failed = run_schedules(grader.run, lab.name, tag, program, grader._args(args), timeout=timeout,
                                   workdir=grader.build_dir / lab.name / "runs" / tag, cwd=grader.kit,
                                   source=lab.source, case_args=args)
            outcome = grader._seen(lab, failed) if failed else outcome
        self.group_outcomes.append(outcome)
        self.group_args.append(list(args))
        return outcome

    def grade_group(self, grader, lab, index, group, program):
        self.group_outcomes, self.group_args = [], []
        result = self._grade_group(grader, lab, index, group, program)
        failed = next(((a, o) for a, o in zip(self.group_args, self.group_outcomes) if not o.passed), None)
        if failed is not None and result.detail:  # the GPU's reproduction line (score_group's) cannot run here
            result.detail = result.detail.replace(
                reproduce_line(lab.name, failed[0], Path(program).name),
                sim_reproduce_line(lab.name, failed[0], grader.submission, grader.kit, here=in_lab_folder(),
                                   schedule=getattr(failed[1], "schedule", None)))
        limited = next((o for o in self.group_outcomes if o.status == "not-simulated"), None)
        if limited is not None and not result.full:
            whose = getattr(limited, "whose", KIT_FAULT)
            result = TestResult(lab.name, group.name, group.points, 0.0, NOT_GRADED, limited.message,
                                "the simulator's limitation, not a fault of your code: the points of this group "
                                "need a GPU" if whose == KIT_FAULT else
                                "your code's doing: a launch ran far more warp instructions than the lab needs "
                                "(sim/README.md, \"Instruction budget\"), so the simulator could not judge it; do "
                                "less work per launch (a loop bound, a grid of one block per few elements)",
                                data={"whose": whose})
        if result.status != NEEDS_GPU and not result.full:
            self.sim_failed.add(lab.name)
        return result

    def _grade_group(self, grader, lab, index, group, program):
        try:
            runs = grader.group_runs(group, lab.args)
        except ValueError:
            runs = []  # run_group reports it
        largest = largest_size(runs)
        if largest > SIM_MAX_N:
            return needs_gpu(lab.name, group.name, group.points,
                             f"sizes up to {largest} elements are too large for the simulator (at most "
                             f"{SIM_MAX_N})")
        return grader.run_group(lab, index, group, program)

    def grade_sanitizers(self, grader, lab, program, cancel=None):
        """compute-sanitizer's row, scored from the simulator's own hazard checks of the runs made so far."""
        reports = [load_report(p) for p in sorted((grader.build_dir / lab.name / "runs").glob("*/sim-report.json"))]
        return score_hazards(lab.name, lab.sanitizers.points, lab.source, reports, kit=grader.kit,
                             source_text=_source_text(Path(program).parent / lab.source))

    def grade_performance(self, grader, lab, program, correct, report):
        perf = lab.performance  # correct is False here: the groups that need a GPU scored 0
        detail, estimate, line = "", None, ""
        if lab.name not in self.sim_failed:
            detail = counts_text(program, lab.pattern, grader.build_dir / lab.name / "runs" / "counts", grader.kit,
                                 grader.timeout, lab.name)
            run = grader_runner(program, grader._args, workdir=grader.build_dir / lab.name / "runs" / "estimate",
                                cwd=grader.kit, source=lab.source, timeout=grader.timeout)
            estimate, line = estimate_for(run, lab, self.estimate_gpu, kit=grader.kit, timeout=grader.timeout,
                                          baseline_root=grader.build_dir / "estimate")
        why = ("speed is measured on a GPU; below, an estimate from the simulator's counts (never points)"
               if estimate else "speed is measured on a GPU; the simulator counts instructions instead"
               + (" (below)" if detail else ""))
        result = needs_gpu(lab.name, "performance", perf.points, why, "\n".join(x for x in (line, detail) if x))
        if estimate:
            result.data["estimate"] = estimate.to_json()
        return result
