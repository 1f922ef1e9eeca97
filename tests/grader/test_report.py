"""grader/report/report.py: results.json's extra_data.labs, the numbers of each lab that the class report, the gradebook
and scripts read (lab_numbers)."""
import math
import unittest

from grader.report.report import Report, gradescope_results, lab_numbers
from grader.score.score import TestResult


class LabNumbers(unittest.TestCase):
    def report(self) -> Report:
        report = Report("alice", 7)
        report.results = [
            TestResult("03-sequential", "static checks", 0, 0, "pass"),
            TestResult("03-sequential", "datasets", 20, 20, "pass"),
            TestResult("03-sequential", "performance", 30, 15, "partial", "1.84x",
                       data={"speedup": 1.84, "yardstick": "baseline", "lower": 1.16, "full": 2.52, "credited": 1.9,
                             "bench": {"student_ms": 0.25, "baseline_ms": 0.46, "spread": 0.012, "samples": 30,
                                       "device": "GPU"}}),
            TestResult("06-scan", "datasets", 20, 0, "FAIL", "wrong"),
            TestResult("06-scan", "performance", 30, 0, "not run", "not run: a test failed"),
            TestResult("08-single-pass", "performance", 35, 0, "needs GPU", "counts below", bonus=True,
                       data={"estimate": {"gpu": "H100", "speedup": None}, "counts": {"warp_instructions": 12}}),
            TestResult("09-nan", "performance", 10, 0, "ERROR", "", data={"speedup": math.nan})]
        return report

    def test_each_lab(self):
        numbers = lab_numbers(self.report())
        self.assertEqual(numbers["03-sequential"], {
            "score": 35.0, "max_score": 50.0, "bonus": False,
            "tests": {"static checks": "pass", "datasets": "pass", "performance": "partial"},
            "speedup": 1.84, "yardstick": "baseline", "lower": 1.16, "full": 2.52, "credited": 1.9,
            "student_ms": 0.25, "baseline_ms": 0.46, "spread": 0.012, "samples": 30.0})
        self.assertEqual(numbers["06-scan"]["tests"], {"datasets": "FAIL", "performance": "not run"})
        self.assertNotIn("speedup", numbers["06-scan"])
        self.assertEqual((numbers["08-single-pass"]["bonus"], numbers["08-single-pass"]["counts"],
                          numbers["08-single-pass"]["estimate"]["gpu"]), (True, {"warp_instructions": 12}, "H100"))
        self.assertNotIn("speedup", numbers["09-nan"])  # not a measurement

    def test_in_results_json(self):
        extra = gradescope_results(self.report())["extra_data"]
        self.assertEqual(sorted(extra["labs"]), ["03-sequential", "06-scan", "08-single-pass", "09-nan"])


class SimulatorResults(unittest.TestCase):
    def test_what_needs_a_gpu_is_pending_not_failed(self):
        """results.json of make grade SIM=1 (grader/report/report.py) marks what the simulator leaves to a GPU as
        Gradescope's no-GPU path does (grader/report/report.py pending): no status, 0 of 0, its points kept; marking it
        again (the autograder reads this file) changes nothing."""
        from grader.report.report import pending
        report = Report("labs", 1, simulator=True)
        report.results = [TestResult("03", "small sizes", 10, 10, "pass"),
                          TestResult("03", "large sizes", 10, 0, "needs GPU", "too large for the simulator"),
                          TestResult("03", "performance", 50, 0, "needs GPU", "speed is measured on a GPU")]
        data = gradescope_results(report)
        tests = {t["extra_data"]["test"]: t for t in data["tests"]}
        self.assertEqual(tests["small sizes"]["status"], "passed")
        for name in ("large sizes", "performance"):
            self.assertNotIn("status", tests[name])
            self.assertEqual((tests[name]["score"], tests[name]["max_score"]), (0, 0))
            self.assertTrue(tests[name]["extra_data"]["pending"])
        self.assertEqual(data["extra_data"]["pending_points"], 60)
        again, waiting = pending(data)
        self.assertEqual(waiting, 60)
        self.assertEqual(again["tests"][1]["output"].count("pending:"), 1)

    def test_a_gpu_run_is_left_as_it_was(self):
        report = Report("labs", 1)
        report.results = [TestResult("03", "performance", 50, 0, "needs GPU", "x")]
        self.assertEqual(gradescope_results(report)["tests"][0]["status"], "failed")


if __name__ == "__main__":
    unittest.main()
