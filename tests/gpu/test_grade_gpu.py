"""grader/grade.py end to end on a real GPU: the solutions get full marks, the blank labs and the deliberately wrong
submissions in tests/wrong/ lose their points, and nothing crashes or hangs.

Skipped, with the reason, when `nvidia-smi -L` finds no GPU. Each test grades in a fresh build folder; the harness
objects are shared (build/harness/<arch>). A full run takes a few minutes (the benchmarks and the 2 GiB case).
"""
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]
GRADE = KIT / "grader" / "grade.py"
LABS = ["01-global-strided", "02-shared-strided", "03-sequential", "04-unrolled", "05-coarsened"]
PERFORMANCE = "performance"
GRADE_TIMEOUT = 1800  # seconds for one whole grading run


def no_gpu_reason() -> str | None:
    """Why these tests cannot run here, or None when nvidia-smi lists a GPU."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "no NVIDIA GPU here (nvidia-smi is not installed); these tests grade on a real GPU"
    try:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"no NVIDIA GPU here (nvidia-smi -L failed: {e})"
    if listed.returncode != 0 or "GPU" not in listed.stdout:
        return f"no NVIDIA GPU here (nvidia-smi -L: {(listed.stdout + listed.stderr).strip()[:200]})"
    return None


def setUpModule():
    reason = no_gpu_reason()
    if reason:
        raise unittest.SkipTest(reason)


class GradeOnGPU(unittest.TestCase):
    def grade(self, submission, lab=None):
        """Runs grade.py on submission (relative to the kit) and returns (exit status, table, {name: test})."""
        with tempfile.TemporaryDirectory() as build:
            results = Path(build) / "results.json"
            argv = [sys.executable, str(GRADE), "--submission", str(KIT / submission), "--build-dir", build,
                    "--results", str(results), *(["--lab", lab] if lab else [])]
            done = subprocess.run(argv, cwd=KIT, capture_output=True, text=True, timeout=GRADE_TIMEOUT)
            if not results.exists():
                self.fail(f"grade.py wrote no results.json (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
            tests = {t["name"]: t for t in json.loads(results.read_text())["tests"]}
        self.assertNotEqual(done.returncode, 77, "the harness found no CUDA device although nvidia-smi lists one")
        return done.returncode, done.stdout, tests

    def test_solutions_get_full_marks(self):
        status, table, tests = self.grade("solutions")
        self.assertEqual({name.split(":")[0] for name in tests}, set(LABS))
        lost = [f"{n}: {t['score']}/{t['max_score']}: {t['output']}" for n, t in tests.items()
                if t["score"] < t["max_score"]]
        self.assertEqual(lost, [], table)
        self.assertEqual(status, 0, table)

    def test_blank_labs_score_no_correctness_points(self):
        status, table, tests = self.grade("labs")
        self.assertEqual(status, 1, table)
        for name, test in tests.items():
            self.assertEqual(test["score"], 0, f"{name}: {test['output']}\n{table}")
            for sign in ("timed out", "crashed with signal", "CUDA error", "does not compile", "harness rejected"):
                self.assertNotIn(sign, test["output"], f"{name}\n{table}")
            if not name.endswith(PERFORMANCE):
                self.assertIn("wrong sum", test["output"], f"{name}\n{table}")

    def assert_wrong(self, submission, lab):
        status, table, tests = self.grade(submission, lab)
        self.assertEqual(status, 1, table)
        exact = tests[f"{lab}: exact integer data"]
        self.assertEqual(exact["score"], 0, table)
        self.assertIn("wrong sum", exact["output"], table)
        self.assertEqual(tests[f"{lab}: {PERFORMANCE}"]["score"], 0, table)

    def test_dropping_the_last_element_fails(self):
        self.assert_wrong("tests/wrong/drop-one", "03-sequential")

    def test_counting_an_element_twice_fails(self):
        self.assert_wrong("tests/wrong/double-count", "04-unrolled")


if __name__ == "__main__":
    unittest.main()
