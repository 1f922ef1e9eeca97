"""Running programs under a time limit, and reading one harness run's verdict from its result lines.

run_process() runs any command in its own process group and kills the whole group on timeout. run_harness() runs
a lab program (docs/DESIGN.md: arguments, JSON result lines, exit codes) and turns what it left behind into an
Outcome: pass, fail, timeout, crash, cuda-error, harness-error or no-device, with a message for people.
"""
import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_CUDA, EXIT_NO_DEVICE = 0, 1, 2, 3, 77
NO_DEVICE_MESSAGE = "not run: this machine has no CUDA device; grading needs an NVIDIA GPU"
TAIL_LINES = 15


@dataclass
class Process:
    """What run_process saw: returncode (None when it timed out), the combined stdout and stderr, seconds taken."""

    returncode: int | None
    output: str
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def run_process(argv, *, timeout: float, cwd=None, log_path=None, env=None) -> Process:
    """Runs argv with stdout and stderr into log_path (a temporary file when None), in a new session.

    On timeout it kills the whole process group (so children started by the program die too) and returns
    returncode None. A program that cannot be started gives returncode 127 and the OS error as output.
    """
    log_path = Path(log_path) if log_path else None
    log = open(log_path, "w+b") if log_path else tempfile.TemporaryFile()
    start = time.monotonic()
    with log:
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            return Process(127, f"cannot run {argv[0]}: {e.strerror}", 0.0)
        try:
            returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            returncode = None
        finally:
            try:  # also after a normal exit: a background child must not outlive the run
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if proc.returncode is None:
                proc.wait()
        log.seek(0)
        output = log.read().decode("utf-8", "replace")
    return Process(returncode, output, time.monotonic() - start)


@dataclass
class Outcome:
    """The verdict on one harness run. status: pass, fail, timeout, crash, cuda-error, harness-error, no-device."""

    status: str
    message: str = ""
    case: str | None = None  # the case the message is about
    lines: list = field(default_factory=list)  # the result lines (dicts) the run left, without its plan line
    cases: list = field(default_factory=list)  # the case names the run planned (empty: it wrote no plan)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def bench_line(self) -> dict | None:
        """The result line of a --bench run, if it wrote one."""
        return next((ln for ln in self.lines if ln.get("kind") == "bench"), None)


def read_result_lines(path) -> list:
    """The JSON objects in a result file, one a line; a line cut short by a kill (not valid JSON) is skipped."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    lines = []
    for raw in text.splitlines():
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            lines.append(obj)
    return lines


def split_plan(lines: list) -> tuple:
    """(planned case names or None, the other lines). The plan is the first line of kind "plan" (the harness writes
    it before running anything); its cases must be a list of strings, else the run counts as unplanned."""
    plan = next((ln for ln in lines if ln.get("kind") == "plan"), None)
    rest = [ln for ln in lines if ln.get("kind") != "plan"]
    cases = plan.get("cases") if plan else None
    if not isinstance(cases, list) or not all(isinstance(c, str) for c in cases):
        cases = None
    return cases, rest


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return "\n".join(kept)


def interpret(proc: Process, lines: list, timeout: float, source: str = "the lab's file") -> Outcome:
    """Turns a finished (or killed) harness run into an Outcome, following the exit codes of docs/DESIGN.md.

    lines are all the result lines the run left, its plan line included: every planned case needs a passing line.
    source is the student's file name, for the messages.
    """
    cases, lines = split_plan(lines)
    planned = cases is not None
    cases = cases or []
    by_case = {}
    for line in lines:
        by_case.setdefault(line.get("case"), []).append(line)
    pending = next((c for c in cases if c not in by_case), None)  # the first case with no result line
    errors = [ln for ln in lines if ln.get("status") == "error"]
    outcome = Outcome("fail", lines=lines, cases=cases, seconds=proc.seconds)
    rc = proc.returncode
    unplanned = "" if planned else " before it planned its cases"

    def done(status, message, case=None):
        outcome.status, outcome.message, outcome.case = status, message, case
        return outcome

    if rc is None:
        return done("timeout", f"timed out after {timeout:g} s{unplanned} (the kernel may loop forever or deadlock "
                               f"at a barrier)", pending)
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return done("crash", f"crashed with signal {name}{unplanned}", pending)
    if rc == EXIT_NO_DEVICE:
        return done("no-device", NO_DEVICE_MESSAGE)
    if rc in (EXIT_CUDA, EXIT_USAGE):
        err = errors[-1] if errors else None
        message = (err.get("message") if err else None) or _tail(proc.output) or f"exit status {rc}"
        case = err.get("case") if err else pending
        if rc == EXIT_CUDA:
            return done("cuda-error", message, case)
        return done("harness-error", f"the harness rejected the run (a kit bug or a bad dataset file, not a fault "
                                     f"of {source}; tell the instructors): " + message, case)
    if not planned:
        return done("fail", f"the program stopped before it planned its cases (exit status {rc})")
    if not cases:
        return done("fail", f"the program planned no cases (exit status {rc}): a kit bug; tell the instructors")
    for case in cases:
        results = by_case.get(case)
        if not results:
            return done("fail", f"no result for this case: the program exited with status {rc} before reporting "
                                f"it (does {source} call exit()?)", case)
        bad = next((ln for ln in results if ln.get("status") != "pass"), None)
        if bad:
            return done("fail", str(bad.get("message") or f"status {bad.get('status')}"), case)
    if rc != EXIT_PASS:
        return done("fail", f"exited with status {rc} although every case reported a pass", None)
    return done("pass", f"{len(cases)} case{'s' if len(cases) != 1 else ''} passed")


def run_harness(program, args, *, timeout: float, workdir, cwd=None, source: str = "the lab's file") -> Outcome:
    """Runs `program args --result FILE --quiet` (FILE and a log under workdir) and returns its Outcome.

    The cases it expects are those the program's plan line names; source (the student's file name) is for messages.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    result = workdir / "result.jsonl"
    result.unlink(missing_ok=True)
    argv = [str(program), *args, "--result", str(result), "--quiet"]
    proc = run_process(argv, timeout=timeout, cwd=cwd, log_path=workdir / "output.log")
    return interpret(proc, read_result_lines(result), timeout, source)
