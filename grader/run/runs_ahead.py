"""A lab's simulator runs started ahead, side by side, for a grading that takes their outcomes one at a time in its
own order (grader/sim/simulator.py's SimPlatform: make grade SIM=1, and the simulator's check of a GPU grading).

The simulator is CPU-bound and a lab's correctness groups are many small runs (lab 03: 25 dataset cases, each run
in order and under three adversarial schedules, grader/sim/schedules.py), which a grading makes one after the other,
stopping at the first that does not pass. RunsAhead starts every run the grading may make (each case in order and
under its schedules, every group the simulator can take) at once, in a pool of threads (RunPool) that keeps as
many going as it may; the grading then asks for each run as before and gets its outcome as soon as that run has
ended. So the verdict is the one the runs made one at a time would give:

- a run is taken only where the grading would have made it, with the same program, arguments and folder (anything
  else is run there and then, as without RunsAhead);
- what the grading never takes (the runs after a failure or a hang, a schedule of a case that failed in order) is
  stopped, and its folder removed, so that nothing is scored from a run the grading did not make (the hazard row
  reads every run's report: grader/sim/simulator.py's grade_sanitizers).

How many run at once (ahead_jobs): in make grade SIM=1, one per core, every lab's runs in one pool (shared_pool);
in a GPU grading's simulator check (grader/sim/sim_check.py), half the cores, the other half being the GPU runs' host
side, and at a lower CPU priority (background()); in a class run's build worker, its share of the cores
(set_share), halved for a simulator check. Where that is one, the lab programs run one after another.

Runs in one program (start_lists). Starting a run costs more than a small case's simulation: the checker, two
bubblewraps, the runner and the device program, about 25 ms, of which the simulation is 2 ms, and a lent 16-core
GPU machine started such runs only 1.7 times faster 16 at a time than one at a time. So SimPlatform starts a lab's
cases as four lab programs of many argument lists each (grader/sim/simulator.py's run_lists_sim: the checker's
--runs-fd), and a list's outcome is taken only where every list before it in its program passed: a list then ran
on a device and a runner nothing had gone wrong in, its report and its schedule's launch numbers started afresh
(docs/DESIGN.md, --runs-fd). What the grading asks for after a failure is run there and then, one at a time. A
schedule's program gets case K's list only once case K passed in order (start_lists's after): so, on one core too
(a class run's build worker, RunPool(1): the programs one after another), a case that hangs is spun once. Lab 03
on this kit's 2-core machine: 100 runs of its 25 dataset cases one after another, 4.0 s (3.0 s once run_process
waited on a pidfd); the lab's correctness on the simulator, 4.7 s of runs two at a time, 2.8 s in four programs.
"""
import concurrent.futures
import os
import shutil
import threading
from pathlib import Path

_SHARED = None
_SHARED_LOCK = threading.Lock()
_SHARE = None  # set_share's cores, where a process has a share of the machine


def cores() -> int:
    """The cores this process may use (a container's cpuset), else the machine's."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def set_share(share: int) -> None:
    """This process has share cores of the machine (a class run's build worker: grader/classroom/pool.py), not all
    of them. Before its first grading."""
    global _SHARE
    _SHARE = max(1, share)


def share() -> int:
    """The cores this process has: set_share's, else all it may use."""
    return _SHARE if _SHARE is not None else cores()


def ahead_jobs(cpus: int | None = None) -> int:
    """How many simulator runs go at once on cpus cores (default: this process's share): one per core (1: nothing
    ahead). Not more: a hung kernel's runs spin to the simulator's instruction limit, each slower beside the others
    (lab 03's runs on this kit's 2-core machine, idle: passing, 6.9 s one at a time and 5.3 s two at a time; hung,
    4.4 s and 4.5 s; three at a time gained nothing on the passing lab and cost the hung one 7.1 s)."""
    return max(1, share() if cpus is None else cpus)


BACKGROUND_NICE = 10  # what background() adds to a thread's nice value


def background() -> None:
    """Lowers the calling thread's CPU priority by BACKGROUND_NICE (Linux keeps a nice value per thread, and the
    processes a thread starts inherit it): a GPU grading's simulator check (grader/sim/sim_check.py) is CPU work beside
    the GPU side's, whose own CPU work (the checker's inputs and checks, OpenMP's threads, nvcc, compute-sanitizer) is
    on the grading's critical path. On a lent 16-core H200 machine, lab 03's 2^29-element correctness run took 1.4 s
    alone and 4.3 s beside the simulator's check at the same priority. Where it cannot be changed, nothing happens."""
    try:
        who = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, who, min(19, os.getpriority(os.PRIO_PROCESS, who) + BACKGROUND_NICE))
    except (AttributeError, OSError):
        pass


class RunPool:
    """Where runs ahead run: jobs threads (one: the lab programs one after another; 0: none, every run a program of
    its own made when the grading asks for it, the reference the tests compare with); background: the threads, and
    so the runs, at a lower CPU priority (background())."""

    def __init__(self, jobs: int, background: bool = False):
        self.jobs = max(0, jobs)
        self.executor = (concurrent.futures.ThreadPoolExecutor(self.jobs, thread_name_prefix="sim-run",
                                                               initializer=_background if background else None)
                         if self.jobs else None)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)


_background = background  # RunPool's initializer (its argument shadows the name)


def shared_pool() -> RunPool:
    """This process's RunPool, ahead_jobs() wide (make grade SIM=1: every lab's runs share it)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = RunPool(ahead_jobs())
        return _SHARED


class _Any:
    """An event set when any of some is (run_process's cancel reads is_set() alone); None stands for one never set."""

    def __init__(self, *events):
        self.events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)


def any_of(*events):
    """A cancel for run_process that is set when any of events is (None: never set)."""
    return _Any(*events)


class _Lists:
    """The runs of one lab program started with several argument lists (start_lists): its future's result is an
    Outcome per list, in order; ready holds those the program told of before its end (ready())."""

    def __init__(self, folder, save, group):
        self.future, self.folder, self.save, self.group = None, folder, save, group
        self.stop = threading.Event()  # set once the grading went past the group
        self.ready_outcomes = {}
        self.changed = threading.Condition()

    def ready(self, index: int, outcome) -> None:
        """run_lists's on_ready: list index passed, and is over."""
        with self.changed:
            self.ready_outcomes[index] = outcome
            self.changed.notify_all()

    def outcome(self, index: int):
        """List index's outcome as soon as it is known: told ready, or the program's end; None if it never ran."""
        with self.changed:
            self.changed.wait_for(lambda: index in self.ready_outcomes or self.future.done())
            if index in self.ready_outcomes:
                return self.ready_outcomes[index]
        try:
            outcomes = self.future.result()
        except concurrent.futures.CancelledError:
            return None
        return outcomes[index] if outcomes else None

    def passed(self, index: int) -> bool:
        """Whether list index passed, waiting until it is known (False: it did not, or never ran)."""
        outcome = self.outcome(index)
        return outcome is not None and outcome.passed

    def done(self, _future) -> None:
        with self.changed:
            self.changed.notify_all()


class RunsAhead:
    """The runs of one lab's grading started ahead (the module docstring says how and why) in pool. run: the
    grading's run function (grader/sim/simulator.py's run_harness_sim, perhaps with a cancel bound: it is kept and also
    stopped when a run is not taken)."""

    def __init__(self, run, pool):
        self.run = getattr(run, "func", run)
        self.bound = dict(getattr(run, "keywords", {}) or {})
        self.lab_cancel = self.bound.pop("cancel", None)
        self.stopped = threading.Event()
        self.pool = pool  # a ThreadPoolExecutor (RunPool.executor)
        self.calls = {}  # (workdir, schedule) -> (program, args, kwargs, future, its own stop), in the grading's order
        self.listed = {}  # (workdir, schedule) -> (program, args, kwargs, _Lists, index): runs in one program
        self.lists = []  # the _Lists started
        self.taken = set()  # the keys the grading asked for, or went past

    @staticmethod
    def _key(workdir, env) -> tuple:
        return str(Path(workdir)), (env or {}).get("PPL_SIM_SCHEDULE", "")

    @staticmethod
    def _what(program, args, kwargs) -> tuple:
        """What must match between a run started ahead and the grading's call (its time limit need not: the
        simulator's check lowers it as its share of time is spent)."""
        return str(program), [str(a) for a in args], {k: v for k, v in kwargs.items() if k != "timeout"}

    def start(self, program, args, *, workdir, env=None, **kwargs) -> None:
        """Starts run(program, args, workdir=, env=, **kwargs) in the pool (the call the grading will make)."""
        key = self._key(workdir, env)
        if key in self.calls:
            return
        mine = threading.Event()
        call = dict(self.bound, **kwargs, workdir=workdir, env=env, cancel=_Any(mine, self.stopped, self.lab_cancel))
        future = self.pool.submit(self._one, program, list(args), call)
        self.calls[key] = (*self._what(program, args, kwargs), future, mine)

    def start_lists(self, run_lists, program, calls, *, folder, save, group=0, after=None, **kwargs):
        """Starts the runs calls ((args, workdir, env, timeout, program_args) each: the grading's call, and the
        argument list the program gets for it) in one lab program: run_lists(program, [program_args...], timeouts=,
        workdir=folder, cancel=, on_ready=, **kwargs) -> an Outcome per list (grader/sim/simulator.py's run_lists_sim;
        on_ready(k, outcome): list k passed and is over, before the program ends). take() hands out a list's
        outcome, as soon as it is known, only where every list before it in that program passed, so that a list
        runs on a process that nothing has gone wrong in, as a run alone would (a crash, a sticky CUDA error or a
        fault of an earlier list may change what a later one does); after a failure the grading runs what it asks
        for itself. save(outcome, workdir, folder) writes a taken list's files where the grading's run would
        have. group: a number that grows in the grading's order (a lab's correctness group): once the grading asks
        for a run of a later group, the programs of the earlier ones are stopped. after: what an earlier call
        returned, whose lists stand in the same order: list k goes to this program only once list k there passed
        (run_lists's gate), as the grading runs a case's schedules only once it passed in order, so that a case
        that hangs in order is not spun under every schedule too. Returns what after takes, or None when calls
        were all started already."""
        calls = [c for c in calls if self._key(c[1], c[2]) not in self.calls and self._key(c[1], c[2]) not in
                 self.listed]
        if not calls:
            return None
        lists = _Lists(folder, save, group)
        call = dict(self.bound, **kwargs, timeouts=[c[3] for c in calls], workdir=folder,
                    cancel=_Any(self.stopped, self.lab_cancel, lists.stop), on_ready=lists.ready)
        if after is not None:
            call["gate"] = after.passed
        lists.future = self.pool.submit(self._many, run_lists, program, [c[4] for c in calls], call)
        lists.future.add_done_callback(lists.done)
        self.lists.append(lists)
        for index, (args, workdir, env, *_) in enumerate(calls):
            self.listed[self._key(workdir, env)] = (*self._what(program, args, kwargs), lists, index)
        return lists

    def _many(self, run_lists, program, lists, call):
        if call["cancel"].is_set():
            return None
        return run_lists(program, lists, **call)

    def _take_listed(self, key, program, args, workdir, kwargs):
        """take() of a run started in one program with others (start_lists)."""
        *what, lists, index = self.listed[key]
        self.taken.add(key)
        for other in self.lists:
            if other.group < lists.group:
                other.stop.set()
        if tuple(what) != self._what(program, args, kwargs):
            return None
        earlier = [lists.outcome(k) for k in range(index)]
        outcome = lists.outcome(index)
        if outcome is None or outcome.status == "not-run" or not all(o is not None and o.passed for o in earlier):
            return None
        lists.save(outcome, workdir, lists.folder)
        return outcome

    def _one(self, program, args, call):
        if call["cancel"].is_set():
            return None
        return self.run(program, args, **call)

    def take(self, program, args, *, workdir, env=None, **kwargs):
        """The outcome of the run started as this call, once it has ended; None when no run was started for this
        folder, or not with these arguments (a prediction that missed: that run is let end first), or it never
        started: the caller then runs it itself. Either way the folder is the grading's from now on."""
        key = self._key(workdir, env)
        if key in self.listed and key not in self.taken:
            return self._take_listed(key, program, args, workdir, kwargs)
        started = self.calls.get(key)
        if started is None or key in self.taken:
            return None
        self._pass_before(key)
        self.taken.add(key)
        outcome = started[3].result()
        return outcome if started[:3] == self._what(program, args, kwargs) else None

    def _pass_before(self, key) -> None:
        """The grading asks for key: it went past every run started before it that it did not ask for (a group
        ended at a failure, a case failed in order), which it will never ask for. They are stopped now, so that
        the runs it waits for come sooner (their folders go at close)."""
        for earlier, (*_, future, mine) in self.calls.items():
            if earlier == key:
                return
            if earlier not in self.taken and not mine.is_set():
                mine.set()
                future.cancel()

    def close(self) -> None:
        """Stops every run not taken (those not started never start; those running are killed), waits for them,
        and removes their folders."""
        self.stopped.set()
        for key, (*_, future, _) in self.calls.items():
            if key not in self.taken:
                future.cancel()
        for lists in self.lists:
            lists.future.cancel()
        concurrent.futures.wait([future for *_, future, _ in self.calls.values()] +
                                [lists.future for lists in self.lists])
        for key in self.calls:
            if key not in self.taken:
                shutil.rmtree(key[0], ignore_errors=True)
