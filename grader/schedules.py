"""The simulator's adversarial schedules, for grading: a correctness case that passes in order runs again under
three other orders a GPU may choose (sim/README.md, "Execution model"; sim.h, sim_set_schedule):

    interleave:SEED   two blocks at once, the warp that runs next picked at random after every memory access,
                      lanes of a warp apart now and then, stores visible to other SMs late and out of order
    reverse:SEED      blocks one at a time from the last blockIdx to the first (a block that waits for a later one
                      is a forward-progress bug), store buffers
    random:SEED       blocks in a random order, 8 to 64 at once, warps switched at random points, lanes apart,
                      store buffers

so that ordering, fence and forward-progress bugs that the in-order schedule lets pass lose the case's points. Each
SEED comes from the case (lab, run tag and arguments) through CRC-32: a regrade runs the same schedules and gives
the same score, and the failure's message names the schedule that replays it (PPL_SIM_SCHEDULE=..., make sim
SCHEDULE=...).
"""
import concurrent.futures
import os
import re
import zlib

KINDS = ("interleave", "reverse", "random")
ENV = "PPL_SIM_SCHEDULE"
SPEC = re.compile(r"inorder|(?:interleave|reverse|random)(?::\d{1,20})?")


def case_schedules(lab: str, tag: str, args) -> list:
    """The adversarial schedules of one case ("interleave:SEED", ...), their seeds derived from lab, tag and args
    (less a --seed and its value: the data's seed, which a grading may draw anew)."""
    args = [str(a) for a in args]
    while "--seed" in args[:-1]:
        k = args.index("--seed")
        del args[k:k + 2]
    key = "\0".join([lab, tag, *args])
    return [f"{kind}:{zlib.crc32(f'{key}/{kind}'.encode())}" for kind in KINDS]


def check_spec(spec: str) -> str:
    """spec when it is a schedule the simulator takes (inorder, interleave:SEED, reverse[:SEED], random:SEED), else
    ValueError saying which forms are."""
    if not SPEC.fullmatch(spec or ""):
        raise ValueError(f"unknown schedule {spec!r}: use inorder (the default), interleave:SEED, reverse, "
                         f"reverse:SEED or random:SEED, SEED a decimal number")
    return spec


def schedule_env(spec: str) -> dict:
    """The environment that makes the simulator run under spec."""
    return {ENV: check_spec(spec)}


def failed_under(outcome, spec: str) -> None:
    """Says in a failed outcome's message (in place) that it failed under schedule spec, not in order."""
    outcome.schedule = spec
    outcome.message = (f"under the schedule {spec} (the case passed in order; this order of blocks and warps is "
                       f"one a GPU may choose too: an ordering, fence or forward-progress bug): {outcome.message}")


def schedule_jobs(cpus: int | None = None) -> int:
    """How many of a case's schedules run at once: all three wherever there is more than one core. A simulated run
    spends much of its time starting its three processes and waiting on their pipes, so even 2 cores gain: the
    simulator's check of lab 05's reference took 25.7 s one schedule at a time and 12.1 s three at a time on this
    kit's 2-core CI machine (with other tests beside it)."""
    if cpus is None:  # the cores this process may use (a container's cpuset), else the machine's
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return len(KINDS) if cpus >= 2 else 1


def run_schedules(run, lab: str, tag: str, program, args, *, timeout: float, workdir, case_args=None, jobs=None,
                  **kwargs):
    """Runs one case (the program's arguments args) under each of its adversarial schedules (run:
    grader.simulator.run_harness_sim, each in workdir/SCHEDULE); returns the outcome of the first, in KINDS's order,
    that does not pass (failed_under applied), or None when all passed. The seeds come from lab, tag and case_args
    (default args). jobs (default schedule_jobs()): how many run at once; one at a time stops at the first failure,
    several give the same verdict (the first failure in order, whichever ended first)."""
    specs = case_schedules(lab, tag, args if case_args is None else case_args)

    def one(spec):
        return run(program, args, timeout=timeout, workdir=workdir / spec.replace(":", "-"), env=schedule_env(spec),
                   **kwargs)

    jobs = schedule_jobs() if jobs is None else jobs
    if jobs > 1:
        with concurrent.futures.ThreadPoolExecutor(min(jobs, len(specs))) as pool:
            outcomes = list(zip(specs, pool.map(one, specs)))
    else:
        outcomes = ((spec, one(spec)) for spec in specs)  # lazily: no schedule after the first failure
    for spec, outcome in outcomes:
        if not outcome.passed:
            failed_under(outcome, spec)
            return outcome
    return None
