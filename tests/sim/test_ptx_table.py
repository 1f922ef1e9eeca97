"""The simulator's PTX table (sim/README.md, "Supported PTX"): every row's kernel (tests/sim/ptx/kernels/), compiled
by CUDA 13 (the installed nvcc) and by CUDA 12.4, for compute_75, compute_80 and compute_90, runs on the simulator and gives
the CPU's expectation (tests/sim/ptx/rows.c); messages and findings name the student's line through inlined
frames (tests/sim/ptx/test_ptx.c, suite "lines"). CUDA 12 is an nvcc named by NVCC12 or CUDA12_HOME, or NVRTC 12.4
from `python3 -m tests.sim.ptx.cuda12 --install`; without one that test is skipped, saying so."""
import os
import re
import shutil
import subprocess
import unittest
from pathlib import Path

from tests.sim.ptx import cuda12

KIT = Path(__file__).resolve().parents[2]
PTX_TESTS = KIT / "tests" / "sim" / "ptx"
TEST_BUILD = KIT / "build" / "sim" / "tests"
ARCHS = ("75", "80", "90")  # the kit's floor, the A100, and the H100 and H200 whose own PTX the simulator's check runs
NVCC = os.environ.get("NVCC", "nvcc")


def check_summary(output):
    """(checks, failures + errors) of a Check run's last summary line, or None."""
    found = re.findall(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)", output)
    return (int(found[-1][0]), int(found[-1][1]) + int(found[-1][2])) if found else None


class PtxTable(unittest.TestCase):
    def run_checked(self, cmd, env=None):
        proc = subprocess.run(cmd, cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={**os.environ, **(env or {})})
        summary = check_summary(proc.stdout)
        self.assertIsNotNone(summary, f"{' '.join(cmd)} printed no Check summary (exit {proc.returncode}):\n"
                                      f"{proc.stdout[-4000:]}")
        checks, bad = summary
        self.assertEqual(bad, 0, f"{bad} of {checks} PTX table checks failed:\n{proc.stdout[-6000:]}")
        self.assertEqual(proc.returncode, 0, proc.stdout[-4000:])
        self.assertGreater(checks, 0)
        return checks

    @unittest.skipUnless(shutil.which(NVCC), "nvcc not found")
    def test_cuda13(self):
        """Every row with the installed nvcc's PTX (make -C sim test-ptx)."""
        checks = self.run_checked(["make", "-s", "-C", "sim", "test-ptx", f"PTX_ARCHS={' '.join(ARCHS)}"])
        print(f"  PTX table, {NVCC}: {checks} checks passed")

    def test_cuda12(self):
        """Every row with CUDA 12.4's PTX."""
        compiler = cuda12.find()
        if compiler is None:
            self.skipTest("no CUDA 12 compiler (set NVCC12, or run python3 -m tests.sim.ptx.cuda12 --install)")
        out = TEST_BUILD / "ptx-table" / "cuda12"
        out.mkdir(parents=True, exist_ok=True)
        for source in sorted((PTX_TESTS / "kernels").glob("*.cu")):
            for arch in ARCHS:
                ptx = out / f"{source.stem}_{arch}.ptx"
                compiler.compile(source, arch, ptx)
                release = cuda12.release_of(ptx.read_text(errors="replace"))
                self.assertTrue(release and release.startswith("12."),
                                f"{compiler.describe()} made {ptx.name} with CUDA {release}, not 12")
        build = subprocess.run(["make", "-s", "-C", "sim", "test-ptx-bin"], cwd=KIT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        self.assertEqual(build.returncode, 0, build.stdout[-4000:])
        checks = self.run_checked([str(TEST_BUILD / "test_ptx")],
                                  env={"PPL_SIM_TEST_PTX": str(out), "PPL_PTX_ARCHS": " ".join(ARCHS),
                                       "PPL_PTX_LABEL": compiler.describe()})
        print(f"  PTX table, {compiler.describe()}: {checks} checks passed")

    def test_readme_lists_every_row(self):
        """sim/README.md's table names each row's kernel, and no kernel that is not a row."""
        rows = set(re.findall(r'"(row_\w+)"', (PTX_TESTS / "rows.c").read_text()))
        readme = set(re.findall(r"`(row_\w+)`", (KIT / "sim" / "README.md").read_text()))
        kernels = set(re.findall(r"ROW\((row_\w+)\)", "".join(
            p.read_text() for p in sorted((PTX_TESTS / "kernels").glob("*.cu")))))
        self.assertEqual(rows, kernels, "rows.c and kernels/*.cu name different rows")
        self.assertEqual(readme, rows, "sim/README.md's PTX table and rows.c name different rows")


if __name__ == "__main__":
    unittest.main()
