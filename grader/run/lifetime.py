"""No process outlives its grading (docs/DESIGN.md, "Process lifetime").

Every program the grader runs is in a session of its own (run_process), so a signal to the grader's process group
(timeout(1), make, Ctrl-C in a terminal) does not reach it, and a grader that simply died would leave the checker
and its runner spinning, given to init. Three mechanisms close that:

- stop_on_signals: a grader told to stop (SIGTERM, SIGHUP) first kills every program it is running
  (process.kill_running), then dies of the same signal as it would have without the handler.
- the checker asks the kernel to kill it when its parent dies (PR_SET_PDEATHSIG, harness/checker/sandbox.c
  ppl_die_with_starter), which covers a grader killed with SIGKILL, which can do nothing itself; run_process names
  the grader's pid in PPL_DIE_WITH for the checker to check against.
- watch_starter and watch_parent: a grader started by another program (make, grader/gradescope.py, a class's
  worker started by the class) stops as on SIGTERM when that program ends, however it ended (SIGKILL included).
  A thread waits on the starter's pidfd rather than PR_SET_PDEATHSIG, which would need the starter to be the
  grader's parent itself (make's shell may stand between) and the starter's forking thread to live on (a pool's worker
  is started from whichever thread submits first).
"""
import contextlib
import os
import select
import signal
import threading

from grader.run.process import DIE_WITH_ENV, kill_running

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _stop(signum, frame):
    """Kills what runs, then dies of signum as without a handler (make and timeout(1) read the same status)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)  # timeout(1) sends SIGTERM twice: once is enough
    kill_running()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


@contextlib.contextmanager
def stop_on_signals():
    """While in it (from the main thread): SIGTERM and SIGHUP kill every program the grader runs, then the grader
    itself; the handlers it replaced come back at its end. Elsewhere than the main thread it does nothing (a test that
    calls a main from a thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _ancestors() -> set:
    """The pids above this process, parent first, up to init."""
    from grader.run.process import _parent
    seen, pid = set(), os.getppid()
    while pid not in (None, 0, 1) and pid not in seen and len(seen) < 64:
        seen.add(pid)
        pid = _parent(pid)
    return seen


def _on_end(wait, signum) -> None:
    """A daemon thread that calls wait() (which returns when the starter ended), kills every program this process
    runs, then sends it signum: SIGTERM goes through its handler where one is installed (stop_on_signals, the
    class's raise_interrupt, which writes what it can), else ends it."""
    def watch():
        try:
            wait()
        except OSError:
            pass
        kill_running()  # here already: a handler that is not stop_on_signals' may not
        os.kill(os.getpid(), signum)
    threading.Thread(target=watch, name="die-with-starter", daemon=True).start()


def _watch(starter: int, signum) -> None:
    """Stop (_on_end) once process `starter`, this one's parent or above, ends; at once when it is not there."""
    if starter not in _ancestors():  # gone already (this process was given to another), or never above it
        _on_end(lambda: None, signum)
        return
    try:
        pidfd = os.pidfd_open(starter)
    except OSError:  # gone meanwhile, or no pidfd (before Linux 5.3): then the starter's signals alone stop it
        if starter not in _ancestors():
            _on_end(lambda: None, signum)
        return
    _on_end(lambda: select.select([pidfd], [], []), signum)  # a pidfd is readable once its process has ended


def watch_starter(environ=os.environ) -> int | None:
    """When PPL_DIE_WITH names the program that started this one (make's recipe, run_process) and it is this
    process's parent or above: stop as on SIGTERM once it ends, however it ended. The variable is removed
    (run_process names this process to its own programs). The pid watched, or None."""
    try:
        starter = int(environ.pop(DIE_WITH_ENV, ""))
    except ValueError:
        return None
    if starter <= 1 or starter == os.getpid():
        return None
    _watch(starter, signal.SIGTERM)
    return starter


def watch_parent() -> None:
    """In a multiprocessing child (a class's worker, deaf to SIGTERM while idle): killed, after the programs of its
    tasks, when the parent process ends, SIGKILL included. Nothing of a worker's is left to write then: the class's
    process writes the gradebook."""
    import multiprocessing
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid:
        _watch(parent.pid, signal.SIGKILL)
