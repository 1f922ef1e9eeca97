"""A grade is a measurement of the file alone (issue 35): the same file and seed get the same rows on an idle machine
and on one whose every core is busy six times over. The simulator's limits count work (the instruction budget, the
CPU time of each process: labs.toml [limits] simulator_cpu_seconds), never seconds; its wall clock is only a
backstop. The file is an honest but slow one, the kind a loaded machine used to time out: a Brent-Kung scan of the
whole array in global memory, one launch a level (tests/attacks/70-honest-brent-kung-global). Needs nvcc; slow
(two gradings of lab 06 on the simulator, one of them beside 6 busy loops a core)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from tests.timing import slow

KIT = Path(__file__).resolve().parents[2]
HONEST_SLOW = KIT / "tests" / "attacks" / "70-honest-brent-kung-global" / "scan.cu"
LAB = "06-scan"
BUSY_PER_CORE = 6
SEED = "20261207"


def rows(results: Path) -> list:
    """Each test's name, status and score, in order: what a grade is."""
    data = json.loads(results.read_text())
    return [(t["name"], t["extra_data"]["status"], t["score"]) for t in data["tests"]]


@unittest.skipUnless(shutil.which("nvcc"), "nvcc not found: install the CUDA toolkit to build the lab")
@slow
class SameRowsUnderLoad(unittest.TestCase):
    def grade(self, folder: Path) -> list:
        done = subprocess.run([sys.executable, "-m", "grader", "--simulator", "--submission", str(self.submission),
                               "--lab", LAB[:2], "--seed", SEED, "--quiet", "--build-dir", str(folder / "build"),
                               "--results", str(folder / "results.json")], cwd=KIT, capture_output=True, text=True,
                              timeout=3600)
        self.assertIn(done.returncode, (0, 1), done.stdout + done.stderr)
        return rows(folder / "results.json")

    def test_idle_and_busy_machines_give_the_same_rows(self):
        with tempfile.TemporaryDirectory(prefix="ppl-load-") as tmp:
            tmp = Path(tmp)
            self.submission = tmp / "submission"
            (self.submission / LAB).mkdir(parents=True)
            shutil.copyfile(HONEST_SLOW, self.submission / LAB / "scan.cu")
            idle = self.grade(tmp / "idle")
            busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(BUSY_PER_CORE * (os.cpu_count() or 1))]
            try:
                loaded = self.grade(tmp / "busy")
            finally:
                for p in busy:
                    p.kill()
                    p.wait()
        self.assertEqual(loaded, idle)
        groups = [r for r in idle if r[0].split(": ", 1)[-1] in ("datasets", "edge sizes")]
        self.assertTrue(groups and all(status == "pass" for _, status, _ in groups), idle)  # honest: its points


if __name__ == "__main__":
    unittest.main()
