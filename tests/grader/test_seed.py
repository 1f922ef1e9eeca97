"""grader/run/seed.py: the data seed's one channel to a lab program (a pipe read through --seed-fd), and every grader
path that starts a lab program using it: the seed is in no argv the program or its children could read."""
import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

from grader.run.run import run_harness, run_harness_runs
from grader.run.seed import SEED_FD, SeedPipe, split_seed

SEED = "918273645546372819"

# A lab program that reports, as its one result line, its own command line and what --seed-fd carried.
PROGRAM = f"""#!{sys.executable} -S
import json, os, sys
args = sys.argv[1:]
def opt(name):
    return args[args.index(name) + 1] if name in args else None
seed = os.read(int(opt("--seed-fd")), 64).decode().strip() if "--seed-fd" in args else None
with open(f"/proc/{{os.getpid()}}/cmdline", "rb") as f:
    cmdline = f.read().decode()
line = {{"case": "c", "kind": "check", "status": "pass", "seed": seed, "argv": args, "cmdline": cmdline}}
out = int(opt("--result-fd"))
os.write(out, (json.dumps({{"case": "plan", "kind": "plan", "cases": ["c"]}}) + "\\n").encode())
if "--runs-fd" in args:
    lists = os.read(int(opt("--runs-fd")), 1 << 20).decode()
    line["lists"] = lists
    line["run"] = 0
    os.write(out, (json.dumps(line) + "\\n" + json.dumps({{"case": "run", "kind": "run-end", "run": 0, "exit": 0}})
                   + "\\n").encode())
else:
    os.write(out, (json.dumps(line) + "\\n").encode())
"""


class SplitSeed(unittest.TestCase):
    def test_split(self):
        self.assertEqual(split_seed(["--n", "5", "--seed", "7", "--quiet"]), (["--n", "5", "--quiet"], "7"))
        self.assertEqual(split_seed(["--n", 5]), (["--n", "5"], None))

    def test_bad_lists_are_refused(self):
        """A seed given twice or without a value is the grader's bug: refused, never passed on to argv."""
        for args in (["--seed"], ["--seed", "1", "--seed", "2"]):
            with self.assertRaises(ValueError):
                split_seed(args)

    def test_the_pipe_holds_the_seed_and_is_closed(self):
        with SeedPipe("42") as pipe:
            self.assertEqual(pipe.argv[0], SEED_FD)
            fd = int(pipe.argv[1])
            self.assertEqual(pipe.fds, [fd])
            self.assertEqual(os.read(fd, 64), b"42\n")
        with self.assertRaises(OSError):
            os.fstat(fd)
        with SeedPipe(None) as pipe:
            self.assertEqual((pipe.argv, pipe.fds), ([], []))


class NeverOnArgv(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)
        self.program = self.dir / "lab"
        self.program.write_text(PROGRAM)
        self.program.chmod(0o755)

    def assert_hidden(self, line):
        self.assertEqual(line["seed"], SEED)
        self.assertIn(SEED_FD, line["argv"])
        self.assertNotIn("--seed", line["argv"])
        self.assertNotIn(SEED, line["cmdline"])  # what /proc shows any process of the same user
        self.assertNotIn(SEED, " ".join(line["argv"]))

    def test_run_harness(self):
        o = run_harness(self.program, ["--n", "5", "--seed", SEED], timeout=30, workdir=self.dir / "one")
        self.assertEqual(o.status, "pass", o.message)
        self.assert_hidden(o.lines[0])
        self.assertNotIn(SEED, (self.dir / "one" / "output.log").read_text())

    def test_run_harness_runs(self):
        """The lists of --runs-fd lose their --seed too: the checker reads the one seed from its pipe."""
        runs = [["--n", "5", "--seed", SEED], ["--n", "7", "--seed", SEED]]
        outcomes = run_harness_runs(self.program, runs, timeouts=[10, 10], workdir=self.dir / "many")
        self.assertEqual(outcomes[0].status, "pass", outcomes[0].message)
        line = outcomes[0].lines[0]
        self.assert_hidden(line)
        self.assertNotIn(SEED, line["lists"])
        self.assertNotIn("--seed\0", line["lists"])

    def test_two_seeds_in_one_program_are_refused(self):
        with self.assertRaises(ValueError):
            run_harness_runs(self.program, [["--seed", "1"], ["--seed", "2"]], timeouts=[1, 1],
                             workdir=self.dir / "two")


if __name__ == "__main__":
    unittest.main()
