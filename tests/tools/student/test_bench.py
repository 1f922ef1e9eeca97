"""tools/student/bench.py (`make bench LAB=03`, `make bench` in a lab folder) with fake builds and benchmark runs: the
ratios it prints come from each process's own yardsticks, never a lone time; the ladder chart has the student's point; a
failing, hanging or forbidden kernel, a file that does not build, a kit without solutions/ and a machine without a
GPU (what it would have done, the simulator command, exit 77). tests/gpu runs none of this: `make bench` on a GPU
is checked by hand (see the issue's note)."""
import contextlib
import io
import re
import tempfile
import unittest
from pathlib import Path

from grader.compile.build import BuildResult
from grader.config import load_config
from grader.run.run import Outcome
from grader.compile.static_check import Finding, Verdict
from grader.patterns import KIT
from tools.student import bench


CONFIG = load_config()


def line(student_ms, yardstick_ms, cub_ms, copy_ms, status="pass", message="timed", n=1 << 26):
    """A bench result line as the harness writes it (baseline_ms is the grader's yardstick's time)."""
    return {"case": f"bench n={n}", "kind": "bench", "status": status, "n": n, "student_ms": student_ms,
            "baseline_ms": yardstick_ms, "speedup": yardstick_ms / student_ms, "spread": 0.004,
            "speedup_spread": 0.006, "cub_ms": cub_ms, "copy_ms": copy_ms, "device": "NVIDIA H100 80GB HBM3",
            "sm": "9.0", "message": message}


class FakeKit:
    """A kit folder (solutions/ present or not), the hooks tools/student/bench.py takes, and a record of their calls."""

    def __init__(self, root: Path, solutions=True):
        self.root = root
        self.submission = root / "sub"
        (self.submission / "03-sequential").mkdir(parents=True)
        (self.submission / "03-sequential" / "reduce.cu").write_text("// yours\n")
        if solutions:
            for lab in CONFIG.labs:
                (root / "kit" / "solutions" / lab.name).mkdir(parents=True)
        (root / "kit").mkdir(exist_ok=True)
        self.runs, self.reference_builds = [], []
        self.outcomes = {}  # (kernel, lab, size) -> Outcome; default: the lines of speeds()
        self.built = BuildResult(True, program=Path("yours/03-sequential/reduce_lab"),
                                 object=Path("yours/student.o"))
        self.verdict = Verdict()

    def hooks(self):
        return {"kit": self.root / "kit", "build_lab": lambda kit, pattern, source, folder: self.built,
                "build_harness": lambda kit, pattern: BuildResult(True),
                "build_reference": self.build_reference, "run": self.run, "check": lambda obj, pattern: self.verdict}

    def build_reference(self, folder, out):
        self.reference_builds.append(folder.name)
        return "reduce", Path(f"reference/{folder.name}/reduce_lab")

    def run(self, program, args, *, timeout, workdir, cwd, source):
        kernel, lab = Path(program).parts[0], Path(program).parts[1]
        size = args[1]
        self.runs.append((kernel, lab, size))
        outcome = self.outcomes.get((kernel, lab, size))
        if outcome is not None:
            return outcome
        if kernel == "yours":  # 2.50x baseline, 0.25x CUB, 20% of the copy; its process's clock ran slower
            bench_line = line(0.4, 1.0, 0.1, 0.08)
        else:  # the reference: 2.86x baseline in its own process
            bench_line = line(0.35, 1.0, 0.09, 0.07)
        return Outcome("pass", "1 case passed", None, [bench_line], [bench_line["case"]])


class YoursBench(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = Path(tmp.name)
        self.out = self.tmp / "out"

    def bench(self, kit: FakeKit, sizes=("2^24", "2^26"), rungs=True):
        lines = []
        status = bench.bench_yours([CONFIG.select("03")[0]], kit.submission, list(sizes), self.out, rungs=rungs,
                                   config=CONFIG, log=lines.append, **kit.hooks())
        return status, "\n".join(lines)

    def test_ratios_from_each_process_and_the_ladder(self):
        kit = FakeKit(self.tmp)
        status, out = self.bench(kit)
        self.assertEqual(status, 0, out)
        self.assertIn("| 2^24 | yours | 2.50 | 0.88 | 0.25 | 20 | 0.6% |", out)
        self.assertIn("| 2^26 | reference | 2.86 | 1.00 | 0.26 | 20 | 0.6% |", out)
        self.assertIsNone(re.search(r"\d ms\b", out), "an absolute time was printed")
        self.assertIn("At 2^26, the size the grader times: yours 2.50x baseline, 0.88x the reference (2.86x "
                      "baseline in this run).", out)
        self.assertIn("on NVIDIA H100 80GB HBM3: no performance points at or below 1.16x baseline, all of them at "
                      "2.52x baseline", out)
        # yours then the reference at each size, then the other labs' references at the grader's size
        self.assertEqual(kit.runs[:4], [("yours", "03-sequential", "2^24"), ("reference", "03-sequential", "2^24"),
                                        ("yours", "03-sequential", "2^26"), ("reference", "03-sequential", "2^26")])
        self.assertEqual({r for r in kit.runs[4:]}, {("reference", lab.name, "2^26") for lab in CONFIG.labs
                                                     if lab.name != "03-sequential"})
        svg = (self.out / "ladder-03-sequential.svg").read_text()
        self.assertIn("2.50x", svg)  # your point
        self.assertIn("08", svg)  # the whole ladder
        # four runs of the lab, then one reference run of each other lab of labs.toml
        self.assertEqual(len((self.out / "bench-03-sequential.jsonl").read_text().splitlines()),
                         4 + len(CONFIG.labs) - 1)
        self.assertIn((self.out / "bench-03-sequential.md").read_text().strip(), out)

    def test_no_ladder_times_the_lab_alone(self):
        kit = FakeKit(self.tmp)
        status, _ = self.bench(kit, rungs=False)
        self.assertEqual(status, 0)
        self.assertEqual({lab for _, lab, _ in kit.runs}, {"03-sequential"})

    def test_no_gpu_says_what_it_would_do_and_the_simulator_command(self):
        kit = FakeKit(self.tmp)
        kit.outcomes[("yours", "03-sequential", "2^24")] = Outcome("no-device", "no CUDA device")
        status, out = self.bench(kit)
        self.assertEqual(status, bench.NO_DEVICE)
        self.assertIn("make bench needs an NVIDIA GPU", out)
        self.assertIn("beside the reference solution at n = 2^24, 2^26", out)
        self.assertIn(f"  make sim LAB=03 SUBMISSION={kit.submission}", out)
        self.assertIn("The simulator measures no time; make sim", out)
        self.assertEqual(kit.reference_builds, [])

    def test_a_wrong_kernel_fails_beside_the_reference(self):
        kit = FakeKit(self.tmp)
        bad = line(0.4, 1.0, 0.1, 0.08, status="fail", message="3 of 120 timed runs gave a wrong sum")
        kit.outcomes[("yours", "03-sequential", "2^26")] = Outcome("fail", bad["message"], bad["case"], [bad],
                                                                   [bad["case"]])
        status, out = self.bench(kit)
        self.assertEqual(status, 1)
        self.assertIn("| 2^26 | yours | FAIL: 3 of 120 timed runs gave a wrong sum |", out)
        self.assertIn("| 2^26 | reference | 2.86 |", out)
        self.assertIn("yours: fail", (self.out / "ladder-03-sequential.svg").read_text())

    def test_a_hung_kernel_is_not_run_again(self):
        kit = FakeKit(self.tmp)
        kit.outcomes[("yours", "03-sequential", "2^24")] = Outcome("timeout", "timed out after 300 s")
        status, out = self.bench(kit, rungs=False)
        self.assertEqual(status, 1)
        self.assertEqual([r for r in kit.runs if r[0] == "yours"], [("yours", "03-sequential", "2^24")])
        self.assertIn("| 2^26 | yours | NOT RUN: it stopped at 2^24 (timeout) already |", out)

    def test_a_file_that_does_not_build(self):
        kit = FakeKit(self.tmp)
        kit.built = BuildResult(False, message="reduce.cu does not compile:\nreduce.cu(3): error: x")
        status, out = self.bench(kit)
        self.assertEqual(status, 2)
        self.assertIn("reduce.cu(3): error: x", out)
        self.assertIn("make check LAB=03", out)
        self.assertEqual(kit.runs, [])

    def test_forbidden_code_is_not_timed(self):
        kit = FakeKit(self.tmp)
        kit.verdict = Verdict([Finding("library", "calls cub::DeviceReduce::Sum")])
        status, out = self.bench(kit)
        self.assertEqual(status, 1)
        self.assertIn("the grader gives this lab 0 points", out)
        self.assertIn("calls cub::DeviceReduce::Sum", out)
        self.assertEqual(kit.runs, [])

    def test_without_solutions_the_reference_is_the_handouts(self):
        kit = FakeKit(self.tmp, solutions=False)
        status, out = self.bench(kit)
        self.assertEqual(status, 0, out)
        self.assertEqual({r[0] for r in kit.runs}, {"yours"})
        self.assertIn("| 2^26 | yours | 2.50 | 0.89* |", out)  # 2.50 / the H200's 2.81
        self.assertIn("the handouts' measurement on NVIDIA H200", out)

    def test_submission_folders_of_one_name_do_not_share_output(self):
        a, b = self.tmp / "a" / "labs", self.tmp / "b" / "labs"
        self.assertNotEqual(bench.submission_tag(a), bench.submission_tag(b))
        self.assertEqual(bench.submission_tag(KIT / "labs"), "labs")


class ReferenceLadder(unittest.TestCase):
    def test_chart_of_the_reference_ladder(self):
        rows = [(lab.name, line(0.5, 1.0, 0.1, 0.08)) for lab in CONFIG.labs]
        programs = {lab.name: (lab.pattern, None) for lab in CONFIG.labs}
        with tempfile.TemporaryDirectory() as tmp:
            said = bench.ladder_chart(programs, rows, Path(tmp))
            svg = (Path(tmp) / "ladder.svg").read_text()
        self.assertIn("ladder.svg", said)
        self.assertIn("The reference ladder on NVIDIA H100 80GB HBM3", svg)
        self.assertNotIn(">yours<", svg)
        table = bench.ladder_table(programs, rows)
        self.assertIn("| 03-sequential | 2^26 | 2.00 | 0.20 | 16 | 0.5000 | 0.4% |", table)

    def test_main_without_gpu(self):
        """The real thing: a lab of the kit built here and run, on a machine without a GPU (skipped on one)."""
        import shutil
        import subprocess
        if shutil.which("nvcc") is None:
            self.skipTest("nvcc is not installed")
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0 if shutil.which(
                "nvidia-smi") else False:
            self.skipTest("this machine has a GPU: the no-GPU path is not what it would take")
        out = io.StringIO()
        err = io.StringIO()
        with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = bench.main(["--lab", "03", "--submission", str(KIT / "solutions"), "--out", tmp])
            self.assertEqual(status, bench.NO_DEVICE)
            self.assertIn("make sim-compare", err.getvalue())
            status = bench.main(["--lab", "03", "--submission", str(KIT / "labs"), "--out", tmp, "--sizes", "2^20"])
        self.assertEqual(status, bench.NO_DEVICE, out.getvalue())
        self.assertIn("make sim LAB=03", out.getvalue())


if __name__ == "__main__":
    unittest.main()
