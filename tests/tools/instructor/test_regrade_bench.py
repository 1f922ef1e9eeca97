"""tools/instructor/regrade_bench.py (`make regrade-bench`) over fake lab programs whose speedup is known, with a per
cent of noise drawn from the grading's seed; and tools/instructor/variants/near.py, the near-threshold kernels it
grades."""
import contextlib
import io
import json
import os
import random
import re
import secrets
import shutil
import subprocess
import tempfile
import types
import unittest
from pathlib import Path

from grader.compile.build import BuildResult
from grader.config import load_config
from grader.grade import Grader
from grader.patterns import PATTERNS
from tests.grader.fakes import KIT, fake_program
from tools.instructor.variants import near
from tools.instructor import regrade_bench as regrade


REFERENCE = {"03-sequential": 2.81, "04-unrolled": 6.58, "06-scan": 0.55}  # the H200's, as labs.toml has them


class FakeLabs:
    """Build and harness hooks: a 'built' lab is a fake program whose speedup is the reference's, divided by
    1 + 0.9 * NEAR_FRACTION for a near kernel (not quite proportional, so the trial run's correction matters), times
    1 +- 1% drawn from the seed."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.builds = []

    def build(self, kit, pattern, source, folder, timeout=None, harness_build=None):
        text = Path(source).read_text()
        lab = Path(source).parent.name
        found = re.search(r"#define NEAR_FRACTION ([0-9.]+)", text)
        fraction = float(found.group(1)) if found else 0.0
        speedup = REFERENCE[lab] / (1 + 0.9 * fraction)
        self.builds.append((lab, fraction))
        Path(folder).mkdir(parents=True, exist_ok=True)
        program = fake_program(folder, f"""
            seed = int(SEED)
            s = {speedup!r} * (1 + ((seed % 2001) - 1000) / 100000)
            emit(CASES[0], "pass", "bench", speedup=s, student_ms=1 / s, baseline_ms=1.0, spread=0.004,
                 baseline_spread=0.003, speedup_spread=0.005, samples=10, warmups=2, throttled=0, clock_low=0,
                 sm_clock_mhz=1980.0, sm_clock_max_mhz=1980.0, device="NVIDIA H200", sm="9.0", message="timed")
            sys.exit(0)
            """, name=f"{pattern}_lab")
        return BuildResult(True, program=program, object=Path(folder) / "student.o")


class RegradeBench(unittest.TestCase):
    def run_bench(self, *argv):
        labs = FakeLabs(self.tmp)
        real = Grader

        def grader(*args, **kw):
            g = real(*args, build=labs.build, build_harness=lambda *a, **k: BuildResult(True), **kw)
            g.gpu_snapshot = lambda: {"error": "nvidia-smi not found"}
            return g
        regrade.Grader = grader
        self.addCleanup(setattr, regrade, "Grader", real)
        seeds = random.Random(11)  # the seeds, and so the noise, the same on every run of the test
        regrade.secrets = types.SimpleNamespace(randbits=seeds.getrandbits)
        self.addCleanup(setattr, regrade, "secrets", secrets)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = regrade.main([*argv, "--out", str(self.tmp / "out")])
        return status, out.getvalue(), labs

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def test_reference_and_near_kernels(self):
        status, out, labs = self.run_bench("--lab", "03", "--near", "03", "--regrades", "5")
        self.assertEqual(status, 0, out)
        rows = {line.split("  ")[0].strip(): line for line in out.splitlines()}
        self.assertIn("Regrade benchmark on NVIDIA H200", out)
        self.assertIn("labs.toml's rule: 5 steps, margin 3%..6% (2 x the speedup's spread)", out)
        self.assertRegex(rows["03-sequential"],
                         r"^03-sequential +- +2\.(79|8\d)\dx .* 50 50 50 50 50 +0 +50 50 50 50 50 +0$")
        full = rows["03-sequential near full"]
        self.assertRegex(full, r" 2\.53x +2\.(49|5[0-6])\dx ")  # the trial runs corrected the fraction
        self.assertRegex(full, r" 50 50 50 50 50 +0$")  # the margin holds full marks
        linear = re.search(r"\d\.\d%  (.*?) {2,}(\d+) ", full)
        self.assertGreater(int(linear.group(2)), 0, full)  # while the linear rule's points move
        self.assertIn("03-sequential near edge", rows)
        self.assertRegex(rows["03-sequential near edge"], r" 2\.46x ")  # 2.53 / 1.03
        self.assertNotRegex(out, r"\d\.\d{4,} ms|\d ms")  # ratios and points, never lone times
        # the reference once (built once for all its regrades), each near kernel twice: guess, then corrected
        self.assertEqual([lab for lab, _ in labs.builds], ["03-sequential"] * 5)
        guess, corrected = labs.builds[1][1], labs.builds[2][1]
        self.assertAlmostEqual(guess, 2.81 / 2.53 - 1, delta=0.01)  # from the reference as measured
        self.assertAlmostEqual(corrected, guess / 0.9, delta=0.02)
        record = json.loads((self.tmp / "out" / "regrade.json").read_text())
        self.assertEqual([k["name"] for k in record["kernels"]],
                         ["03-sequential", "03-sequential near full", "03-sequential near edge"])
        self.assertEqual(record["scoring"], {"steps": 5, "min_margin": 0.03, "max_margin": 0.06,
                                             "spread_factor": 2.0})
        self.assertEqual(len(record["kernels"][1]["benches"]), 5)
        self.assertEqual(record["kernels"][0]["flips"], 0)

    def test_a_near_lab_outside_lab_is_calibrated_but_not_shown(self):
        status, out, labs = self.run_bench("--lab", "06", "--near", "04", "--targets", "full", "--regrades", "2")
        self.assertEqual(status, 0, out)
        names = [line.split("  ")[0] for line in out.splitlines()]
        self.assertIn("06-scan", " ".join(names))
        self.assertIn("04-unrolled near full", " ".join(names))
        self.assertNotIn("04-unrolled ", [n + " " for n in names if n.strip() == "04-unrolled"])

    def test_arguments(self):
        for argv in (["--regrades", "1"], ["--targets", "middle"]):
            with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
                regrade.main(argv)

    def test_flips(self):
        self.assertEqual(regrade.flips([50, 50, 50]), 0)
        self.assertEqual(regrade.flips([50, 40, 50, 50, 40]), 3)
        self.assertEqual(regrade.flips([]), 0)


class NearKernels(unittest.TestCase):
    def test_text(self):
        for lab in near.VARIANTS:
            text = near.text(lab, 0.125)
            self.assertTrue(text.startswith("/*\n * SLOWED ON PURPOSE"), lab)
            self.assertIn("#define NEAR_FRACTION 0.125000\n", text)
            self.assertIn("left -= (double)n", text)
            self.assertNotIn("@@ BEGIN SOLUTION", text.split("*/", 1)[0])

    def test_stale_line_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "03-sequential").mkdir()
            (Path(tmp) / "03-sequential" / "reduce.cu").write_text("/*\n * rewritten\n */\nint x;\n")
            with self.assertRaisesRegex(ValueError, r"solutions/03-sequential/reduce.cu holds the line its variant "
                                                    r"edits 0 times"):
                near.text("03-sequential", 0.1, solutions=Path(tmp))
        with self.assertRaisesRegex(ValueError, "no near-threshold variant of 05-coarsened"):
            near.text("05-coarsened", 0.1)

    def test_fractions(self):
        self.assertAlmostEqual(near.fraction_for(2.81, 2.53), 2.81 / 2.53 - 1)
        self.assertEqual(near.fraction_for(2.0, 2.53), 0.0)
        # a fraction of 0.2 gave 2.81 -> 2.60 (slowdown 0.0808), 0.1107 wanted: scaled up
        self.assertAlmostEqual(near.recalibrate(0.2, 2.81, 2.60, 2.53), 0.2 * (2.81 / 2.53 - 1) / (2.81 / 2.60 - 1))
        self.assertEqual(near.recalibrate(0.2, 2.81, 2.9, 2.53), 0.2)  # no slowdown seen: keep the guess

    @unittest.skipUnless(shutil.which(os.environ.get("NVCC", "nvcc")), "nvcc not found")
    def test_they_compile(self):
        with tempfile.TemporaryDirectory() as tmp:
            for lab in near.VARIANTS:
                source = near.submission(lab, 1.5, tmp) / lab / near.VARIANTS[lab][0]
                includes = [f"-I{folder}" for folder in PATTERNS[load_config().named(lab).pattern].include_folders]
                proc = subprocess.run([os.environ.get("NVCC", "nvcc"), "-std=c++17", "-gencode",
                                       "arch=compute_75,code=sm_75", "-Xcompiler", "-Wall,-Werror", *includes,
                                       "-c", str(source), "-o", str(Path(tmp) / "x.o")],
                                      capture_output=True, text=True)
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)


if __name__ == "__main__":
    unittest.main()
