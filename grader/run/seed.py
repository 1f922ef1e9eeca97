"""The data seed's one channel to a lab program: a pipe the checker reads (--seed-fd), never the command line.

The grader writes a grading's seed into the argument lists it builds as `--seed S` (labs.toml's runs, the reruns it
prints); before a program starts, split_seed takes it out and SeedPipe hands it over: a pipe holding S, whose read
end the program gets as `--seed-fd R`. Only the lab program's checker process reads it (docs/DESIGN.md), so no argv
and no log that the student's runner can read holds it. Every grader path that starts a lab program (grader/run/run.py,
grader/sim/simulator.py) goes through here.
"""
import os

SEED = "--seed"
SEED_FD = "--seed-fd"


def split_seed(args) -> tuple:
    """(args without their `--seed S`, S as a string or None). ValueError when --seed has no value or comes twice:
    the grader's own arguments are wrong (a kit bug)."""
    args = [str(a) for a in args]
    if args.count(SEED) > 1:
        raise ValueError(f"{SEED} given {args.count(SEED)} times in {args}")
    if SEED not in args:
        return args, None
    k = args.index(SEED)
    if k + 1 >= len(args):
        raise ValueError(f"{SEED} without a value in {args}")
    return args[:k] + args[k + 2:], args[k + 1]


class SeedPipe:
    """`with SeedPipe(seed) as pipe:` a pipe holding seed (a few bytes: the pipe holds them until the program reads);
    pipe.argv is ["--seed-fd", R] (empty for seed None), pipe.fds the descriptors to pass on; R is closed at exit."""

    def __init__(self, seed):
        self.seed, self.read = seed, None

    def __enter__(self):
        if self.seed is not None:
            self.read, write = os.pipe()
            try:
                os.write(write, f"{self.seed}\n".encode())
            finally:
                os.close(write)
        return self

    @property
    def argv(self) -> list:
        return [] if self.read is None else [SEED_FD, str(self.read)]

    @property
    def fds(self) -> list:
        return [] if self.read is None else [self.read]

    def __exit__(self, *exc):
        if self.read is not None:
            os.close(self.read)
            self.read = None
        return False
