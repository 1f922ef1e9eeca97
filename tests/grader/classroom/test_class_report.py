"""grader/classroom/class_report.py: the class's report.html from results.json files as grade-class writes them
(grader/report/report.py, with extra_data.labs), its numbers (pass rates, reasons, environment), what a student could
put in it kept text, and in Debian's headless Chromium (skipped without it): no console message (its one script
allowed by hash, a script of a student's never), a chart per lab painted, and the table sorted by its script."""
import base64
import contextlib
import hashlib
import io
import os
import re
import shutil
import tempfile
import unittest
from pathlib import Path

from grader.classroom import class_charts, class_report
from grader.config import load_config
from grader.report.report import Report, write_results
from grader.score.score import TestResult, no_device
from tests.grader.test_report_browser import CHROMIUM, chromium, console_lines, has_colour

HOSTILE = "<script>alert(1)</script>"
DEVICE = "NVIDIA H100 80GB HBM3"
SCORES_RGB = tuple(int(class_charts.SCORES[k:k + 2], 16) for k in (1, 3, 5))
SPEEDUPS_RGB = tuple(int(class_charts.SPEEDUPS[k:k + 2], 16) for k in (1, 3, 5))


def graded(student: str, labs, speedups: dict, failing=(), device=DEVICE, summary="wrong sum") -> Report:
    """A Report as the grader makes it: each lab's groups pass but those in failing ({lab: group}), and its
    performance scored at speedups[lab] (missing: not run)."""
    report = Report(student, 7, device=device)
    for lab in labs:
        report.results.append(TestResult(lab.name, "static checks", 0, 0, "pass", "nothing forbidden"))
        for group in lab.groups:
            ok = group.name not in failing.get(lab.name, ())
            report.results.append(TestResult(lab.name, group.name, group.points, group.points if ok else 0,
                                             "pass" if ok else "FAIL", "passed" if ok else
                                             f"n = {len(student) * 100 + 1}: {summary}"))
        speedup = speedups.get(lab.name)
        perf = lab.performance
        if speedup is None:
            report.results.append(TestResult(lab.name, "performance", perf.points, 0, "not run", "not run: a "
                                             "correctness test failed"))
            continue
        lower, full, _ = perf.thresholds_for(device)
        share = min(1.0, max(0.0, (speedup - lower) / (full - lower)))
        report.results.append(TestResult(
            lab.name, "performance", perf.points, round(perf.points * share, 2),
            "pass" if share >= 1 else "partial" if share > 0 else "slow", f"{speedup:.2f}x",
            data={"speedup": speedup, "yardstick": perf.yardstick, "lower": lower, "full": full,
                  "bench": {"student_ms": 1.0 / speedup, "baseline_ms": 1.0, "spread": 0.01, "samples": 30},
                  "environment": {"gpu": device, "driver_version": "580.159.04", "cuda_runtime": "13.0",
                                  "sm_clock_mhz": 1980.0, "warnings": []}}))
    return report


def row_of(report: Report, name: str = "") -> dict:
    return {"student": report.submission, "name": name, "total": report.score, "max_score": report.max_score,
            "labs": {lab: round(sum(r.score for r in report.results if r.lab == lab), 2) for lab in report.labs()},
            "status": "graded", "notes": ""}


class ClassPages(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.out = Path(tmp.name)
        self.labs = load_config().select("03,06")
        self.lab3 = self.labs[0]
        first = self.lab3.groups[0].name
        plan = {"alice": ({"03-sequential": 2.8, "06-scan": 0.9}, {}),
                "bob": ({"03-sequential": 1.5, "06-scan": 0.5}, {}),
                "carol": ({"06-scan": 0.7}, {"03-sequential": (first,)}),
                "dave": ({}, {"03-sequential": (first,), "06-scan": (self.labs[1].groups[0].name,)})}
        self.rows = []
        for student, (speedups, failing) in plan.items():
            report = graded(student, self.labs, speedups, failing)
            write_results(report, self.out / "students" / student / "results.json")
            self.rows.append(row_of(report, f"{student.title()} {HOSTILE}" if student == "bob" else ""))
        self.rows.append({"student": "erin", "name": "", "total": 0, "max_score": self.rows[0]["max_score"],
                          "labs": {}, "status": "unreadable", "notes": f"not a zip {HOSTILE}"})
        self.rows.append({"student": "fred", "name": "", "total": 0, "max_score": 0, "labs": {},
                          "status": "not graded", "notes": "interrupted"})
        self.first = first

    def page(self, **kw) -> str:
        path = class_report.write(self.out, self.rows, self.labs, options={"mode": "gpu", "seed": 7},
                                  calibration=load_config().calibration, **kw)
        self.assertEqual(path, self.out / class_report.PAGE)
        return path.read_text()


class Numbers(ClassPages):
    def test_the_numbers_of_a_lab(self):
        students = [class_report.Student(row, class_report.read_results(self.out, row["student"]))
                    for row in self.rows]
        stats = class_report.lab_stats(self.lab3, students)
        self.assertEqual(len(stats.scores), 5)  # erin's 0 is a grade; fred was not graded
        self.assertEqual(stats.left_out, 1)
        self.assertEqual(stats.tests[self.first], [2, 0, 4])  # alice and bob passed, of the four with results
        self.assertEqual(stats.tests["performance"][2], 4)
        self.assertEqual(sorted(stats.speedups), [1.5, 2.8])
        lower, full, _ = self.lab3.performance.thresholds_for(DEVICE)
        self.assertEqual((stats.lower, stats.full), (lower, full))
        reasons = {key: who for key, who in stats.reasons.items() if key[0] == self.first}
        self.assertEqual(reasons, {(self.first, "FAIL", "n = #: wrong sum"): ["carol", "dave"]})

    def test_reasons_alike(self):
        for summary, reason in (("n = 1025: sum 12.5 != expected 13", "n = #: sum # != expected #"),
                                ("missing file: submission/03-sequential/reduce.cu", "missing file: submission/"
                                                                                     "03-sequential/reduce.cu"),
                                ("student12.zip is not a zip", "student12.zip is not a zip"),
                                ("0.45x baseline (full marks at 2.52x)", "#x baseline (full marks at #x)")):
            self.assertEqual(class_report.reason_text(summary), reason)

    def test_the_page(self):
        page = self.page()
        self.assertEqual(page.count("<svg"), 2)  # a figure per lab
        self.assertNotIn(HOSTILE, page)
        self.assertIn("Bob &lt;script&gt;alert(1)&lt;/script&gt;", page)
        self.assertIn("4 students graded on NVIDIA H100 80GB HBM3", page)
        self.assertIn("driver: 580.159.04", page)
        links = re.findall(r'<tr><td data-v="[a-z]+"><a href="students/[a-z]+/report.html">', page)
        self.assertEqual(len(links), 6)
        self.assertIn("6 students: 4 graded, 1 not graded, 1 unreadable", page)

    def test_its_one_script_is_allowed_by_its_hash(self):
        page = self.page()
        scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
        self.assertEqual(scripts, [class_report.SORT_SCRIPT])
        digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
        self.assertIn(f"script-src 'sha256-{digest}'", page)
        self.assertIn("default-src 'none'", page)

    def test_links_to_what_is_there(self):
        self.assertNotIn('href="similarity.html"', self.page())
        (self.out / "similarity.html").write_text("x")
        self.assertIn('href="similarity.html"', self.page())

    def test_cuda_versions_as_people_write_them(self):
        self.assertEqual([class_report.cuda_version(v) for v in (13000, 12080, "13.0", 0)], ["13.0", "12.8", "13.0",
                                                                                               "0"])

    def test_a_student_whose_labs_never_reached_the_gpu(self):
        report = graded("alice", self.labs, {}, {}, device=None)  # refused by the static checks: nothing ran
        write_results(report, self.out / "students" / "alice" / "results.json")
        page = self.page()
        self.assertIn("3 students graded on NVIDIA H100 80GB HBM3", page)
        self.assertIn("1 graded student ran nothing on a GPU (refused by the static checks, or no lab built)", page)

    def test_a_class_without_a_gpu(self):
        for row in self.rows[:4]:
            report = Report(row["student"], 7, no_device=True)
            for lab in self.labs:
                report.results += [no_device(lab.name, g.name, g.points) for g in lab.groups]
                report.results.append(no_device(lab.name, "performance", lab.performance.points))
            write_results(report, self.out / "students" / row["student"] / "results.json")
        page = class_report.write(self.out, self.rows, self.labs, options={"mode": "no-gpu"}).read_text()
        self.assertIn("no student was graded on a GPU (no-gpu run)", page)
        self.assertIn("no GPU in this grading", page)

    def test_a_failure_to_write_is_said_not_raised(self):
        (self.out / class_report.PAGE).mkdir()  # the page's place is taken
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertIsNone(class_report.write(self.out, self.rows, self.labs))
        self.assertIn("report.html not written: IsADirectoryError", err.getvalue())


@unittest.skipUnless(CHROMIUM, "chromium is not installed (Debian: apt-get install -y chromium)")
class Browser(ClassPages):
    def load(self, url_suffix: str = "") -> tuple:
        page = self.out / class_report.PAGE
        self.page()
        dom = chromium("--dump-dom", page.as_uri() + url_suffix, folder=self.out)
        self.assertEqual(dom.returncode, 0, dom.stderr[-2000:])
        shot = self.out / "class.png"
        painted = chromium(f"--screenshot={shot}", "--window-size=1200,2400", page.as_uri(), folder=self.out)
        self.assertEqual(painted.returncode, 0, painted.stderr[-2000:])
        if os.environ.get("PPL_KEEP_SCREENSHOTS"):  # to look at it: PPL_KEEP_SCREENSHOTS=DIR
            keep = Path(os.environ["PPL_KEEP_SCREENSHOTS"])
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, keep / "class-report.png")
        return dom.stdout, console_lines(dom.stderr) + console_lines(painted.stderr), shot

    def test_it_loads_paints_and_sorts(self):
        dom, console, shot = self.load("#sort=3-")  # by total, the highest first
        self.assertEqual(console, [])
        self.assertEqual(dom.count("<svg"), 2)
        order = re.findall(r'<tr><td data-v="([a-z]+)"><a', dom)
        totals = {row["student"]: row["total"] for row in self.rows}
        self.assertEqual(order, sorted(totals, key=lambda s: -totals[s]))
        self.assertIn('aria-sort="descending"', dom)
        self.assertGreater(has_colour(shot, SCORES_RGB), 400, "the points histograms are not painted")
        self.assertGreater(has_colour(shot, SPEEDUPS_RGB), 200, "the speedup histograms are not painted")

    def test_sorting_by_a_text_column(self):
        dom, console, _ = self.load("#sort=0")
        self.assertEqual(console, [])
        self.assertEqual(re.findall(r'<tr><td data-v="([a-z]+)"><a', dom), sorted(r["student"] for r in self.rows))


if __name__ == "__main__":
    unittest.main()
