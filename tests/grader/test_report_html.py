"""grader/report/report_html.py (build/grade/report.html) and grader/report/charts.py: the page's table and chart for a
graded run, for a run without a GPU and on the simulator; the student's output stays text however hostile; grade.py
writes the page beside results.json. tests/grader/test_report_browser.py renders the same pages in headless Chromium."""
import contextlib
import io
import sys
import tempfile
import unittest
from html.parser import HTMLParser
from pathlib import Path
from unittest import mock

from grader.report import charts, report_html
from grader.config import load_config
from grader.grade import main
from grader.patterns import KIT
from grader.report.report import Report
from grader.score.score import TestResult, no_device
from tests.grader.fakes import PASS, SMALL_TOML, write_file
from tests.grader.test_grade import GradingRun, harness_ok

HOSTILE = '<script>alert(1)</script></pre></svg><img src=x onerror="alert(2)">'
H100 = "NVIDIA H100 80GB HBM3"


class Tags(HTMLParser):
    """Every start tag and its attributes, as a browser's parser would see them."""

    def __init__(self, text):
        super().__init__()
        self.tags = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def names(self):
        return [t for t, _ in self.tags]


def graded_report(device=H100, hostile="") -> Report:
    """Lab 03 timed at 2.30x baseline, lab 06 at 0.45x of CUB, lab 05 whose performance did not run."""
    r = Report("labs" + hostile, 7, device=device)
    for lab in ("03-sequential", "05-coarsened", "06-scan"):
        r.results.append(TestResult(lab, "static checks", 0, 0, "pass", "nothing forbidden"))
        r.results.append(TestResult(lab, "small sizes", 10, 10, "pass", "3 runs passed"))
    r.results.append(TestResult("03-sequential", "performance", 50, 40, "partial", "2.30x baseline" + hostile,
                                "details" + hostile, {"speedup": 2.3, "lower": 1.16, "full": 2.52}))
    r.results.append(TestResult("05-coarsened", "performance", 50, 0, "not run",
                                "not run: every correctness test must pass first"))
    r.results.append(TestResult("06-scan", "performance", 50, 50, "pass", "0.45x of CUB",
                                "", {"speedup": 0.45, "lower": 0.25, "full": 0.5}))
    r.results[1].status, r.results[1].score, r.results[1].summary = "FAIL", 0, "wrong sum" + hostile
    r.results[1].detail = "yours 1 / expected 2" + hostile
    r.notes.append("a note" + hostile)
    return r


def labs(*names):
    config = load_config()
    return [lab for lab in config.labs if lab.name in names] if names else list(config.labs)


class Short(unittest.TestCase):
    """assertIn and assertNotIn that do not print a whole page when they fail."""

    def assertIn(self, member, container, msg=None):
        self.assertTrue(member in container, msg or f"{member!r} not found")

    def assertNotIn(self, member, container, msg=None):
        self.assertTrue(member not in container, msg or f"{member!r} found")


class Page(Short):
    def test_measured_run_has_the_table_and_the_chart(self):
        page = report_html.page(graded_report(), labs())
        tags = Tags(page)
        self.assertEqual(tags.names().count("svg"), 1, "one inline chart")
        self.assertIn("Total 110 / 180", page)
        for text in ("03-sequential", "small sizes", "partial", "2.30x", "0.45", "not run: every correctness test"):
            self.assertIn(text, page)
        chart = page[page.index("<svg"):page.index("</svg>")]
        self.assertIn("2.30x", chart)  # the student's point, labelled
        self.assertIn("2.80x", chart)  # lab 03's reference on the H100, from labs.toml
        self.assertNotIn("2.81x", chart)  # the H200's is not this GPU's
        self.assertIn("not run: every", chart)  # lab 05's column says why it has no point
        self.assertNotIn("Performance was not measured", page)

    def test_a_simulator_run_says_so_at_the_top(self):
        report = graded_report()
        report.simulator = True
        page = report_html.page(report, labs())
        top = page[:page.index("<h2>Labs</h2>")]
        self.assertIn("graded on the simulator (no GPU)", top)
        self.assertNotIn("graded on the simulator", report_html.page(graded_report(), labs()))

    def test_only_graded_labs_are_charted(self):
        chart = report_html.chart_columns(graded_report(), labs())[0]
        self.assertEqual([c.lab for c in chart], ["03-sequential", "05-coarsened", "06-scan"])
        self.assertEqual(chart[0].yours, 2.3)
        self.assertEqual((chart[0].lower, chart[0].full), (1.16, 2.52))
        self.assertIsNone(chart[1].yours)

    def test_student_output_stays_text(self):
        page = report_html.page(graded_report(device=H100 + HOSTILE, hostile=HOSTILE), labs())
        tags = Tags(page)
        self.assertNotIn("script", tags.names())
        self.assertNotIn("img", tags.names())
        self.assertEqual(tags.names().count("svg"), 1)
        handlers = [(t, a) for t, attrs in tags.tags for a in attrs if a.lower().startswith("on")]
        self.assertEqual(handlers, [])
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", page)
        self.assertIn("default-src 'none'", page)  # no script would run even if one got through

    def test_no_device_says_performance_was_not_measured(self):
        r = Report("labs", 7, no_device=True)
        for lab in labs():
            r.results.append(no_device(lab.name, "performance", 50))
        page = report_html.page(r, labs())
        self.assertIn("Performance was not measured: this machine has no GPU.", page)
        chart = page[page.index("<svg"):page.index("</svg>")]
        self.assertIn("Performance was not measured", chart)
        self.assertIn("2.81x", chart)  # what is known: each calibrated GPU's reference
        self.assertIn("2.80x", chart)
        self.assertIn("no GPU here", chart)
        self.assertNotIn("yours 0", page)

    def test_simulator(self):
        r = Report("labs", 7)
        r.results.append(TestResult("03-sequential", "performance", 50, 0, "needs GPU", "needs a GPU"))
        page = report_html.page(r, labs("03-sequential"))
        self.assertIn("the simulator measures no time (make sim gives an estimate", page)

    def test_without_matplotlib_the_page_says_why(self):
        with mock.patch.dict(sys.modules, {"matplotlib": None}):
            page = report_html.page(graded_report(), labs())
        self.assertNotIn("<svg", page)
        self.assertIn("The chart is not drawn: matplotlib is not installed", page)
        self.assertIn("03-sequential", page)

    def test_write_never_raises(self):
        with tempfile.TemporaryDirectory() as tmp:
            blocker = Path(tmp) / "file"
            blocker.write_text("x")
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertIsNone(report_html.write(graded_report(), labs(), blocker / "results.json"))
            self.assertIn("report.html not written", err.getvalue())


class Chart(Short):
    def test_same_data_same_svg(self):
        cols = [charts.Column("03-sequential", yours=2.0, lower=1.0, full=2.5, references={"a": 2.8})]
        first = charts.speedup_chart(cols, title="t")
        self.assertEqual(first, charts.speedup_chart(cols, title="t"))
        self.assertTrue(first.lstrip().startswith("<?xml"))
        self.assertTrue(charts.inline_svg(first).startswith("<svg"))

    def test_text_is_plain(self):
        """A dollar sign is not mathtext and markup is escaped."""
        cols = [charts.Column("03-sequential", why_not="$x^2$ <b>", references={"<i>GPU</i>": 1.0})]
        svg = charts.speedup_chart(cols, title="$a$ </svg><script>")
        self.assertIn("$a$ &lt;/svg&gt;&lt;script&gt;", svg)
        self.assertNotIn("<script", svg)
        self.assertNotIn("<i>", svg)


    def test_preload_imports_what_the_chart_needs(self):
        """charts.preload() imports CHART_MODULES in a thread of its own (a fresh interpreter, so that nothing was
        imported before), and the chart drawn after it needs no other matplotlib module than those and theirs."""
        import subprocess
        code = ("import sys; from grader.report import charts; charts.preload().join(); "
                "print(all(m in sys.modules for m in charts.CHART_MODULES)); before = set(sys.modules); "
                "charts.speedup_chart([charts.Column('03-sequential', yours=2.0, references={'a': 2.8})], title='t'); "
                "print(sorted(m for m in set(sys.modules) - before if m.startswith('matplotlib.')))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=KIT, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.split("\n")[:2], ["True", "[]"], done.stdout)


class GradeWritesThePage(GradingRun):
    def test_report_html_beside_results(self):
        config = write_file(self.dir, "labs.toml", SMALL_TOML)
        self.submission = submission = self.dir / "sub"
        for lab in ("01-first", "02-second"):
            write_file(submission, f"{lab}/reduce.cu", "// a student's file\n")
        results = self.dir / "out" / "results.json"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(["--config", str(config), "--submission", str(submission), "--build-dir", str(self.dir / "build"),
                  "--results", str(results)], kit=self.kit,
                 build=self.build_hook({"01-first": self.fake(PASS), "02-second": self.fake(PASS)},
                                       load_config(config)),
                 build_harness=harness_ok, check=self.check_hook)
        page = (self.dir / "out" / "report.html").read_text()
        self.assertIn("01-first", page)
        self.assertIn("<svg", page)
        self.assertIn("100.00x", page)  # the fake benchmark's speedup, on the chart


if __name__ == "__main__":
    unittest.main()
