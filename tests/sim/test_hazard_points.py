"""Hazards cost points on the simulator (issue 11), and the sanitizers row says what happened.

`grade.py --simulator` of known-wrong submissions (tools/instructor/variants/mutations.toml) whose sums usually come
out right but whose code has a hazard the simulator finds: lab 02 without the barrier after the load (a race), lab 03
with __syncthreads() inside `if (t < stride)` (a barrier not every thread reaches). Every correctness group that ran
loses its points: HAZARD (labs.toml's hazard_cost, 1) naming the hazard's file:line and the sanitizers row, which
alone prints the finding, when its runs passed, FAIL when an
adversarial schedule made the race show in a sum; no row names the copy the grader compiled; the sanitizers row
fails. A lab whose host code crashes at some sizes keeps the
groups that passed, and its sanitizers row says "not run to the end: the lab crashed ..." instead of "pass"; make
sim after a kernel fault names the sizes it did not run and prints the CUDA error once. That
every reference solution keeps full points under the same rule is tests/sim/test_sim.py's
test_solutions_pass_what_the_simulator_runs.

Needs nvcc (skipped, saying so, without it). About two minutes on 2 cores once the harness is built.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from grader.sim import simulator
from grader.config import load_config
from grader.grade import Grader
from grader.score.score import HAZARD
from tools.instructor.variants.wrong import mutations, submission
from tests.timing import slow

KIT = Path(__file__).resolve().parents[2]
HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None
RIGHT_SUMS_WRONG_CODE = {  # mutation: what the simulator must name in the HAZARD rows
    "no-load-barrier": r"\[shared-race-[a-z-]+\] kernel reduce_kernel\(.*reduce\.cu:\d+ and .*reduce\.cu:\d+",
    "barrier-in-branch": r"\[barrier-with-exited-threads\] kernel reduce_kernel\(.*reduce\.cu:\d+",
}
# Lab 03's solution whose host code crashes (a store through a null pointer) when asked for more than 70000
# elements: the datasets (65537 at most) pass, the edge and exact groups crash.
CRASH_EDIT = ("void reduce(float *d_in, float *d_out, size_t n, float *d_work)\n{\n",
              "void reduce(float *d_in, float *d_out, size_t n, float *d_work)\n{\n"
              "    if (n > 70000)\n        *(volatile int *)(size_t)(n & 1) = 1; /* a crash in the host code */\n")


def sim_grader(config, folder, run_pool=None, **kwargs):
    """A Grader on the simulator's back end (python3 -m grader --simulator)."""
    return Grader(config, folder, platform=simulator.SimPlatform(run_pool=run_pool), **kwargs)


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class HazardsCostPoints(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ppl-sim-hazards-")
        os.chmod(cls.tmp.name, 0o755)  # the runner runs as nobody in its sandbox and must reach its program
        cls.config = load_config()
        cls.SimGrader = staticmethod(sim_grader)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def grade(self, folder: Path, lab: str, tag: str):
        build = Path(self.tmp.name) / "build" / tag
        grader = self.SimGrader(self.config, folder, build_dir=str(build), seed=12345)
        return grader.grade(self.config.select(lab)), build

    @slow  # make test-all's: see tests/timing.py
    def test_right_sums_from_wrong_code_lose_every_correctness_point(self):
        table = mutations()
        for name, named in RIGHT_SUMS_WRONG_CODE.items():
            with self.subTest(mutation=name):
                lab = table[name]["lab"]
                folder = submission(name, Path(self.tmp.name) / "wrong")
                report, build = self.grade(folder, lab[:2], name)
                rows = {r.name: r for r in report.results}
                groups = [r for r in report.results if r.name not in ("static checks", "sanitizers", "performance")
                          and r.status != simulator.NEEDS_GPU]
                said = "\n".join(f"{r.name}: {r.status} {r.score}/{r.max_score} {r.summary}" for r in report.results)
                self.assertTrue(groups, said)
                # a group whose runs passed shows HAZARD; one whose race showed in a sum (the simulator's adversarial
                # schedules) failed outright: either way no point is left
                self.assertTrue(all(r.status in (HAZARD, "FAIL") and r.score == 0 for r in groups), said)
                self.assertEqual(rows["sanitizers"].status, "FAIL", said)
                self.assertRegex(rows["sanitizers"].summary, named)
                for r in (g for g in groups if g.status == HAZARD):  # they point at the row, without its lines
                    self.assertRegex(r.summary, r"^HAZARD: see the sanitizers row \(reduce\.cu:\d+")
                    self.assertNotRegex(r.detail, named)
                for r in report.results:
                    text = f"{r.summary}\n{r.detail}"
                    self.assertNotIn(str(build), text)  # never the copy the grader compiled
                    self.assertNotIn(f"{build.name}/{lab}/reduce.cu", text)
                self.assertFalse(simulator.sim_full_marks(report))

    def test_a_crash_says_not_run_and_keeps_the_groups_that_passed(self):
        folder = Path(self.tmp.name) / "crash"
        source = folder / "03-sequential" / "reduce.cu"
        source.parent.mkdir(parents=True)
        text = (KIT / "solutions" / "03-sequential" / "reduce.cu").read_text()
        self.assertIn(CRASH_EDIT[0], text)
        source.write_text(text.replace(*CRASH_EDIT))
        report, _ = self.grade(folder, "03", "crash")
        rows = {r.name: r for r in report.results}
        said = "\n".join(f"{r.name}: {r.status} {r.score}/{r.max_score} {r.summary}" for r in report.results)
        self.assertEqual(rows["datasets"].status, "pass", said)  # the datasets are small: no crash, no hazard
        self.assertTrue(any(r.status == "CRASH" for r in report.results), said)
        row = rows["sanitizers"]
        self.assertEqual(row.status, "not run", said)
        self.assertRegex(row.summary, r"^not run to the end: the lab crashed \(--data \w+ --n [^;]*; ")
        self.assertIn("before the simulator's checks could finish", row.summary)



def make_sim(mutation: str, lab: str, sizes: str) -> subprocess.CompletedProcess:
    """make sim (tools/student/sim.py) of the known-wrong submission `mutation` at the given sizes, no estimate."""
    with tempfile.TemporaryDirectory(prefix="ppl-sim-hazard-") as tmp:
        os.chmod(tmp, 0o755)
        folder = submission(mutation, Path(tmp))
        return subprocess.run([sys.executable, "-m", "tools.student.sim", "--lab", lab, "--submission", str(folder),
                               "--n", sizes, "--no-estimate"], cwd=KIT, capture_output=True, text=True, timeout=900)


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class MakeSimAfterAFault(unittest.TestCase):
    def test_the_sizes_after_a_fault_are_named_and_the_error_said_once(self):
        """make sim of a lab 04 that writes past its shared array (a kernel fault at n = 33 and above): the CUDA
        error is printed once (the checker's), and the sizes after the fault are named as not run (issue 11: they
        were dropped silently, and the error printed twice)."""
        proc = make_sim("small-shared-array", "04", "1,1025,4097,65537")
        out = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 3, out)
        self.assertEqual(out.count("CUDA error at "), 1, out)
        self.assertIn("PASS  n=1 integer", proc.stdout)
        self.assertRegex(proc.stderr, r"not run: n=4097 integer, n=65537 integer: the run stopped at n=1025 integer "
                                      r"\(error, above\)")


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class MakeSimSaysTheHazards(unittest.TestCase):
    def test_hazards_are_printed_once_demangled_summed_up_and_fail_the_run(self):
        """make sim of lab 03 with __syncthreads() inside `if (t < stride)`: every sum is right, but the run exits
        1 with a closing line naming the hazards' lines and what make grade does with them; each finding is printed
        once (not after each launch and again at the end), kernels by the names the student wrote."""
        proc = make_sim("barrier-in-branch", "03", "1,1025")
        out = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 1, out)
        self.assertNotIn("FAIL", proc.stdout)
        self.assertRegex(proc.stderr, r"\d+ hazards? found \(reduce\.cu:\d+.*make grade takes the correctness points")
        self.assertNotIn("_Z13reduce_kernel", out)
        self.assertNotIn("new finding", out)
        lines = [x for x in proc.stderr.splitlines() if "[barrier-with-exited-threads]" in x]
        self.assertTrue(lines, out)
        self.assertEqual(len(lines), len(set(lines)), out)


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class MakeSimSaysTheBarrierFirst(unittest.TestCase):
    def test_a_missing_barrier_is_advised_first_and_never_a_syncwarp(self):
        """make sim of lab 03 without the barrier of its tree's loop: the unrolled line races within a warp and
        between warps, at one source line; each is listed once per kind and pair of lines, the race between warps
        first, and every race advises the __syncthreads() (issue 21: the races within a warp said only __syncwarp();
        issue 35: the first five findings still did)."""
        text = (KIT / "solutions" / "03-sequential" / "reduce.cu").read_text()
        barrier = "            partial[t] += partial[t + stride];\n        __syncthreads();"
        self.assertIn(barrier, text)
        with tempfile.TemporaryDirectory(prefix="ppl-sim-barrier-") as tmp:
            os.chmod(tmp, 0o755)
            (Path(tmp) / "03-sequential").mkdir()
            (Path(tmp) / "03-sequential" / "reduce.cu").write_text(text.replace(barrier, barrier.split("\n")[0]))
            proc = subprocess.run([sys.executable, "-m", "tools.student.sim", "--lab", "03", "--submission", tmp,
                                   "--n", "4097", "--no-estimate"], cwd=KIT, capture_output=True, text=True,
                                  timeout=900)
        races = [ln for ln in proc.stderr.splitlines() if re.match(r"\[shared-race-", ln)]
        self.assertTrue(races, proc.stderr)
        self.assertTrue(races[0].startswith("[shared-race-inter-warp]"), races[0])
        self.assertTrue(any(ln.startswith("[shared-race-intra-warp]") for ln in races), proc.stderr)
        for line in races:
            self.assertIn("put a __syncthreads()", line)
            self.assertNotIn("put a __syncwarp()", line)
        self.assertEqual(len(races), len({ln.split(" (")[0] for ln in races}), races)  # once per kind and lines


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class MakeSimSaysTheAtomic(unittest.TestCase):
    def test_a_plain_increment_of_a_shared_bin_is_short_and_advises_an_atomic(self):
        """make sim of lab 09 counting with bins_s[b]++ instead of atomicAdd (mutation histogram-lost-updates): the
        races of the one line are listed once per kind, with the atomic's advice and never a barrier's, in under 200
        lines (issue 35: 11,614 lines, 3,844 findings each advising a barrier), FAIL and exit status 1, and the
        closing count is the number of hazards listed, as make grade counts them."""
        proc = make_sim("histogram-lost-updates", "09", "1,33,1025,65537")
        out = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 1, out[-3000:])
        self.assertLess(len(out.splitlines()), 200, out[-3000:])
        self.assertIn("FAIL", proc.stdout)
        self.assertNotIn("loops forever", out)
        hazards = [ln for ln in proc.stderr.splitlines() if ln.startswith("[")]
        self.assertTrue(hazards, out[-3000:])
        for line in hazards:
            self.assertRegex(line, r"^\[shared-race-(intra|inter)-warp\] kernel histogram_kernel\(.*histogram\.cu:\d+ "
                                   r"and histogram\.cu:\d+ \(\d+ times\): read-modify-write race")
            self.assertIn("atomicAdd", line)
            self.assertNotIn("__syncthreads()", line)
            self.assertNotIn("__syncwarp()", line)
        self.assertEqual(len(hazards), len({ln.split(" (")[0] for ln in hazards}), hazards)
        self.assertRegex(proc.stderr, rf"\n{len(hazards)} hazards? found \(histogram\.cu:\d+")


if __name__ == "__main__":
    unittest.main()
