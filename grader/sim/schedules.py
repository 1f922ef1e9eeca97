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


def run_schedules(run, lab: str, tag: str, program, args, *, timeout: float, workdir, case_args=None, **kwargs):
    """Runs one case (the program's arguments args) under each of its adversarial schedules, in KINDS's order (run:
    grader.sim.simulator's run, each in workdir/SCHEDULE), up to the first that does not pass; returns that outcome
    (failed_under applied), or None when all passed. The seeds come from lab, tag and case_args (default args).
    Where there is more than one core the runs were started ahead, side by side (grader/run/runs_ahead.py): run then
    hands back their outcomes."""
    for spec in case_schedules(lab, tag, args if case_args is None else case_args):
        outcome = run(program, args, timeout=timeout, workdir=workdir / spec.replace(":", "-"),
                      env=schedule_env(spec), **kwargs)
        if not outcome.passed:
            failed_under(outcome, spec)
            return outcome
    return None
