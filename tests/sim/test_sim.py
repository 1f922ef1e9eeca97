"""The kit's CPU simulator end to end, without a GPU (tests/run.py's `sim` suite): `grade.py --simulator` gives every
reference solution full marks on what the simulator runs, every blank lab loses its points, and each known-wrong
submission of tests/wrong/ that is a run-time bug is reported (a lost group, a kernel fault, the instruction limit,
or a hazard in the sanitizers row); `make sim` runs a lab and prints the counts. Plus the pure helpers of
grader/simulator.py.

Needs nvcc (skipped, saying so, without it) and the simulator core (sim/Makefile). The solutions, the blank labs and
each wrong submission are graded once, in temporary build folders; the harness objects are shared
(build/sim/harness). About three minutes on 16 cores, the first build of the harness included.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from grader import simulator
from grader.config import load_config
from grader.grade import Grader
from tests.wrong.materialize import mutations, submission

KIT = Path(__file__).resolve().parents[2]
HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None
# The run-time bugs, and what the simulator must make of them (any of these words in a lost row counts).
RUNTIME_BUGS = {
    "double-count": "wrong sum",
    "drop-one": "wrong sum",
    "out-of-bounds-write": "wrote past the end",
    "overflow-write": "wrote past the end",
    "unstable": "input order",
    "no-barrier": "race",
    "infinite-loop": "loops forever",
    "volatile-last-warp": "race",
    "small-shared-array": "shared",
}

# The bugs the simulator itself finds (not the harness's checks), and the file:line it must name.
WITH_LINE = {
    "no-barrier": r"kernel scan_tiles_kernel\(.*scan\.cu:\d+ and scan\.cu:\d+",
    "volatile-last-warp": r"kernel reduce_kernel\(.*reduce\.cu:\d+ and reduce\.cu:\d+",
    "small-shared-array": r"out-of-bounds shared access .*reduce\.cu:\d+ .* thread \(\d+,0,0\)",
}

# The known-wrong submissions that are not run-time bugs, and what the simulator grading makes of them: the static
# checks and the compiler catch the first five before anything runs; scribbles-input fails the harness's input check.
CAUGHT_BEFORE_RUNNING = {
    "compile-error": "does not compile",
    "host-sum": "FORBIDDEN",
    "library-call": "FORBIDDEN",
    "reads-expected": "FORBIDDEN",
    "static-constructor": "FORBIDDEN",
    "scribbles-input": "the input was modified",
}
# Known-wrong submissions only a GPU can catch, and why: every one in mutations.toml is in one of the three tables.
GPU_ONLY = {
    "cached-sum": "it replays its last sum only when the same buffers come back, which only the benchmark's timed "
                  "runs do; the simulator does not run the benchmark",
}


class Helpers(unittest.TestCase):
    def test_every_known_wrong_submission_has_a_verdict_here(self):
        listed = set(RUNTIME_BUGS) | set(CAUGHT_BEFORE_RUNNING) | set(GPU_ONLY)
        self.assertEqual(set(mutations()) - listed, set(), "add the new submission to a table above")
        self.assertEqual(listed - set(mutations()), set(), "a submission the tables name is gone")

    def test_demangle(self):
        if not shutil.which("c++filt"):
            self.skipTest("c++filt (binutils) is not installed")
        self.assertEqual(simulator.demangle("kernel _Z13reduce_kernelPKfPfm, reduce.cu:50"),
                         "kernel reduce_kernel(float const*, float*, unsigned long), reduce.cu:50")
        self.assertEqual(simulator.demangle("no names here"), "no names here")

    def test_parse_size(self):
        self.assertEqual(simulator.parse_size("1025"), 1025)
        self.assertEqual(simulator.parse_size("2^20"), 1 << 20)
        self.assertEqual(simulator.parse_size("2^24+3"), (1 << 24) + 3)
        self.assertEqual(simulator.parse_size("2^10-1"), 1023)
        self.assertIsNone(simulator.parse_size("lots"))

    def test_largest_size(self):
        self.assertEqual(simulator.largest_size([["--data", "signs", "--n", "2^29+1"], ["--n", "5,7"]]), (1 << 29) + 1)
        self.assertEqual(simulator.largest_size([["--dataset", "x/input.raw"]]), 0)
        self.assertGreater(simulator.largest_size([["--n", "1,huge"]]), simulator.SIM_MAX_N)  # unknown: not run

    def test_diagnostic_keeps_failures_and_few_findings(self):
        lines = [simulator.SIM_PREFIX + "kernel k failed: out-of-bounds global access ... thread (4,0,0)"]
        lines += [simulator.SIM_PREFIX + f"   [shared-race-intra-warp] kernel k, a.cu:{k} (2 times): race"
                  for k in range(5)]
        lines += [simulator.SIM_PREFIX + "      PTX line 3: ld.shared.u32 %r1, [%r2]"]
        said = simulator.diagnostic(lines)
        self.assertIn("out-of-bounds", said)
        self.assertIn("a.cu:0", said)
        self.assertNotIn("PTX line", said)
        self.assertIn("2 more findings", said)

    def test_hazards_row(self):
        with tempfile.TemporaryDirectory() as tmp:
            clean, racy = Path(tmp) / "a.log", Path(tmp) / "b.log"
            clean.write_text("PASS n=1\n")
            racy.write_text(simulator.SIM_PREFIX + "   [shared-race-inter-warp] kernel k, scan.cu:38 and scan.cu:35 "
                            "(7 times): read after write race\n" + simulator.SIM_PREFIX +
                            "   [uninitialized-global-read] kernel h, scan_support.cu:9 (1 time): read\n")
            ok = simulator.score_hazards("06-scan", 5.0, "scan.cu", [clean])
            self.assertEqual((ok.status, ok.score), ("pass", 5.0))
            bad = simulator.score_hazards("06-scan", 5.0, "scan.cu", [clean, racy, racy])
            self.assertEqual((bad.status, bad.score), ("FAIL", 0.0))
            self.assertIn("scan.cu:38", bad.summary)
            self.assertNotIn("and 1 more", bad.summary)  # the same finding twice, and the kit's one apart
            self.assertIn("a kit bug", bad.detail)


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class Grading(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ppl-sim-test-")
        cls.config = load_config()
        cls.SimGrader = simulator.make_sim_grader(Grader)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def grade(self, folder, prefix, tag):
        grader = self.SimGrader(self.config, Path(folder), build_dir=str(Path(self.tmp.name) / tag), seed=12345)
        return grader.grade(self.config.select(prefix))

    def test_solutions_pass_what_the_simulator_runs(self):
        report = self.grade(KIT / "solutions", "", "solutions")
        ran = [r for r in report.results if r.status != simulator.NEEDS_GPU and r.max_score > 0]
        self.assertGreaterEqual(len(ran), 2 * len(report.labs()))  # datasets and edge sizes at least, every lab
        for r in report.results:
            with self.subTest(test=r.title):
                self.assertTrue(r.full or r.status == simulator.NEEDS_GPU, f"{r.status}: {r.summary}\n{r.detail}")
        self.assertTrue(simulator.sim_full_marks(report))
        perf = [r for r in report.results if r.name == "performance"]
        self.assertTrue(all("warp instructions" in r.detail for r in perf), "the counts stand in for performance")

    def test_blank_labs_lose_points(self):
        report = self.grade(KIT / "labs", "", "labs")
        for lab in report.labs():
            with self.subTest(lab=lab):
                rows = [r for r in report.results if r.lab == lab and r.status != simulator.NEEDS_GPU]
                self.assertTrue(any(not r.full for r in rows), f"{lab}: the blank lab lost no points")

    def test_runtime_bugs_are_reported(self):
        table = mutations()
        for name, words in RUNTIME_BUGS.items():
            if name not in table:
                continue
            with self.subTest(mutation=name):
                folder = submission(name, Path(self.tmp.name) / "wrong")
                report = self.grade(folder, table[name]["lab"][:2], f"wrong-{name}")
                lost = [r for r in report.results if not r.full and r.status != simulator.NEEDS_GPU]
                self.assertTrue(lost, f"{name}: nothing reported")
                said = "\n".join(f"{r.summary}\n{r.detail}" for r in lost)
                self.assertIn(words, said, f"{name}: {said[:2000]}")
                if name in WITH_LINE:  # issue 6: these are reported with the student's file and line
                    self.assertRegex(said, WITH_LINE[name], f"{name}: {said[:2000]}")

    def test_submissions_caught_before_running(self):
        table = mutations()
        for name, words in CAUGHT_BEFORE_RUNNING.items():
            with self.subTest(mutation=name):
                folder = submission(name, Path(self.tmp.name) / "wrong")
                report = self.grade(folder, table[name]["lab"][:2], f"wrong-{name}")
                lost = [r for r in report.results if not r.full and r.status != simulator.NEEDS_GPU]
                said = "\n".join(f"{r.status} {r.summary}\n{r.detail}" for r in lost)
                self.assertIn(words, said, f"{name}: {said[:2000]}")
                correct = [r for r in report.results if r.name not in ("performance", "static checks", "sanitizers")
                           and r.status != simulator.NEEDS_GPU]
                self.assertTrue(correct and all(r.score == 0 for r in correct), f"{name}: {said[:2000]}")

    def test_make_sim_prints_counts(self):
        proc = subprocess.run([sys.executable, "tools/sim.py", "--lab", "03", "--submission", "solutions",
                               "--n", "1,1025"], cwd=KIT, capture_output=True, text=True, timeout=900)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("PASS  n=1025", proc.stdout)
        self.assertIn("SIMT efficiency", proc.stderr)
        self.assertRegex(proc.stderr, r"reduce\.cu:\d+")  # per source line

    def test_report_file_from_the_runner_process(self):
        """The lab's code runs in a child process that ends with _exit: the report must be there all the same."""
        report = self.grade(KIT / "solutions", "03", "report")
        self.assertTrue(simulator.sim_full_marks(report))
        found = list((Path(self.tmp.name) / "report" / "03-sequential" / "runs").glob("*/sim-report.json"))
        self.assertTrue(found)
        self.assertTrue(found[0].read_text().lstrip().startswith("{"))


if __name__ == "__main__":
    unittest.main()
