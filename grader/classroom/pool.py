"""Grading a class on this machine: the worker pools (CPU builds, one worker per GPU pinned with
CUDA_VISIBLE_DEVICES), the GPUs found, progress on stderr (n/N done, who is on which GPU, ETA)."""
import collections
import concurrent.futures as cf
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
import typing
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from grader.classroom import closing
from grader.classroom.gradebook import points_cell, write_gradebook
from grader.classroom.overrides import OverrideError
from grader.classroom.records import (EXIT_BROKEN, EXIT_INTERRUPTED, GRADEBOOK, NUDGE_SECONDS, Options, blank_row,
                                      context_key, hooks_of, recorded_row)
from grader.run import runs_ahead
from grader.run.run import run_harness
from grader.sim import sim_check
from grader.classroom.student import (complete, error_row, grade_one, labs_of, prepare, simulate, started, turn,
                                      worker_init)


# ---- GPUs ----

def visible_gpus() -> tuple:
    """(ids to pin workers to, model names): the GPUs `nvidia-smi -L` lists, or those CUDA_VISIBLE_DEVICES names."""
    smi = shutil.which("nvidia-smi")
    listed = []
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60).stdout
            listed = [ln for ln in out.splitlines() if ln.startswith("GPU ")]
        except (OSError, subprocess.TimeoutExpired):
            listed = []
    models = sorted({ln.split(": ", 1)[1].split(" (UUID")[0] for ln in listed if ": " in ln})
    ids = [str(k) for k in range(len(listed))]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and listed:
        ids = [x.strip() for x in visible.split(",") if x.strip() and x.strip() != "-1"]
    return ids, models


def graders_per_gpu(most: int, per_grader_gib: int = 16) -> int:
    """How many students may share each GPU at once when GRADERS_PER_GPU asks for `most`: one per per_grader_gib of
    the smallest GPU's memory and of this machine's memory, at most `most`, at least 1. The largest correctness run
    (2^29 + 1 elements) holds about 6 GiB on the GPU and 4 GiB on the host (the checker's input and the runner's):
    a T4's 16 GB keeps one student at a time, an 80 GB H100 on a large host takes four."""
    smi = shutil.which("nvidia-smi")
    try:
        out = subprocess.run([smi, "--query-gpu=memory.total", "--format=csv,noheader,nounits"], capture_output=True,
                             text=True, timeout=60).stdout if smi else ""
        gpu_mib = min(int(x) for x in out.split())
        host_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 1
    return max(1, min(most, gpu_mib // (per_grader_gib * 1024), int(host_gib) // per_grader_gib))


# ---- progress ----

class Progress:
    """Progress on stderr: a line as each student is done, with n/N, who is being graded where, and an ETA."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.worked = total, 0, 0
        self.start = time.monotonic()
        self.stream = stream or sys.stderr
        self.running = {}  # student -> "building" or "gpuK"

    def where(self, student: str, place: str | None) -> None:
        if place is None:
            self.running.pop(student, None)
        else:
            self.running[student] = place

    def finished(self, student: str, row: dict, unchanged: bool) -> None:
        self.done += 1
        self.worked += not unchanged
        self.running.pop(student, None)
        width = len(str(self.total))
        how = "unchanged, not regraded" if unchanged else f"{row.get('seconds', 0):.1f} s"
        score = f"{points_cell(row['total'])}/{points_cell(row['max_score'])}"
        print(f"[{self.done:>{width}}/{self.total}] {student:<24} {score:>9}  {row['status']} ({how})"
              f"{self._now()}{self._eta()}", file=self.stream, flush=True)

    def _now(self) -> str:
        gpu = sorted(f"{s}@{p}" for s, p in self.running.items() if p.startswith("gpu"))
        building = sum(1 for p in self.running.values() if p == "building")
        waiting = sum(1 for p in self.running.values() if p == "waiting")
        parts = gpu + ([f"{building} to build"] if building else []) + ([f"{waiting} built, waiting for a GPU"]
                                                                        if waiting else [])
        return f" | now: {', '.join(parts)}" if parts else ""

    def _eta(self) -> str:
        left = self.total - self.done
        if not left:
            return ""
        if not self.worked:
            return " | ETA ?"
        seconds = (time.monotonic() - self.start) / self.done * left
        return f" | ETA {int(seconds // 60)}m{int(seconds % 60):02d}s"


# ---- grading a class on this machine ----

class Job(typing.NamedTuple):
    """A task of a class run in one of its pools: kind (prepare, simulate, turn, complete; grade: a student whole,
    without a GPU), whose, the Pool and its executor when submitted, the GPU slot of a turn, the Turn a complete
    finishes (to try it again)."""

    kind: str
    entry: object
    pool: object
    executor: object = None
    gpu: int | None = None
    turn: object = None


class Pool:
    """A process pool that is made again when one of its workers dies (a worker killed for memory, say)."""

    def __init__(self, workers: int, gpu=None, cores=None, background=False):
        self.workers, self.gpu, self.cores, self.background = workers, gpu, cores, background
        self.executor = self._new()

    def _new(self):
        return cf.ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                      initializer=worker_init, initargs=(self.gpu, self.cores, self.background))

    def submit(self, fn, *args):
        try:
            return self.executor.submit(fn, *args)
        except BrokenProcessPool:
            self.renew()
            return self.executor.submit(fn, *args)

    def renew(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.executor = self._new()

    def shutdown(self, cancel: bool = False) -> None:
        self.executor.shutdown(wait=True, cancel_futures=cancel)


def stop_workers(pools=(), grace: float = 30.0) -> None:
    """After Ctrl-C or SIGTERM: each busy worker is told to stop its task (its harness or compiler is killed), the
    pools are shut down, and a worker still there after grace seconds is killed. Further signals are ignored
    meanwhile (timeout(1) sends its SIGTERM twice): cut short, the cleanup would leave workers that keep the
    interpreter from exiting."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for worker in multiprocessing.active_children():  # a busy one stops its task; an idle one ignores it
        try:
            os.kill(worker.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for pool in pools:
        pool.executor.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + grace
    for worker in multiprocessing.active_children():
        worker.join(max(0.0, deadline - time.monotonic()))
    for worker in multiprocessing.active_children():
        worker.kill()
        worker.join()


def continue_workers() -> None:
    """SIGCONT to every worker process: one that a student's program stopped (SIGSTOP, without the sandbox that
    forbids it) goes on, and its own timeouts fire, instead of holding the class for good."""
    for worker in multiprocessing.active_children():
        try:
            os.kill(worker.pid, signal.SIGCONT)
        except (ProcessLookupError, PermissionError):
            pass


def grade_class(entries, options: Options, jobs: int, gpu_ids: list, log=None, stream=None, others=()) -> int:
    """Grades every entry (the harness already built), then writes the gradebook and what follows it
    (grader/classroom/closing.py); returns the exit status. others: students of the class not graded in this run
    (make grade-class ONLY=...), whose rows come from their records."""
    log = log or (lambda message: print(message, file=sys.stderr, flush=True))
    labs = labs_of(options)
    context = context_key(options, labs)
    out = Path(options.out)
    try:
        table = closing.load_overrides(options, labs, [*entries, *others])
    except OverrideError as e:
        log(f"grader.classroom: the overrides cannot be used, nothing was graded:\n{e}")
        return EXIT_BROKEN
    rows = {e.student: recorded_row(options, e, labs, "not graded in this run, and no record") for e in others}
    progress = Progress(len(entries), stream)
    cpu = Pool(max(1, jobs), cores=max(1, runs_ahead.cores() // max(1, jobs)),  # the simulator's runs: a share each
               background=bool(gpu_ids))  # behind the GPU turns' own CPU work
    slots = [gpu for gpu in gpu_ids for _ in range(max(1, options.graders_per_gpu))]  # a worker each: its GPU
    gpus = [Pool(1, gpu) for gpu in slots]
    for pool in gpus:  # each GPU's worker starts (a fresh interpreter, the grader imported) while the builds run
        pool.submit(started)
    idle = list(range(len(gpus)))
    ready = collections.deque()  # (entry, Prepared) waiting for a GPU
    pending = {}  # future -> Job
    retried = set()
    by_student = {e.student: e for e in entries}
    prepared_of, turns, sims = {}, {}, {}  # student -> Prepared; Turn; the simulator's verdicts (simulate)

    def submit(job: Job, fn, *args):
        pending[job.pool.submit(fn, *args)] = job._replace(executor=job.pool.executor)

    def submit_cpu(entry):  # with GPUs: the build and static checks, then the simulator's check as a job apart
        if gpus:
            submit(Job("prepare", entry, cpu), prepare, options, entry, context, True)
        else:
            submit(Job("grade", entry, cpu), grade_one, options, entry, context)
        progress.where(entry.student, "building")

    def dispatch():
        while ready and idle:
            k = idle.pop(0)
            entry, prepared = ready.popleft()
            submit(Job("turn", entry, gpus[k], gpu=k), turn, options, entry, prepared)
            progress.where(entry.student, f"gpu{slots[k]}")

    def complete_when_ready(entry):  # the turn is over and the simulator's check (if any) too: the folder's writing
        prepared = prepared_of[entry.student]
        if entry.student in turns and (not prepared.sim_apart or entry.student in sims):
            done_turn = turns.pop(entry.student)
            submit(Job("complete", entry, cpu, turn=done_turn), complete, options, entry, prepared, done_turn,
                   sims.get(entry.student))

    def done(entry, row, unchanged):
        rows[entry.student] = row
        progress.finished(entry.student, row, unchanged)
        closing.mark_outputs(options, closing.final_row(row, table, labs))
        write_gradebook(out / GRADEBOOK, [closing.final_row(r, table, labs) for r in rows.values()], labs)

    def failed(job: Job, error: BaseException) -> None:
        """A job that raised: a broken pool (a worker died, perhaps on another student's job) tries a prepare or a
        complete once more; a simulator's check that failed leaves the GPU's verdict alone, saying so; anything
        else gives the student an error row and the class goes on."""
        broken = isinstance(error, BrokenProcessPool)
        if broken and job.pool.executor is job.executor:
            job.pool.renew()
        if not broken:  # a grader bug on this student: say so, go on with the class
            traceback.print_exception(error, file=sys.stderr)
        if job.kind == "simulate":
            why = f"the check failed ({type(error).__name__}: {error})"
            sims[job.entry.student] = {lab.name: sim_check.Verdict("error", message=why) for lab in labs}
            complete_when_ready(job.entry)
            return
        if broken and job.kind in ("prepare", "grade", "complete") and job.entry.student not in retried:
            retried.add(job.entry.student)
            if job.kind == "complete":
                turns[job.entry.student] = job.turn
                complete_when_ready(job.entry)
            else:
                submit_cpu(job.entry)
            return
        done(job.entry, error_row(job.entry, labs, error), False)

    similar = None  # the similarity report's future (closing.start_similarity), False for none
    try:
        for entry in entries:
            submit_cpu(entry)
        while pending:
            finished, _ = cf.wait(pending, timeout=NUDGE_SECONDS, return_when=cf.FIRST_COMPLETED)
            continue_workers()
            for future in finished:
                job = pending.pop(future)
                if job.gpu is not None:
                    idle.append(job.gpu)
                try:
                    result = future.result()
                except Exception as e:
                    failed(job, e)
                    continue
                if job.kind in ("grade", "prepare") and result.row is not None:
                    done(job.entry, result.row, result.unchanged)
                elif job.kind == "prepare":
                    prepared_of[job.entry.student] = result
                    ready.append((job.entry, result))
                    progress.where(job.entry.student, "waiting")
                    if result.sim_apart:
                        submit(Job("simulate", job.entry, cpu), simulate, options, job.entry, result)
                elif job.kind == "simulate":
                    sims[job.entry.student] = result
                    complete_when_ready(job.entry)
                elif job.kind == "turn":
                    turns[job.entry.student] = result
                    progress.where(job.entry.student, "finishing")
                    complete_when_ready(job.entry)
                else:  # complete: the row
                    done(job.entry, result, False)
            dispatch()
            if similar is None and not any(job.kind in ("prepare", "grade") for job in pending.values()):
                similar = closing.start_similarity(options, labs) or False  # every upload is unpacked
    except KeyboardInterrupt:
        log("\ninterrupted: stopping the workers (what is graded is kept; run the same command again to go on)")
        stop_workers([cpu, *gpus])
        missing = [by_student[s] for s in by_student if s not in rows]
        all_rows = list(rows.values()) + [blank_row(e, labs, "not graded", "interrupted") for e in missing]
        write_gradebook(out / GRADEBOOK, [closing.final_row(r, table, labs) for r in all_rows], labs)
        return EXIT_INTERRUPTED
    for pool in (cpu, *gpus):
        pool.shutdown()
    return closing.close(list(rows.values()), options, labs, table, log, similar=similar or None)

def build_harnesses(options: Options, log) -> str:
    """Builds the harness of every graded pattern once, before any student; returns the error, or ""."""
    for pattern in dict.fromkeys(lab.pattern for lab in labs_of(options)):
        log(f"building the {pattern} harness")
        built = hooks_of(options).build_harness(Path(options.kit), pattern, timeout=options.build_timeout,
                                                harness_build=options.harness_build)
        if not built.ok:
            return built.message
    # the objects of the simulator's check (grader/sim/sim_check.py), once, where it runs: a class on a GPU
    if options.simulator_check and options.mode == "gpu" and hooks_of(options).run is run_harness:
        from grader.sim.simulator import build_harness_sim
        for pattern in dict.fromkeys(lab.pattern for lab in labs_of(options)):
            built = build_harness_sim(Path(options.kit), pattern, timeout=options.build_timeout)
            if not built.ok:  # the kit's problem, never a student's points: each lab is graded on the GPU alone
                log(f"the {pattern} harness for the simulator's check does not build (every student is graded on "
                    f"the GPU alone): {(built.message.splitlines() or [''])[0]}")
    return ""
