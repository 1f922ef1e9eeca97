"""report.html in a real browser: Debian's headless Chromium loads the page of a graded run (with hostile student
output) and of a run without a GPU, logs no console message (a script the page's policy blocked, a resource that did
not load, a parse error would each log one), keeps the chart as an SVG element in the page's DOM with the student's
point in it, and paints it: the screenshot holds the chart's colours. Skipped, saying why, where `chromium` is not
installed (apt-get install chromium). A control page with a blocked script proves the console check can fail."""
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.report import report_html
from grader.report.report import Report
from grader.score.score import no_device
from tests.grader.test_report_html import HOSTILE, graded_report, labs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TIMEOUT = 120
YOURS_RGB = (0xd9, 0x5f, 0x02)  # grader/report/charts.py's YOURS: the student's diamonds
REFERENCE_RGB = (0x8f, 0xb3, 0xd9)  # REFERENCE_COLOURS[0]: the reference bars


def chromium(*args, folder: Path) -> subprocess.CompletedProcess:
    """Runs headless Chromium with console messages on stderr; a profile of its own in folder."""
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
            f"--user-data-dir={folder / 'profile'}", "--enable-logging=stderr", "--v=0", *args]
    env = {**os.environ, "HOME": str(folder)}
    return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, env=env)


def console_lines(stderr: str) -> list:
    """The page's console messages among Chromium's log lines (`...:INFO:CONSOLE(1)] "message", source: ...`)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def has_colour(png: Path, rgb, tolerance=6) -> int:
    """How many pixels of the PNG are within tolerance of rgb (0-255)."""
    import numpy
    from matplotlib import image
    pixels = image.imread(str(png))[..., :3]
    if pixels.dtype != numpy.uint8:
        pixels = numpy.round(pixels * 255)
    close = (abs(pixels.astype(int) - numpy.array(rgb)) <= tolerance).all(axis=-1)
    return int(close.sum())


@unittest.skipUnless(CHROMIUM, "chromium is not installed (Debian: apt-get install -y chromium)")
class Browser(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)

    def load(self, text: str, name: str) -> tuple:
        """(the DOM Chromium built, its console lines, the screenshot's path) of a page."""
        page = self.dir / name
        page.write_text(text, encoding="utf-8")
        dom = chromium("--dump-dom", page.as_uri(), folder=self.dir)
        self.assertEqual(dom.returncode, 0, dom.stderr[-2000:])
        shot = self.dir / (name + ".png")
        painted = chromium(f"--screenshot={shot}", "--window-size=1200,2600", page.as_uri(), folder=self.dir)
        self.assertEqual(painted.returncode, 0, painted.stderr[-2000:])
        self.assertTrue(shot.is_file() and shot.stat().st_size > 10000, "no screenshot")
        if os.environ.get("PPL_KEEP_SCREENSHOTS"):  # to look at them: PPL_KEEP_SCREENSHOTS=DIR
            keep = Path(os.environ["PPL_KEEP_SCREENSHOTS"])
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, keep / shot.name)
        return dom.stdout, console_lines(dom.stderr) + console_lines(painted.stderr), shot

    def test_the_console_check_can_fail(self):
        _, console, _ = self.load("<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" "
                                  f"content=\"{report_html.CSP}\"></head><body><p>x</p><script>1</script>"
                                  "</body></html>", "control.html")
        self.assertTrue(any("Content Security Policy" in line for line in console), console)

    def test_graded_page(self):
        dom, console, shot = self.load(report_html.page(graded_report(device="GPU" + HOSTILE, hostile=HOSTILE), labs()),
                                       "graded.html")
        self.assertEqual(console, [])
        self.assertEqual(dom.count("<svg"), 1)
        self.assertNotIn("<script", dom)
        self.assertNotIn("<img", dom)
        svg = dom[dom.index("<svg"):dom.index("</svg>")]
        self.assertIn("2.30x", svg)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", dom)
        self.assertGreater(has_colour(shot, YOURS_RGB), 40, "the student's diamonds are not painted")
        self.assertGreater(has_colour(shot, REFERENCE_RGB), 400, "the reference bars are not painted")

    def test_page_without_gpu(self):
        report = Report("labs", 7, no_device=True)
        for lab in labs():
            report.results.append(no_device(lab.name, "performance", 50))
        dom, console, shot = self.load(report_html.page(report, labs()), "nodevice.html")
        self.assertEqual(console, [])
        self.assertEqual(dom.count("<svg"), 1)
        self.assertIn("Performance was not measured", dom[dom.index("<svg"):])
        self.assertGreater(has_colour(shot, REFERENCE_RGB), 400, "the reference bars are not painted")


if __name__ == "__main__":
    unittest.main()
