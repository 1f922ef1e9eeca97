"""Running any program under a time limit: in a session of its own, its output kept at both ends (the first and
last 64 KiB), and its process group (and what is left of its session) killed when it ends or at its timeout, even
one stopped with SIGSTOP. The /proc readers that find what a run left behind live here too (left_by_us)."""
import fcntl
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

OUTPUT_KEEP = 64 << 10  # bytes of a program's output (stdout and stderr together) kept at each end
PIPE_BYTES = 1 << 20  # the output pipe's size asked for, and the most read at once
REAP_GRACE = 5.0  # seconds a killed program has to be gone (a process stuck in the kernel dies late)
DRAIN_GRACE = 1.0  # seconds the output is still read after the program ended, waiting for the pipe to close
CANCEL_POLL = 0.25  # seconds between looks at a run's cancel event
# Set in each program's environment to this process's pid: the checker binds its life to it (harness/checker/sandbox.c
# ppl_die_with_starter), and so does a grader started by another (grader/run/lifetime.py watch_starter).
DIE_WITH_ENV = "PPL_DIE_WITH"

_running = {}  # pid -> Popen of every program run_process has started and not yet killed: kill_running's list
# Held across each start, so that kill_running, from another thread, waits for a program being started and kills it
# too. Reentrant: a signal handler (kill_running in the main thread) may run while the main thread itself starts one.
_running_lock = threading.RLock()


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
        parent = _parent(int(pid))
    except (TypeError, ValueError):
        return True
    return parent is None or parent == 1 or ours(pid)


def ours(pid) -> bool:
    """Whether process pid (an nvidia-smi pid) is, strictly, this process's descendant: a process that cannot be
    read is not (left_by_us's opposite choice: here a wrong yes would hide another process from a benchmark's
    record)."""
    try:
        parent, seen = _parent(int(pid)), 0
    except (TypeError, ValueError):
        return False
    me = os.getpid()
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


def _wait(proc, timeout: float | None, cancel) -> int | None:
    """proc's exit status, or None at its timeout or once cancel is set. It wakes as the process ends (poll on a
    pidfd): Popen.wait(timeout) sleeps in steps of up to 50 ms, which cost a short run (a simulator run takes about
    30 ms) a third of its time on average."""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # before Linux 5.3, or not Linux: Popen's own steps
        pidfd = None
    try:
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            step = left if cancel is None else CANCEL_POLL if left is None else min(CANCEL_POLL, left)
            if pidfd is not None:
                poller = select.poll()
                poller.register(pidfd, select.POLLIN)
                if poller.poll(None if step is None else max(1, int(step * 1000) + 1)):
                    return proc.wait()
            else:
                try:
                    return proc.wait(timeout=step)
                except subprocess.TimeoutExpired:
                    pass
            if cancel is not None and cancel.is_set():
                return None
    finally:
        if pidfd is not None:
            os.close(pidfd)


def kill_running() -> int:
    """SIGKILL to the process group (and what is left of the session) of every program run_process is running now,
    from any thread: what a grader that is told to stop (SIGTERM) does before it ends (grader/run/lifetime.py). The
    run_process calls that waited for them return as after a timeout's kill. How many groups were killed."""
    with _running_lock:
        pids = list(_running)
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _kill_strays(pid)
    return len(pids)


def run_process(argv, *, timeout: float | None, cwd=None, log_path=None, env=None, pass_fds=(),
                keep: int = OUTPUT_KEEP, cancel=None) -> Process:
    """Runs argv in a new session, its stdout and stderr into one pipe that a thread drains; returns a Process.

    Only the first and the last `keep` bytes of the output are kept (in memory, and in log_path when given), with
    a line saying how many were left out between. The program's process group is killed with SIGKILL when it ends
    (a background child must not outlive the run) or at its timeout (returncode None), whatever it does meanwhile:
    a program that stopped itself (SIGSTOP) is killed as well. Processes of its session in other groups are killed
    too; one that left the session (setsid) and still holds the output is found and killed, and the reading stops
    DRAIN_GRACE seconds after the program ended in any case, so nothing here waits on what the program left behind.
    A program that cannot be started gives returncode 127 and the OS error as output. timeout None: no limit.
    cancel: a threading.Event; once set, the program is killed as at its timeout (within CANCEL_POLL seconds).
    """
    start = time.monotonic()
    read_fd, write_fd = os.pipe()
    try:
        fcntl.fcntl(read_fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # fewer, larger reads for a program that prints a lot
    except (AttributeError, OSError):
        pass
    os.set_blocking(read_fd, False)
    env = {**(os.environ if env is None else env), DIE_WITH_ENV: str(os.getpid())}
    try:
        with _running_lock:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=write_fd,
                                    stderr=write_fd, start_new_session=True, pass_fds=tuple(pass_fds))
            _running[proc.pid] = proc
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
        returncode = _wait(proc, timeout, cancel)
    finally:  # also after a normal exit, and on Ctrl-C (KeyboardInterrupt) while waiting
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        strays = _kill_strays(proc.pid)
        with _running_lock:
            _running.pop(proc.pid, None)
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
