"""grader/gradescope.py and grader/report.py, Gradescope's side, without compiling anything: a simulator's results
made pending (not failed), visibility per row from labs.toml, the output format (markdown and HTML that show a
student's text as written), the anonymous leaderboard of measured speedups, and late work from the runner's
submission_metadata.json, all in the results.json Gradescope reads."""
import json
import tempfile
import tomllib
import unittest
from pathlib import Path

from grader import gradescope
from grader.config import DEFAULT_PATH, parse_config
from grader.report import Report, gradescope_results, render
from grader.score import TestResult
from grader.simulator import NEEDS_GPU, NOT_GRADED

LATE = """
[late]
due = 2026-12-01T23:59:00-05:00
penalty_per_day = 0.1
"""


def config(extra: str = "", edit=None):
    text = DEFAULT_PATH.read_text()
    text = edit(text) if edit else text
    return parse_config(tomllib.loads(text + extra), DEFAULT_PATH)


def sim_report() -> Report:
    """What grade.py --simulator reports for lab 03's reference solution (the numbers of a real run)."""
    lab = "03-sequential"
    report = Report("submission", 7)
    report.results = [TestResult(lab, "static checks", 0, 0, "pass", "nothing forbidden"),
                      TestResult(lab, "datasets", 10, 10, "pass", "25 cases passed in 25 runs"),
                      TestResult(lab, "edge sizes", 15, 15, "pass", "16 cases passed"),
                      TestResult(lab, "exact integer data", 15, 15, "pass", "16 cases passed"),
                      TestResult(lab, "large sizes", 10, 0, NEEDS_GPU, "sizes up to 536870913 elements are too "
                                                                        "large for the simulator (at most 2097152)"),
                      TestResult(lab, "sanitizers", 0, 0, "pass", "the simulator found no races"),
                      TestResult(lab, "performance", 50, 0, NEEDS_GPU, "speed is measured on a GPU",
                                 "The simulator's counts for --n 65537:\n== kernel reduce_kernel")]
    report.notes = ["Graded on the kit's CPU simulator (--simulator), not a GPU: ... Grade on a GPU for the full "
                    "marks."]
    return report


class Pending(unittest.TestCase):
    def test_what_the_simulator_leaves_to_a_gpu_is_pending(self):
        data, waiting = gradescope.pending(gradescope_results(sim_report()))
        self.assertEqual(waiting, 60)
        tests = {t["extra_data"]["test"]: t for t in data["tests"]}
        for name in ("large sizes", "performance"):
            self.assertEqual((tests[name]["score"], tests[name]["max_score"]), (0, 0))
            self.assertNotIn("status", tests[name])
            self.assertTrue(tests[name]["output"].startswith("pending: graded on the course's GPU"))
        self.assertIn("(50 points)\nOn the simulator: speed is measured on a GPU\nThe simulator's counts",
                      tests["performance"]["output"])
        self.assertEqual(tests["datasets"]["status"], "passed")
        banner = gradescope.simulator_banner(data, waiting)[0]
        self.assertIn("graded now (40 of 40 points). Performance and the tests the simulator cannot run (60 points) "
                      "are pending", banner)

    def test_a_kernel_the_simulator_cannot_run_is_pending_too(self):
        report = sim_report()
        report.results[1] = TestResult("03-sequential", "datasets", 10, 0, NOT_GRADED, "not graded on the simulator")
        data, waiting = gradescope.pending(gradescope_results(report))
        self.assertEqual(waiting, 70)
        self.assertEqual(data["tests"][1]["max_score"], 0)

    def test_a_bonus_lab_pends_outside_the_total(self):
        report = sim_report()
        for r in report.results:
            r.bonus = True
        self.assertEqual(gradescope.pending(gradescope_results(report))[1], 0)


class Settings(unittest.TestCase):
    def test_visibility_per_row(self):
        def hide(text):
            text = text.replace('name = "edge sizes"\npoints = 15\n', 'name = "edge sizes"\npoints = 15\n'
                                'visibility = "after_due_date"\n', 1)
            return text.replace("[labs.03-sequential.performance]\n",
                                '[labs.03-sequential.performance]\nvisibility = "after_published"\n', 1)
        cfg = config('[gradescope]\nvisibility = "after_due_date"\n', hide)
        with tempfile.TemporaryDirectory() as tmp:
            data = gradescope.finish(gradescope_results(sim_report()), cfg, cfg.select("03"), Path(tmp))
        seen = {t["extra_data"]["test"]: t["visibility"] for t in data["tests"]}
        self.assertEqual(seen, {"static checks": "visible", "datasets": "visible", "edge sizes": "after_due_date",
                                "exact integer data": "visible", "large sizes": "visible", "sanitizers": "visible",
                                "performance": "after_published"})
        self.assertEqual(data["visibility"], "after_due_date")
        self.assertEqual(data["output_format"], "text")

    def test_markdown_and_html_show_a_students_text_as_written(self):
        text = "reduce.cu does not compile\nreduce.cu(2): error: *x* <script>alert(1)</script> ```"
        md = render(text, "md", detail_after_first=True)
        self.assertTrue(md.startswith("reduce\\.cu does not compile\n\n````text\nreduce.cu(2): error: *x* <script>"))
        self.assertTrue(md.endswith("```\n````"))
        html = render(text, "html", detail_after_first=True)
        self.assertEqual(html, "<p>reduce.cu does not compile</p>\n<pre>reduce.cu(2): error: *x* &lt;script&gt;"
                               "alert(1)&lt;/script&gt; ```</pre>")
        self.assertEqual(render("a *b*\n  indented", "md"), "a \\*b\\*\n\n```text\n  indented\n```")
        self.assertEqual(render("<b>", "simple_format"), "&lt;b&gt;")
        self.assertEqual(render(text, "text"), text)

    def test_the_output_format_is_applied_everywhere(self):
        cfg = config('[gradescope]\noutput_format = "md"\n')
        with tempfile.TemporaryDirectory() as tmp:
            data = gradescope.finish(gradescope_results(sim_report()), cfg, cfg.select("03"), Path(tmp))
        self.assertEqual((data["output_format"], data["test_output_format"]), ("md", "md"))
        self.assertTrue(all(t["output_format"] == "md" for t in data["tests"]))
        self.assertIn("\\-\\-simulator", data["output"])


class Leaderboard(unittest.TestCase):
    def test_measured_speedups_only(self):
        report = sim_report()
        self.assertNotIn("leaderboard", gradescope_results(report))
        report.results[-1] = TestResult("03-sequential", "performance", 50, 50, "pass", "2.81x baseline",
                                        data={"speedup": 2.8137, "yardstick": "baseline"})
        report.results.append(TestResult("06-scan", "performance", 50, 40, "partial", "0.45x of CUB",
                                         data={"speedup": 0.4512, "yardstick": "cub"}))
        self.assertEqual(gradescope_results(report)["leaderboard"],
                         [{"name": "03-sequential: x over the baseline", "value": 2.814, "order": "desc"},
                          {"name": "06-scan: x of CUB's speed", "value": 0.451, "order": "desc"}])


class LateWork(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="gradescope-late-")
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def finish(self, metadata=None, extra=LATE):
        if metadata is not None:
            (self.root / "submission_metadata.json").write_text(json.dumps(metadata))
        cfg = config(extra)
        return gradescope.finish(gradescope_results(sim_report()), cfg, cfg.select("03"), self.root)

    def test_a_late_submission(self):
        data = self.finish({"created_at": "2026-12-02T10:00:00-05:00", "users": [{"name": "Conan O'Brien"}],
                            "assignment": {"due_date": "2026-12-08T23:59:00-05:00"}})
        self.assertEqual(data["score"], 36)  # labs.toml's due date, not the assignment's: 1 day, 10% of 40
        self.assertEqual(data["tests"][-1]["name"], "03-sequential: late penalty")
        self.assertEqual(data["tests"][-1]["score"], -4)
        self.assertTrue(data["output"].startswith("Late work: 03-sequential: submitted 2026-12-02 10:00-05:00, "
                                                  "10 hours 1 minute late"), data["output"])

    def test_without_metadata_nothing_is_taken_off_and_it_says_why(self):
        data = self.finish()
        self.assertEqual(data["score"], 40)
        self.assertIn("Late work: not applied, the submission's time is unknown (cannot read", data["output"])

    def test_without_a_rule_nothing_is_late(self):
        data = self.finish({"created_at": "2027-01-01T00:00:00Z"}, extra="")
        self.assertEqual(data["score"], 40)
        self.assertNotIn("Late work", data["output"])


if __name__ == "__main__":
    unittest.main()
