"""grader/gradescope.py and grader/report/report.py, Gradescope's side, without compiling anything: a simulator's
results made pending (not failed), visibility per row from labs.toml, the output format (markdown and HTML that show a
student's text as written), the anonymous leaderboard of measured speedups, and late work from the runner's
submission_metadata.json, all in the results.json Gradescope reads."""
import contextlib
import copy
import io
import json
import tempfile
import tomllib
import unittest
from pathlib import Path
from unittest import mock

from grader import gradescope
from grader.config import DEFAULT_PATH, parse_config
from grader.report.report import NEEDS_GPU, NOT_GRADED, Report, gradescope_results, pending, render, student_view
from grader.score.score import HAZARD, TestResult, hang_note
from tests.grader.fakes import kit_labs_text

LATE = """
[late]
due = 2026-12-01T23:59:00-05:00
penalty_per_day = 0.1
"""


def config(extra: str = "", edit=None):
    text = kit_labs_text()
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
    report.simulator = True
    report.notes = ["Graded on the kit's CPU simulator (--simulator), not a GPU: ... Grade on a GPU for the full "
                    "marks."]
    return report


class Pending(unittest.TestCase):
    def test_what_the_simulator_leaves_to_a_gpu_is_pending(self):
        data, waiting = pending(gradescope_results(sim_report()))
        self.assertEqual(waiting, 60)
        tests = {t["extra_data"]["test"]: t for t in data["tests"]}
        for name in ("large sizes", "performance"):
            self.assertEqual((tests[name]["score"], tests[name]["max_score"]), (0, 0))
            self.assertNotIn("status", tests[name])
            self.assertTrue(tests[name]["output"].startswith("pending: graded on the course's GPU"))
        self.assertIn("(50 points)\nOn the simulator: speed is measured on a GPU\nThe simulator's counts",
                      tests["performance"]["output"])
        self.assertEqual(tests["datasets"]["status"], "passed")
        banner = gradescope.simulator_banner(data)[0]
        self.assertIn("graded now (40 of 40 points). Performance and the tests the simulator cannot run (60 points) "
                      "are pending", banner)

    def test_a_kernel_the_simulator_cannot_run_is_pending_too(self):
        report = sim_report()
        report.results[1] = TestResult("03-sequential", "datasets", 10, 0, NOT_GRADED, "not graded on the simulator")
        data, waiting = pending(gradescope_results(report))
        self.assertEqual(waiting, 70)
        self.assertEqual(data["tests"][1]["max_score"], 0)

    def test_a_bonus_lab_pends_outside_the_total(self):
        report = sim_report()
        for r in report.results:
            r.bonus = True
        self.assertEqual(pending(gradescope_results(report))[1], 0)


class Settings(unittest.TestCase):
    def test_visibility_per_row(self):
        def hide(text):
            text = text.replace('name = "edge sizes"\npoints = 15\n', 'name = "edge sizes"\npoints = 15\n'
                                'visibility = "after_due_date"\n', 1)
            text = text.replace("hazard_cost = 1.0", "hazard_cost = 0.0", 1)
            return text.replace("[labs.03-sequential.performance]\n",
                                '[labs.03-sequential.performance]\nvisibility = "after_published"\n', 1)
        cfg = config('[gradescope]\nvisibility = "after_due_date"\n', hide)
        with tempfile.TemporaryDirectory() as tmp:
            data = gradescope.finish(gradescope_results(sim_report()), cfg, cfg.select("03"), Path(tmp))
        seen = {t["extra_data"]["test"]: t["visibility"] for t in data["tests"]}
        # a row is shown no sooner than the rows its result tells of: later groups (a hang skips them), the
        # sanitizers row (likewise), performance (after every other row passed)
        self.assertEqual(seen, {"static checks": "visible", "datasets": "visible", "edge sizes": "after_due_date",
                                "exact integer data": "after_due_date", "large sizes": "after_due_date",
                                "sanitizers": "after_due_date", "performance": "after_published"})
        self.assertEqual(data["visibility"], "after_due_date")
        self.assertEqual(data["stdout_visibility"], "after_published")
        self.assertEqual(data["output_format"], "text")

    def test_a_hazard_cost_ties_every_row_to_the_sanitizers_row(self):
        cfg = config(edit=lambda text: text.replace('name = "large sizes"\n', 'name = "large sizes"\n'
                                                    'visibility = "after_due_date"\n', 1))
        with tempfile.TemporaryDirectory() as tmp:
            data = gradescope.finish(gradescope_results(sim_report()), cfg, cfg.select("03"), Path(tmp))
        seen = {t["extra_data"]["test"]: t["visibility"] for t in data["tests"]}
        self.assertEqual(seen.pop("static checks"), "visible")
        self.assertEqual(set(seen.values()), {"after_due_date"})

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


def on_gradescope(report: Report, cfg, metadata=None) -> dict:
    """What grader/gradescope.py's grade() hands Gradescope when the grader run (on the simulator) reports report:
    the real path from the grader's results.json to the one Gradescope reads, the grader itself faked."""
    with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
        root = Path(tmp)
        (root / "submission").mkdir()
        (root / "submission" / "03-sequential.cu").write_text("// the student's file\n")
        if metadata is not None:
            (root / "submission_metadata.json").write_text(json.dumps(metadata))
        folder = root / "work" / "submission"
        data = json.loads(json.dumps(gradescope_results(report)).replace("SUBMISSION_FOLDER", str(folder.resolve())))
        with mock.patch.object(gradescope, "load_kit_config", return_value=cfg), \
                mock.patch.object(gradescope, "nvcc_missing", return_value=False), \
                mock.patch.object(gradescope, "on_simulator", return_value=True), \
                mock.patch.object(gradescope, "grade_once", return_value=(1, "the table", copy.deepcopy(data))), \
                contextlib.redirect_stdout(io.StringIO()):
            return gradescope.grade(root, "03")


def hidden(text: str) -> str:
    """labs.toml with lab 03's "exact integer data" shown after the due date, and hazards costing no points (so
    that the groups before it can be shown at once: with hazard_cost every group shows the sanitizers row)."""
    text = text.replace('name = "exact integer data"\n', 'name = "exact integer data"\nvisibility = "after_due_date"\n',
                        1)
    return text.replace("hazard_cost = 1.0", "hazard_cost = 0.0", 1)


LATE_METADATA = {"created_at": "2026-12-02T10:00:00-05:00", "assignment": {"due_date": "2026-12-08T23:59:00-05:00"}}


def failing_hidden(how: str) -> Report:
    """sim_report() with a kernel that fails lab 03's "exact integer data" only: a wrong sum, a hang (the later
    groups not run, the hang named under the table), or a race seen only in that group's runs (hazard_cost 0)."""
    report = sim_report()
    lab = "03-sequential"
    if how == "wrong":
        report.results[3] = TestResult(lab, "exact integer data", 15, 0, "FAIL", "n=1025: 1024 / expected 1025",
                                       "to reproduce on the simulator, from the kit's root: make sim LAB=03 "
                                       "SUBMISSION=SUBMISSION_FOLDER ARGS='--n 1025 --data integer'")
    elif how == "hang":
        report.results[3] = TestResult(lab, "exact integer data", 15, 0, "TIMEOUT", "n=1025: ran past 60 s")
        report.results[4] = TestResult(lab, "large sizes", 10, 0, "not run", "not run: an earlier test of this lab "
                                                                             "timed out")
        report.results[5] = TestResult(lab, "sanitizers", 0, 0, "not run", "not run: an earlier test timed out")
        report.notes.append(hang_note([lab]))
    elif how == "race":
        report.results[5] = TestResult(lab, "sanitizers", 0, 0, "FAIL", "the simulator found: [shared-race] "
                                       "SUBMISSION_FOLDER/03-sequential/reduce.cu:31", data={"hazards": ["x"]})
    report.results[6].detail = "" if how != "race" else report.results[6].detail  # no counts after a failure
    return report


class HiddenGroups(unittest.TestCase):
    """A group shown after the due date: nothing a student sees before then tells whether it passed."""

    def test_failing_only_the_hidden_group_shows_the_same_as_passing_it(self):
        cfg = config(LATE, hidden)
        passing = student_view(on_gradescope(sim_report(), cfg, LATE_METADATA))
        shown = [t["name"] for t in passing["tests"]]
        self.assertEqual(shown, ["03-sequential: static checks", "03-sequential: datasets",
                                 "03-sequential: edge sizes", "03-sequential: late penalty"])
        self.assertIsNone(passing["score"])
        self.assertFalse(passing["stdout"])
        for how in ("wrong", "hang", "race"):
            with self.subTest(how):
                failing = student_view(on_gradescope(failing_hidden(how), cfg, LATE_METADATA))
                self.assertEqual(failing, passing)

    def test_late_work_applied_before_the_visibility_waits_too(self):
        """A class's results.json (make grade-class) carries one penalty row per lab, made before any visibility:
        when it comes back to Gradescope (make gradescope CLASS=), that row waits with the rows it costs."""
        import datetime as dt
        from grader.score import late
        from grader.report.report import set_visibility
        cfg = config(LATE, hidden)
        due = dt.datetime(2026, 12, 1, 23, 59, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
        item = late.Lateness("03-sequential", due + dt.timedelta(hours=10), due, 1, 0.1, source="labs.toml")
        views = []
        for report in (sim_report(), failing_hidden("wrong")):
            data = set_visibility(late.apply(gradescope_results(report), [item]), cfg.select("03"))
            views.append(student_view(gradescope.withhold(data)))
        self.assertEqual(views[0], views[1])
        self.assertNotIn("03-sequential: late penalty", [t["name"] for t in views[0]["tests"]])

    def test_what_is_shown_now_is_its_own_total(self):
        cfg = config(LATE, hidden)
        data = on_gradescope(sim_report(), cfg, LATE_METADATA)
        self.assertIn("Total 22.50 / 25 (after a late penalty of 2.50) for the tests shown now", data["output"])
        self.assertIn("graded now (25 of 25 points of the tests shown now)", data["output"])
        self.assertIn("-2.5 of 25) (of the tests shown now)", data["output"])
        self.assertEqual(data["score"], 36)  # recorded: 40 less 10%, for when the rest is shown
        self.assertEqual(sorted(t["score"] for t in data["tests"] if t["extra_data"]["test"] == "late penalty"),
                         [-2.5, -1.5])


class TrueText(unittest.TestCase):
    def test_the_printed_total_is_the_recorded_score(self):
        data = on_gradescope(sim_report(), config(LATE), LATE_METADATA)
        self.assertEqual(data["score"], 36)
        total = next(line for line in data["output"].splitlines() if line.startswith("Total "))
        self.assertEqual(total, "Total 36 / 40 (after a late penalty of 4)")

    def test_only_points_that_can_still_come_are_pending(self):
        report = sim_report()  # a blank skeleton: every group the simulator runs fails
        for k in (1, 2, 3):
            r = report.results[k]
            report.results[k] = TestResult(r.lab, r.name, r.max_score, 0, "FAIL", "n=2: 1 / expected 2")
        report.results[6].detail = ""
        data = on_gradescope(report, config())
        self.assertEqual(data["extra_data"]["pending_points"], 10)  # large sizes: a GPU grades it whatever the rest
        perf = data["tests"][-1]
        self.assertEqual((perf["score"], perf["max_score"], perf["status"]), (0, 50, "failed"))
        self.assertIn("datasets did not", perf["output"])
        self.assertIn("graded now (0 of 90 points). Performance and the tests the simulator cannot run (10 points) "
                      "are pending", data["output"])
        self.assertIn("Total 0 / 90", data["output"])

    def test_reproduction_lines_run_in_the_students_own_copy(self):
        data = on_gradescope(failing_hidden("wrong"), config())
        self.assertIn("from the kit's root: make sim LAB=03 ARGS='--n 1025 --data integer'", data["tests"][3]["output"])
        data = on_gradescope(failing_hidden("race"), config())
        self.assertIn("the simulator found: [shared-race] labs/03-sequential/reduce.cu:31",
                      data["tests"][5]["output"])
        self.assertNotIn("/work/submission", json.dumps(data))


if __name__ == "__main__":
    unittest.main()
