"""Reading one harness run's verdict from its result lines (grader/run/process.py runs the program).

run_harness() runs a lab program (docs/DESIGN.md: arguments, JSON result lines, exit codes) and turns what it left
behind into an Outcome: pass, fail, timeout, crash, cuda-error, harness-error or no-device, with a message for people.

The seed and the result lines travel through pipes (--seed-fd, --result-fd), never the command line or a file the
lab's code could name: the lab program's checker process alone reads the one and writes the other.
"""
import json
import os
import select
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.run import runs_ahead
from grader.run.process import Process, run_process
from grader.run.seed import SeedPipe, split_seed

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_CUDA, EXIT_NO_DEVICE, EXIT_TIMEOUT = 0, 1, 2, 3, 77, 124
NO_DEVICE_MESSAGE = "not run: this machine has no CUDA device; grading needs an NVIDIA GPU"
TAIL_LINES = 15


@dataclass
class Outcome:
    """The verdict on one harness run. status: pass, fail, timeout, crash, cuda-error, harness-error, no-device."""

    status: str
    message: str = ""
    case: str | None = None  # the case the message is about
    lines: list = field(default_factory=list)  # the result lines (dicts) the run left, without its plan line
    cases: list = field(default_factory=list)  # the case names the run planned (empty: it wrote no plan)
    reruns: dict = field(default_factory=dict)  # case name -> the harness arguments that rerun it (plan_reruns)
    seconds: float = 0.0
    sandbox: dict = field(default_factory=dict)  # the checker's "sandbox" line: the layers that held the runner

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


def plan_reruns(lines: list) -> dict:
    """{case name: the arguments that rerun it on its own} from the plan line's "reruns" (one list of strings, or
    null, per planned case: harness/checker/results.h), overridden by a case's own "rerun" field; cases without
    are left out. The tools print these commands rather than reading case names apart."""
    plan = next((ln for ln in lines if ln.get("kind") == "plan"), None) or {}
    cases, reruns = plan.get("cases"), plan.get("reruns")
    found = {}
    if isinstance(cases, list) and isinstance(reruns, list) and len(cases) == len(reruns):
        found = {c: r for c, r in zip(cases, reruns) if isinstance(c, str) and _is_argv(r)}
    for line in lines:
        if line.get("kind") != "plan" and isinstance(line.get("case"), str) and _is_argv(line.get("rerun")):
            found[line["case"]] = line["rerun"]
    return found


def _is_argv(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(a, str) for a in value)


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return "\n".join(kept)


def interpret(proc: Process, lines: list, timeout: float, source: str = "the lab's file") -> Outcome:
    """Turns a finished (or killed) harness run into an Outcome, following the exit codes of docs/DESIGN.md.

    lines are all the result lines the run left, its plan line included: every planned case needs a passing line.
    source is the student's file name, for the messages.
    """
    sandbox = next((ln for ln in lines if ln.get("kind") == "sandbox"), {})
    lines = [ln for ln in lines if ln.get("kind") not in ("sandbox", "run-end")]
    reruns = plan_reruns(lines)
    cases, lines = split_plan(lines)
    planned = cases is not None
    cases = cases or []
    by_case = {}
    for line in lines:
        by_case.setdefault(line.get("case"), []).append(line)
    pending = next((c for c in cases if c not in by_case), None)  # the first case with no result line
    errors = [ln for ln in lines if ln.get("status") == "error"]
    outcome = Outcome("fail", lines=lines, cases=cases, reruns=reruns, seconds=proc.seconds,
                      sandbox={k: sandbox[k] for k in ("layers", "missing") if k in sandbox})
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
    if rc == EXIT_TIMEOUT:  # the checker stopped the runner at the run's --timeout
        stopped = next((ln for ln in lines if ln.get("status") == "timeout"), {})
        limit = stopped.get("limit_seconds")  # the checker's --call-seconds stopped the lab's call
        if isinstance(limit, (int, float)) and limit > 0:
            return done("timeout", f"the lab's code did not return within {limit:g} s of a case's call (the kernel "
                                   f"may loop forever or deadlock at a barrier, or a host loop never ends)",
                        stopped.get("case") or pending)
        return done("timeout", f"timed out after {timeout:g} s (the kernel may loop forever or deadlock at a barrier, "
                               f"or a host loop never ends)", stopped.get("case") or pending)
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


class LineReader(threading.Thread):
    """Reads a pipe as it fills and hands each line (bytes, without its newline) to on_line, the last one too if
    the pipe ends without a newline. A line that grows past max_line bytes goes to on_overlong as its first max_line
    bytes; with skip_overlong the rest of that line is dropped, otherwise it is read as lines of its own. It polls,
    so a writer that never closes the pipe (a runner that inherited it) cannot hold it: stop(grace) ends it grace
    seconds later whatever the writers do. compute-sanitizer's log (grader/sanitize/) and the simulator's report
    (grader/sim/simulator.py) are read so."""

    skip_overlong = False

    def __init__(self, fd: int, max_line: int):
        super().__init__(daemon=True)
        self.fd, self.max_line = fd, max_line
        self.deadline = None

    def on_line(self, line: bytes) -> None:
        raise NotImplementedError

    def on_overlong(self, head: bytes) -> None:
        self.on_line(head)

    def run(self):
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        pending, skipping = b"", False
        while self.deadline is None or time.monotonic() < self.deadline:
            if not poller.poll(50):
                continue
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                break
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if skipping:  # the end of an overlong line
                    skipping = False
                    continue
                self.on_line(line)
            if len(pending) > self.max_line:
                self.on_overlong(pending[:self.max_line])
                pending, skipping = b"", self.skip_overlong
        if pending and not skipping:
            self.on_line(pending)

    def stop(self, grace: float) -> None:
        self.deadline = time.monotonic() + grace
        self.join(grace + 1.0)


class Drain(threading.Thread):
    """Copies what arrives on a pipe into a file as it comes, so a run that is killed leaves its lines behind.
    arrivals: (bytes received so far, time.monotonic()) after each read, to tell when a line came (run_seconds).
    on_line: called with each whole line (bytes, without its end) once it is in the file, as it comes."""

    def __init__(self, fd: int, path: Path, on_line=None):
        super().__init__(daemon=True)
        self.fd, self.path, self.on_line = fd, path, on_line
        self.arrivals = []

    def run(self):
        received, pending = 0, b""
        with open(self.fd, "rb", buffering=0) as source, open(self.path, "wb") as sink:
            while chunk := source.read(65536):
                received += len(chunk)
                self.arrivals.append((received, time.monotonic()))
                sink.write(chunk)
                sink.flush()
                if self.on_line is not None:
                    *lines, pending = (pending + chunk).split(b"\n")
                    for line in lines:
                        self.on_line(line)


def run_end(raw: bytes) -> dict | None:
    """The run-end line of a --runs-fd program's list (its "run" index and "exit" status) that raw holds, else None."""
    if b'"run-end"' not in raw:
        return None
    try:
        line = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    ok = isinstance(line, dict) and line.get("kind") == "run-end" and isinstance(line.get("run"), int)
    return line if ok else None


def run_seconds(path, arrivals: list, start: float) -> dict:
    """Run index -> the wall seconds of that run of a --runs-fd program: from the previous run's run-end line (the
    program's start for the first) to its own, as the grader received them (Drain.arrivals). Measured by the
    grader on the checker's lines, never reported by the lab's code."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return {}
    seconds, offset, previous = {}, 0, start
    for raw in data.split(b"\n"):
        offset += len(raw) + 1
        line = run_end(raw)
        if line is None:
            continue
        came = next((t for received, t in arrivals if received >= offset - 1), None)
        if came is not None:
            seconds[line["run"]] = round(came - previous, 3)
            previous = came
    return seconds


def result_file(workdir) -> tuple:
    """(workdir as a Path, made; its result.jsonl, where a run's result lines go): the file emptied of an earlier
    run's, so that a run that writes nothing is never read as the one before it."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    result = workdir / "result.jsonl"
    result.unlink(missing_ok=True)
    return workdir, result


def checker_env(env=None, threads: int | None = None) -> dict:
    """The environment of a lab program (the kit's checker, whose loops over large inputs are OpenMP's): env, else
    this process's, with the team sized to the cores this grading has (threads, else runs_ahead.share(): a class
    run's worker has its share, not the machine) and its idle threads asleep instead of spinning
    (OMP_WAIT_POLICY=passive), so that lab programs side by side do not take each other's cores;
    harness/checker/parallel.h says what that cost. A caller's own OMP_NUM_THREADS or OMP_WAIT_POLICY stands."""
    out = dict(os.environ if env is None else env)
    out.setdefault("OMP_NUM_THREADS", str(max(1, threads or runs_ahead.share())))
    out.setdefault("OMP_WAIT_POLICY", "passive")
    return out


def run_harness(program, args, *, timeout: float, workdir, cwd=None, source: str = "the lab's file") -> Outcome:
    """Runs `program args --result-fd W --quiet` and returns its Outcome; the result lines that arrive on W are
    kept in workdir/result.jsonl, and the output in workdir/output.log.

    A `--seed S` among args does not reach the command line: S is written to a pipe the program reads with
    `--seed-fd R` (only the lab program's checker process reads it; docs/DESIGN.md). The cases expected are those
    the program's plan line names; source (the student's file name) is for messages.
    """
    workdir, result = result_file(workdir)
    args, seed = split_seed(args)
    result_read, result_write = os.pipe()
    drain = Drain(result_read, result)
    drain.start()
    try:
        with SeedPipe(seed) as pipe:
            argv = [str(program), *args, *pipe.argv, "--result-fd", str(result_write), "--quiet"]
            proc = run_process(argv, timeout=timeout, cwd=cwd, log_path=workdir / "output.log",
                               pass_fds=[result_write, *pipe.fds], env=checker_env())
    finally:
        os.close(result_write)  # the program and its children are gone: the drain sees the end of the pipe
        drain.join(timeout=30)
    return interpret(proc, read_result_lines(result), timeout, source)


def _runs_payload(runs) -> bytes:
    """--runs-fd's format: each argument ended by a NUL byte, each list by an empty argument."""
    return b"".join(b"".join(str(a).encode() + b"\0" for a in run) + b"\0" for run in runs)


class _Feed(threading.Thread):
    """Writes pieces of bytes into a pipe and closes it (a payload larger than the pipe must not block the grader).
    gate(k), when given, is asked before piece k and may wait: False stops the writing there."""

    def __init__(self, fd: int, pieces, gate=None):
        super().__init__(daemon=True)
        self.fd, self.pieces, self.gate = fd, pieces, gate

    def run(self):
        try:
            with open(self.fd, "wb", buffering=0) as sink:
                for k, piece in enumerate(self.pieces):
                    if self.gate is not None and not self.gate(k):
                        break
                    sink.write(piece)
        except OSError:
            pass


class ListEnds:
    """The run-end lines of a --runs-fd program as they arrive (the checker's own lines, on the result pipe), for a
    gate that must know how the lists before it ended: wait(k) returns list k's exit status once its run-end line
    came, or None once the program has ended without one. seconds_at[k]: when it came (time.monotonic())."""

    def __init__(self):
        self.exits, self.seconds_at, self.over = {}, {}, False
        self._changed = threading.Condition()

    def on_line(self, raw: bytes) -> None:
        line = run_end(raw)
        if line is not None:
            with self._changed:
                self.exits[line["run"]] = line.get("exit")
                self.seconds_at[line["run"]] = time.monotonic()
                self._changed.notify_all()

    def ended(self) -> None:
        with self._changed:
            self.over = True
            self._changed.notify_all()

    def wait(self, k: int):
        with self._changed:
            self._changed.wait_for(lambda: k in self.exits or self.over)
            return self.exits.get(k)


# The checker's options that hold its runner and device program from their start (RLIMIT_CPU, RLIMIT_DATA), so that a
# program of many lists (--runs-fd) takes them from its own command line (after the launcher's: the grader's win),
# not from a list's, which comes too late for a runner started before the first list.
PROGRAM_OPTIONS = ("--cpu-seconds", "--host-memory-mib")


def split_program_options(args) -> tuple:
    """(args without PROGRAM_OPTIONS and their values, those options with their values)."""
    rest, taken, k = [], [], 0
    while k < len(args):
        if args[k] in PROGRAM_OPTIONS and k + 1 < len(args):
            taken += args[k:k + 2]
            k += 2
        else:
            rest.append(args[k])
            k += 1
    return rest, taken


def run_harness_runs(program, runs, *, timeouts, workdir, cwd=None, source: str = "the lab's file",
                     slack: float = 60.0, more_argv=(), pass_fds=(), env=None, cancel=None, on_line=None,
                     gate=None, ends: ListEnds | None = None) -> list:
    """Runs several argument lists through one lab program and one runner (the checker's --runs-fd: one CUDA
    context for all of them) and returns an Outcome per list, in order.

    Each list gets `--timeout T` from timeouts (its own seconds): the checker stops a run that takes longer and runs
    no later list, so a hung kernel costs one run's timeout, as it would alone. The whole program gets the sum of
    them plus slack. A list after a timeout, or after the program itself died, gets an Outcome "not-run". The seed
    travels as in run_harness; result lines are kept in workdir/result.jsonl, the output in workdir/output.log.
    gate(k), when given, is asked before list k is written to the program (which reads each list once it needs it)
    and may wait: False ends the lists there (the program gets no more), and the program's limit is twice the sum.
    more_argv, pass_fds, env and cancel: more for the program and run_process, on_line: Drain's (the simulator's
    report channel, grader/sim/simulator.py's run_lists_sim). ends, a ListEnds, hears every line and is told when
    the program has ended (a gate's way to wait for the lists before it). Each Outcome's result_lines are all its
    list's result lines (those of no list first).
    """
    workdir, result = result_file(workdir)
    seeds, lists, held = set(), [], set()
    for args, limit in zip(runs, timeouts):
        args, found = split_seed(args)
        seeds.add(found)
        args, limits = split_program_options(args)
        held.add(tuple(limits))
        lists.append([*args, "--timeout", f"{limit:g}"])
    seeds.discard(None)
    if len(seeds) > 1:  # one checker reads one seed: the lists of one program share it
        raise ValueError(f"the runs of one program carry {len(seeds)} different seeds")
    if len(held) > 1:
        raise ValueError(f"the runs of one program carry different {', '.join(PROGRAM_OPTIONS)}")
    more_argv = [*next(iter(held), ()), *more_argv]
    result_read, result_write = os.pipe()
    runs_read, runs_write = os.pipe()
    feed = _Feed(runs_write, [_runs_payload([args]) for args in lists], gate)
    feed.start()
    if ends is not None:
        heard = on_line
        on_line = ends.on_line if heard is None else (lambda line: (heard(line), ends.on_line(line)))
    drain = Drain(result_read, result, on_line)
    drain.start()
    total = sum(timeouts) * (2 if gate is not None else 1) + slack
    start = time.monotonic()
    try:
        with SeedPipe(next(iter(seeds), None)) as pipe:
            argv = [str(program), "--runs-fd", str(runs_read), "--result-fd", str(result_write), "--quiet",
                    *more_argv, *pipe.argv]
            proc = run_process(argv, timeout=total, cwd=cwd, log_path=workdir / "output.log",
                               pass_fds=[result_write, runs_read, *pass_fds, *pipe.fds], env=checker_env(env),
                               cancel=cancel)
    finally:
        os.close(result_write)
        os.close(runs_read)
        drain.join(timeout=30)
        if ends is not None:
            ends.ended()
        feed.join(timeout=5)
    lines = read_result_lines(result)
    took = run_seconds(result, drain.arrivals, start)
    common = [ln for ln in lines if "run" not in ln]
    outcomes, stopped = [], None
    for k, limit in enumerate(timeouts):
        mine = [ln for ln in lines if ln.get("run") == k]
        end = next((ln for ln in mine if ln.get("kind") == "run-end"), None)
        if stopped is not None:
            outcomes.append(Outcome("not-run", stopped))
            continue
        if end is not None and isinstance(end.get("exit"), int):
            rc = end["exit"]
        elif proc.returncode == EXIT_NO_DEVICE and not mine:
            rc = EXIT_NO_DEVICE
        else:
            rc = proc.returncode if proc.returncode is not None else None  # the program died or hung in this run
        outcome = interpret(Process(rc, proc.output, took.get(k, proc.seconds)), common + mine, limit, source)
        outcome.result_lines = common + mine
        outcomes.append(outcome)
        if outcome.status in ("timeout", "no-device") or end is None:
            stopped = ("not run: an earlier run of this lab timed out (a hung kernel would hang again; fix it first)"
                       if outcome.status == "timeout" else
                       NO_DEVICE_MESSAGE if outcome.status == "no-device" else
                       "not run: the lab program stopped during an earlier run")
    return outcomes
