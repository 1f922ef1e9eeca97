"""Running programs under a time limit, and reading one harness run's verdict from its result lines.

run_process() runs any command in a session of its own, keeps the first and last 64 KiB of what it prints, and kills
its process group (and what is left of its session) when it ends or at its timeout, even one stopped with SIGSTOP.
run_harness() runs a lab program (docs/DESIGN.md: arguments, JSON result lines, exit codes) and turns what it left
behind into an Outcome: pass, fail, timeout, crash, cuda-error, harness-error or no-device, with a message for people.

The seed and the result lines travel through pipes (--seed-fd, --result-fd), never the command line or a file the
lab's code could name: the lab program's checker process alone reads the one and writes the other.
"""
import fcntl
import json
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_CUDA, EXIT_NO_DEVICE, EXIT_TIMEOUT = 0, 1, 2, 3, 77, 124
NO_DEVICE_MESSAGE = "not run: this machine has no CUDA device; grading needs an NVIDIA GPU"
TAIL_LINES = 15
OUTPUT_KEEP = 64 << 10  # bytes of a program's output (stdout and stderr together) kept at each end
PIPE_BYTES = 1 << 20  # the output pipe's size asked for, and the most read at once
REAP_GRACE = 5.0  # seconds a killed program has to be gone (a process stuck in the kernel dies late)
DRAIN_GRACE = 1.0  # seconds the output is still read after the program ended, waiting for the pipe to close


@dataclass
class Process:
    """What run_process saw: returncode (None when it timed out), the combined stdout and stderr (the first and last
    OUTPUT_KEEP bytes, with a line saying how much was left out between), seconds taken; written: the bytes the
    program wrote in all; dropped: those left out of output; escaped: a sentence when processes it started were
    still there outside its process group (they were killed) or its output stayed open, else ""."""

    returncode: int | None
    output: str
    seconds: float
    written: int = 0
    dropped: int = 0
    escaped: str = ""

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


class _Capture(threading.Thread):
    """Reads a pipe into its first `keep` bytes and a ring of its last `keep` bytes, counting what falls between.

    It never waits on the writers: it polls, so a writer that is stopped (SIGSTOP) or a pipe that a stray process
    keeps open cannot hold it; stop(grace) ends it within grace seconds whether or not the pipe was closed."""

    def __init__(self, fd: int, keep: int):
        super().__init__(daemon=True)
        self.fd, self.keep = fd, keep
        self.head, self.tail, self.total = bytearray(), bytearray(), 0
        self.closed = threading.Event()  # every writer closed the pipe
        self.lock = threading.Lock()
        self.deadline = None  # set by stop()

    def run(self):
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while self.deadline is None or time.monotonic() < self.deadline:
            if not poller.poll(50):
                continue
            try:
                chunk = os.read(self.fd, PIPE_BYTES)
            except BlockingIOError:
                continue
            except OSError:
                break
            if not chunk:
                self.closed.set()
                break
            self._keep(memoryview(chunk))

    def _keep(self, chunk: memoryview) -> None:
        with self.lock:
            self.total += len(chunk)
            room = self.keep - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if len(chunk) >= self.keep:
                self.tail = bytearray(chunk[len(chunk) - self.keep:])
            elif chunk:
                self.tail += chunk
                del self.tail[:max(0, len(self.tail) - self.keep)]

    def stop(self, grace: float = 0.0) -> None:
        self.deadline = time.monotonic() + grace
        self.join(grace + 1.0)

    def kept(self) -> tuple:
        """(the bytes kept, with a line where some were left out; the count left out)."""
        with self.lock:
            dropped = self.total - len(self.head) - len(self.tail)
            if not dropped:
                return bytes(self.head + self.tail), 0
            line = (f"\n[... {dropped} bytes of output left out here: the program wrote {self.total} bytes, of which "
                    f"the first and the last {self.keep // 1024} KiB are kept ...]\n")
            return bytes(self.head) + line.encode() + bytes(self.tail), dropped


def _stat_fields(pid: int) -> list | None:
    """The fields of /proc/PID/stat after the command's name (state, parent, process group, session, ...), or None
    when pid is gone or there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()  # the name before ")" may hold spaces and parentheses
    except (OSError, IndexError):
        return None


def _proc_stat(pid: int) -> tuple | None:
    """(state, process group, session) of a live pid from /proc; None when it is gone, a zombie, or there is no
    /proc."""
    try:
        fields = _stat_fields(pid)
        state, group, session = fields[0].decode(), int(fields[2]), int(fields[3])
    except (TypeError, IndexError, ValueError):
        return None
    return None if state in "ZXx" else (state, group, session)


def _parent(pid: int) -> int | None:
    """The parent of pid (a zombie's too), or None."""
    try:
        return int(_stat_fields(pid)[1])
    except (TypeError, IndexError, ValueError):
        return None


def _pids() -> list:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != os.getpid()]
    except OSError:
        return []


def left_by_us(pid) -> bool:
    """Whether process pid (an nvidia-smi pid, an int or a string) is this process's descendant or an orphan (parent
    pid 1); a process that cannot be read (gone, or another pid namespace's) counts as ours, so nothing is hidden."""
    try:
        pid = int(pid)
    except (TypeError, ValueError):
        return True
    me, seen = os.getpid(), 0
    parent = _parent(pid)
    if parent is None or parent == 1:
        return True
    while parent not in (None, 0, 1) and seen < 4096:
        if parent == me:
            return True
        parent, seen = _parent(parent), seen + 1
    return False


def _holds(pid: int, inode: int) -> bool:
    """Whether pid has the pipe `inode` open (the grader's own process is never asked)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == f"pipe:[{inode}]":
                return True
        except OSError:
            continue
    return False


def _kill_if(pid: int, still) -> bool:
    """SIGKILL to pid if still(pid) holds once a pidfd pins the process (a pid freed and reused meanwhile is not hit).
    Whether it was sent."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        if not still(pid):
            return False
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _kill_strays(session: int, inode: int | None = None) -> int:
    """Kills what is left of a program's session outside its process group (a process that moved to a group of its
    own: killpg missed it), or, given the inode of its output pipe, every process holding that pipe (one that left
    the session with setsid: the sandbox stops that; here it is at least found while it holds the output). A few
    rounds, for one that forks meanwhile. Returns how many were killed."""
    if inode is None:
        def still(pid):
            stat = _proc_stat(pid)
            return stat is not None and stat[2] == session and stat[1] != session
    else:
        def still(pid):
            return _proc_stat(pid) is not None and _holds(pid, inode)
    killed = set()
    for _ in range(5):
        hit = {pid for pid in _pids() if pid not in killed and still(pid) and _kill_if(pid, still)}
        if not hit:
            break
        killed |= hit
    return len(killed)


def run_process(argv, *, timeout: float | None, cwd=None, log_path=None, env=None, pass_fds=(),
                keep: int = OUTPUT_KEEP) -> Process:
    """Runs argv in a new session, its stdout and stderr into one pipe that a thread drains; returns a Process.

    Only the first and the last `keep` bytes of the output are kept (in memory, and in log_path when given), with
    a line saying how many were left out between. The program's process group is killed with SIGKILL when it ends
    (a background child must not outlive the run) or at its timeout (returncode None), whatever it does meanwhile:
    a program that stopped itself (SIGSTOP) is killed as well. Processes of its session in other groups are killed
    too; one that left the session (setsid) and still holds the output is found and killed, and the reading stops
    DRAIN_GRACE seconds after the program ended in any case, so nothing here waits on what the program left behind.
    A program that cannot be started gives returncode 127 and the OS error as output. timeout None: no limit.
    """
    start = time.monotonic()
    read_fd, write_fd = os.pipe()
    try:
        fcntl.fcntl(read_fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # fewer, larger reads for a program that prints a lot
    except (AttributeError, OSError):
        pass
    os.set_blocking(read_fd, False)
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=write_fd, stderr=write_fd,
                                start_new_session=True, pass_fds=tuple(pass_fds))
    except OSError as e:
        os.close(read_fd)
        os.close(write_fd)
        message = f"cannot run {argv[0]}: {e.strerror}"
        if log_path is not None:
            Path(log_path).write_text(message + "\n", encoding="utf-8")
        return Process(127, message, 0.0)
    os.close(write_fd)
    inode = os.fstat(read_fd).st_ino
    capture = _Capture(read_fd, keep)
    capture.start()
    returncode, notes = None, []
    try:
        try:
            returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
    finally:  # also after a normal exit, and on Ctrl-C (KeyboardInterrupt) while waiting
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        strays = _kill_strays(proc.pid)
        if proc.returncode is None:
            try:
                proc.wait(timeout=REAP_GRACE)
            except subprocess.TimeoutExpired:
                notes.append(f"the program (pid {proc.pid}) did not die within {REAP_GRACE:g} s of SIGKILL")
        if not capture.closed.wait(0.2):
            strays += _kill_strays(proc.pid, inode)
            if not capture.closed.wait(DRAIN_GRACE):
                notes.append("its output was still held open by a process the grader could not find; reading "
                             "stopped")
        if strays:
            notes.insert(0, f"{strays} process{'es' if strays != 1 else ''} started by the program outlived it "
                            f"outside its process group (setsid or setpgid) and {'were' if strays != 1 else 'was'} "
                            f"killed")
        capture.stop()
        os.close(read_fd)
    data, dropped = capture.kept()
    escaped = "; ".join(notes)
    if escaped:
        data += f"\n[grader: {escaped}]\n".encode()
    if log_path is not None:
        Path(log_path).write_bytes(data)
    return Process(returncode, data.decode("utf-8", "replace"), time.monotonic() - start, capture.total, dropped,
                   escaped)


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


def secret_args(args) -> tuple:
    """(the arguments without `--seed S`, S or None): the seed goes to the program through a pipe instead."""
    args = list(args)
    if "--seed" not in args:
        return args, None
    k = args.index("--seed")
    if k + 1 >= len(args):
        return args, None
    return args[:k] + args[k + 2:], args[k + 1]


class LineReader(threading.Thread):
    """Reads a pipe as it fills and hands each line (bytes, without its newline) to on_line, the last one too if
    the pipe ends without a newline. A line that grows past max_line bytes goes to on_overlong as its first max_line
    bytes; with skip_overlong the rest of that line is dropped, otherwise it is read as lines of its own. It polls,
    so a writer that never closes the pipe (a runner that inherited it) cannot hold it: stop(grace) ends it grace
    seconds later whatever the writers do. compute-sanitizer's log (grader/sanitize/) and the simulator's report
    (grader/simulator.py) are read so."""

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
    drain = Drain(result_read, result)
    drain.start()
    try:
        proc = run_process(argv, timeout=timeout, cwd=cwd, log_path=workdir / "output.log", pass_fds=fds)
    finally:
        os.close(result_write)  # the program and its children are gone: the drain sees the end of the pipe
        if seed_read is not None:
            os.close(seed_read)
        drain.join(timeout=30)
    return interpret(proc, read_result_lines(result), timeout, source)


def _runs_payload(runs) -> bytes:
    """--runs-fd's format: each argument ended by a NUL byte, each list by an empty argument."""
    return b"".join(b"".join(str(a).encode() + b"\0" for a in run) + b"\0" for run in runs)


class _Feed(threading.Thread):
    """Writes bytes into a pipe and closes it (a payload larger than the pipe must not block the grader)."""

    def __init__(self, fd: int, data: bytes):
        super().__init__(daemon=True)
        self.fd, self.data = fd, data

    def run(self):
        try:
            with open(self.fd, "wb", buffering=0) as sink:
                sink.write(self.data)
        except OSError:
            pass


def run_harness_runs(program, runs, *, timeouts, workdir, cwd=None, source: str = "the lab's file",
                     slack: float = 60.0) -> list:
    """Runs several argument lists through one lab program and one runner (the checker's --runs-fd: one CUDA
    context for all of them) and returns an Outcome per list, in order.

    Each list gets `--timeout T` from timeouts (its own seconds): the checker stops a run that takes longer and runs
    no later list, so a hung kernel costs one run's timeout, as it would alone. The whole program gets the sum of
    them plus slack. A list after a timeout, or after the program itself died, gets an Outcome "not-run". The seed
    travels as in run_harness; result lines are kept in workdir/result.jsonl, the output in workdir/output.log.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    result = workdir / "result.jsonl"
    result.unlink(missing_ok=True)
    seed, lists = None, []
    for args, limit in zip(runs, timeouts):
        args, found = secret_args(args)
        seed = seed if found is None else found
        lists.append([*args, "--timeout", f"{limit:g}"])
    result_read, result_write = os.pipe()
    runs_read, runs_write = os.pipe()
    fds = [result_write, runs_read]
    argv = [str(program), "--runs-fd", str(runs_read), "--result-fd", str(result_write), "--quiet"]
    seed_read = None
    if seed is not None:
        seed_read, seed_write = os.pipe()
        os.write(seed_write, f"{seed}\n".encode())
        os.close(seed_write)
        fds.append(seed_read)
        argv += ["--seed-fd", str(seed_read)]
    feed = _Feed(runs_write, _runs_payload(lists))
    feed.start()
    drain = Drain(result_read, result)
    drain.start()
    total = sum(timeouts) + slack
    try:
        proc = run_process(argv, timeout=total, cwd=cwd, log_path=workdir / "output.log", pass_fds=fds)
    finally:
        os.close(result_write)
        os.close(runs_read)
        if seed_read is not None:
            os.close(seed_read)
        drain.join(timeout=30)
        feed.join(timeout=5)
    lines = read_result_lines(result)
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
        outcome = interpret(Process(rc, proc.output, proc.seconds), common + mine, limit, source)
        outcomes.append(outcome)
        if outcome.status in ("timeout", "no-device") or end is None:
            stopped = ("not run: an earlier run of this lab timed out (a hung kernel would hang again; fix it first)"
                       if outcome.status == "timeout" else
                       NO_DEVICE_MESSAGE if outcome.status == "no-device" else
                       "not run: the lab program stopped during an earlier run")
    return outcomes
