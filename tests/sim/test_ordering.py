"""The simulator's schedules against ordering, fence and forward-progress bugs (tests/run.py's `sim` suite, no GPU):
each bug of tests/sim/ordering/variants.toml, a reference solution with one such bug, loses correctness points when
graded on the simulator (python3 -m grader --simulator: each case in order, then under three adversarial schedules),
with a message naming the schedule that replays it where the bug passes in order, and the finding that names it
where only the simulator's checks see it (two streams with nothing ordering them, a shuffle reading lanes outside
its mask: issue 20); each correct variant there (other block sizes, two fenced status words, __syncthreads_count, a
__syncwarp()ed shared-memory tail, a fenced last-block reduction, threads that return before the barriers, a million
near-empty blocks) keeps every correctness point the simulator can give. The reference solutions themselves are graded
the same way by tests/sim/test_sim.py.

Needs nvcc (skipped, saying so, without it). Each variant is graded once, its lab only, in a temporary build folder
(the harness objects are shared), without the performance row's counts (test_sim.WithoutCounts): about 2
minutes on 2 cores.
"""
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.sim import simulator
from grader.patterns import KIT
from grader.run.runs_ahead import RunPool
from tests.sim.test_sim import SimGrading, sim_grader
from tools.instructor.variants.wrong import mutations, submission
from tests.timing import slow

HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None
TABLE = Path(__file__).resolve().parent / "ordering" / "variants.toml"
CORRECTNESS = ("datasets", "edge sizes", "exact integer data")  # rows a bug's wrong results can lose
# What the sanitizers row names for the bugs found by a finding rather than a wrong result (issue 20): two streams
# with nothing ordering them, a shuffle reading lanes outside its mask.
FINDING_OF = {"stream": r"\[stream-race\] kernel reduce_kernel\(.*reduce\.cu:\d+ and cudaMemsetAsync on stream \d",
              "shuffle": r"\[shfl-outside-mask\] kernel reduce_kernel\(.*reduce\.cu:\d+ .*lane 0 read lane 16"}


class Table(unittest.TestCase):
    def test_the_table(self):
        table = mutations(TABLE)
        bugs = [n for n, v in table.items() if v.get("bug")]
        self.assertGreaterEqual(len(bugs), 8)
        self.assertGreaterEqual(len({table[n]["lab"] for n in bugs} & {"04-unrolled", "05-coarsened", "06-scan",
                                                                       "07-compact", "08-single-pass"}), 5)
        for name, v in table.items():
            with self.subTest(variant=name):
                self.assertNotEqual(bool(v.get("bug")), bool(v.get("correct")), "a bug or correct, not both")
                self.assertIn(v.get("inorder", "passes"), ("passes", "fails"))
                self.assertTrue((KIT / "solutions" / v["lab"] / v["file"]).is_file())


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class Ordering(SimGrading):
    TMP_PREFIX = "ppl-sim-ordering-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.SimGrader = staticmethod(functools.partial(sim_grader, counts=False))  # the performance row is not read
        table = mutations(TABLE)

        def grade(name):
            folder = submission(name, Path(cls.tmp.name) / "variants", table=TABLE)
            grader = cls.SimGrader(cls.config, folder, build_dir=str(Path(cls.tmp.name) / name), seed=12345)
            return name, grader.grade(cls.config.select(table[name]["lab"][:2]))

        with ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) // 2)) as pool:
            cls.reports = dict(pool.map(grade, [n for n in table if not table[n].get("direct")]))
        cls.table = {n: v for n, v in table.items() if not v.get("direct")}

    def rows(self, name):
        return [r for r in self.reports[name].results if r.name in CORRECTNESS and r.status != simulator.NEEDS_GPU]

    def test_bugs_lose_correctness_points(self):
        for name, v in self.table.items():
            if not v.get("bug"):
                continue
            with self.subTest(bug=name):
                rows = self.rows(name)
                self.assertTrue(rows, f"{name}: no correctness row ran")
                lost = [r for r in rows if not r.full]
                self.assertTrue(lost, f"{name}: kept every correctness point:\n" +
                                "\n".join(f"{r.name}: {r.summary}" for r in rows))
                said = "\n".join(f"{r.summary}\n{r.detail}" for r in lost)
                if v.get("inorder") == "passes":  # only another order shows it, and the grader says which
                    why = (f"{name}: variants.toml says inorder = \"passes\", so only another "
                           f"schedule should fail it, but the grader's rows name none; if the in-order run fails it "
                           f"too, set inorder = \"fails\" (docs/AUTHORING.md, \"A wrong variant\"):\n{said[:2000]}")
                    self.assertIn("under the schedule ", said, why)
                    self.assertRegex(said, r"make sim LAB=\d\d .*SCHEDULE=(interleave|reverse|random):\d+ ARGS=", why)
                if v["bug"] == "forward-progress":
                    self.assertIn("forward-progress bug", said, f"{name}: {said[:2000]}")
                if v["bug"] == "race":
                    self.assertRegex(said, r"global-race-inter-warp\].*reduce\.cu:\d+ and reduce\.cu:\d+",
                                     f"{name}: {said[:2000]}")
                if v["bug"] in FINDING_OF:  # a hazard the GPU's tools do not see: the simulator's finding says it
                    sanitizers = next(r for r in self.reports[name].results if r.name == "sanitizers")
                    self.assertEqual(sanitizers.status, "FAIL", f"{name}: {sanitizers.summary}")
                    self.assertRegex(sanitizers.summary, FINDING_OF[v["bug"]], f"{name}: {sanitizers.summary}")

    def test_correct_variants_keep_their_points(self):
        for name, v in self.table.items():
            if not v.get("correct"):
                continue
            with self.subTest(variant=name):
                rows = self.rows(name)
                self.assertTrue(rows, f"{name}: no correctness row ran")
                for r in rows:
                    self.assertTrue(r.full, f"{name}: {r.name}: {r.summary}\n{r.detail}")


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class RunsAheadSameVerdict(SimGrading):
    """A lab's runs in lab programs of many lists (grader/run/runs_ahead.py), one program after another or side by side,
    give the verdict of the runs made one at a time, each a program of its own: a bug that fails under a schedule in the
    middle of a group, graded both ways, gets the same rows, and the same runs leave their reports (the hazard row reads
    them all)."""

    TMP_PREFIX = "ppl-sim-ahead-"
    VARIANT = "04-volatile-no-syncwarp"

    def grade(self, tag, jobs):
        folder = submission(self.VARIANT, Path(self.tmp.name) / "variant", table=TABLE)
        build_dir = Path(self.tmp.name) / tag
        pool = RunPool(jobs)
        try:
            grader = self.SimGrader(self.config, folder, build_dir=str(build_dir), seed=12345, run_pool=pool)
            report = grader.grade(self.config.select(mutations(TABLE)[self.VARIANT]["lab"][:2]))
        finally:
            pool.close()
        rows = [(r.name, r.score, r.status, r.summary, r.detail.replace(str(build_dir), "BUILD"))
                for r in report.results if r.name != "performance"]
        reports = sorted(str(p.relative_to(build_dir)) for p in build_dir.glob("*/runs/*/sim-report.json"))
        return rows, reports

    def test_ahead_or_one_at_a_time(self):
        one_rows, one_reports = self.grade("one", 0)  # every run a program of its own, one at a time
        self.assertTrue(any(r[2] != "pass" for r in one_rows), one_rows)  # the bug lost points
        for tag, jobs in (("programs one after another", 1), ("programs side by side", 4)):
            rows, reports = self.grade(tag.replace(" ", "-"), jobs)  # a lab's cases in lab programs of many lists
            self.assertEqual(rows, one_rows, tag)
            self.assertEqual(reports, one_reports, tag)


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class DirectRuns(unittest.TestCase):
    """The table's `direct` variants: one run of the lab program in order (make sim's), with the grader's instruction
    budget (PPL_SIM_MAX_INSTRUCTIONS, grader/sim/simulator.py), which passes: lab 07 launching n + 127 blocks, about a
    million near-empty ones at n = 2^20 + 1, needs about 84 million warp instructions per launch, more than the
    budget of 30 million, and is neither a hang nor out of its budget, which grows with the threads launched
    (issue 20: it was "TIMEOUT ... it probably loops forever")."""

    @slow  # 47 s on 2 cores (tests/timing.py: over about 20 s, make test-all's)
    def test_direct_variants_pass_in_order(self):
        table = mutations(TABLE)
        direct = [n for n, v in table.items() if v.get("direct")]
        self.assertTrue(direct)
        env = {**os.environ, "PPL_SIM_MAX_INSTRUCTIONS": str(simulator.SIM_MAX_INSTRUCTIONS)}
        env.pop("PPL_SIM_SCHEDULE", None)
        with tempfile.TemporaryDirectory(prefix="ppl-sim-direct-") as tmp:
            for name in direct:
                with self.subTest(variant=name):
                    folder = submission(name, Path(tmp), table=TABLE)
                    proc = subprocess.run([sys.executable, "-m", "tools.student.sim", "--lab", table[name]["lab"][:2],
                                           "--submission", str(folder), "--args", " ".join(table[name]["args"]),
                                           "--no-estimate"], cwd=KIT, capture_output=True, text=True, timeout=900,
                                          env=env)
                    out = proc.stdout + proc.stderr
                    self.assertEqual(proc.returncode, 0, out[-3000:])
                    self.assertIn("PASS", proc.stdout, out[-3000:])
                    for words in ("loops forever", "loop that does not end", "budget exhausted", "TIMEOUT"):
                        self.assertNotIn(words, out, out[-3000:])


if __name__ == "__main__":
    unittest.main()
