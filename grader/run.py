"""Running programs under a time limit, and reading one harness run's verdict from its result lines.

run_process() runs any command in its own process group and kills the whole group on timeout. run_harness() runs
a lab program (docs/DESIGN.md: arguments, JSON result lines, exit codes) and turns what it left behind into an
Outcome: pass, fail, timeout, crash, cuda-error, harness-error or no-device, with a message for people.

The seed and the result lines travel through pipes (--seed-fd, --result-fd), never the command line or a file the
lab's code could name: the lab program's checker process alone reads the one and writes the other.
"""
import json
import os
import signal
import subprocess
import tempfile
import threading
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


def run_process(argv, *, timeout: float, cwd=None, log_path=None, env=None, pass_fds=()) -> Process:
    """Runs argv with stdout and stderr into log_path (a temporary file when None), in a new session.

    The program gets the log opened for writing only (it cannot read back what it printed) and the descriptors of
    pass_fds. On timeout it kills the whole process group (so children started by the program die too) and returns
    returncode None. A program that cannot be started gives returncode 127 and the OS error as output.
    """
    if log_path is None:
        handle, name = tempfile.mkstemp(prefix="ppl-run-", suffix=".log")
        os.close(handle)
        try:
            return run_process(argv, timeout=timeout, cwd=cwd, log_path=name, env=env, pass_fds=pass_fds)
        finally:
            os.unlink(name)
    log_path = Path(log_path)
    start = time.monotonic()
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True, pass_fds=tuple(pass_fds))
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
    output = log_path.read_bytes().decode("utf-8", "replace")
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
        # the checker names the case whose runner crashed (an error line) and then dies of the same signal
        return done("crash", f"crashed with signal {name}{unplanned}", errors[-1].get("case") if errors else pending)
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


def secret_args(args) -> tuple:
    """(the arguments without `--seed S`, S or None): the seed goes to the program through a pipe instead."""
    args = list(args)
    if "--seed" not in args:
        return args, None
    k = args.index("--seed")
    if k + 1 >= len(args):
        return args, None
    return args[:k] + args[k + 2:], args[k + 1]


class _Drain(threading.Thread):
    """Copies what arrives on a pipe into a file as it comes, so a run that is killed leaves its lines behind."""

    def __init__(self, fd: int, path: Path):
        super().__init__(daemon=True)
        self.fd, self.path = fd, path

    def run(self):
        with open(self.fd, "rb", buffering=0) as source, open(self.path, "wb") as sink:
            while chunk := source.read(65536):
                sink.write(chunk)
                sink.flush()


def run_harness(program, args, *, timeout: float, workdir, cwd=None, source: str = "the lab's file") -> Outcome:
    """Runs `program args --result-fd W --quiet` and returns its Outcome; the result lines that arrive on W are
    kept in workdir/result.jsonl, and the output in workdir/output.log.

    A `--seed S` among args does not reach the command line: S is written to a pipe the program reads with
    `--seed-fd R` (only the lab program's checker process reads it; docs/DESIGN.md). The cases expected are those
    the program's plan line names; source (the student's file name) is for messages.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    result = workdir / "result.jsonl"
    result.unlink(missing_ok=True)
    args, seed = secret_args(args)
    result_read, result_write = os.pipe()
    fds = [result_write]
    argv = [str(program), *args, "--result-fd", str(result_write), "--quiet"]
    seed_read = None
    if seed is not None:
        seed_read, seed_write = os.pipe()
        os.write(seed_write, f"{seed}\n".encode())  # a few bytes: the pipe holds them until the program reads
        os.close(seed_write)
        fds.append(seed_read)
        argv[1 + len(args):1 + len(args)] = ["--seed-fd", str(seed_read)]
    drain = _Drain(result_read, result)
    drain.start()
    try:
        proc = run_process(argv, timeout=timeout, cwd=cwd, log_path=workdir / "output.log", pass_fds=fds)
    finally:
        os.close(result_write)  # the program and its children are gone: the drain sees the end of the pipe
        if seed_read is not None:
            os.close(seed_read)
        drain.join(timeout=30)
    return interpret(proc, read_result_lines(result), timeout, source)
