"""No silent fallback (issue 20, item 5): make grade-class and the Gradescope run refuse to grade where a sandbox
layer is missing unless told to (--allow-weaker-sandbox), saying which layer and how to install it; --require-sandbox
covers the build."""
import argparse
import contextlib
import io
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader.compile import build_sandbox
from grader import gradescope
from grader.compile.build import BuildResult
from grader.classroom import cli
from grader.config import load_config
from grader.grade import Grader
from tests.grader.fakes import make_submission

KIT = Path(__file__).resolve().parents[2]
MISSING = "bwrap is not installed"


class Refusals(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)

    def test_the_message_names_the_layer_and_how_to_install_it(self):
        with mock.patch("grader.compile.build_sandbox.bwrap_usable", return_value=MISSING):
            why = build_sandbox.weaker_sandbox("/usr/local/cuda/bin/nvcc")
        self.assertIn(MISSING, why)
        self.assertIn("sudo apt-get install bubblewrap", why)
        with mock.patch("grader.compile.build_sandbox.bwrap_usable", return_value=""):
            self.assertEqual(build_sandbox.weaker_sandbox("/usr/local/cuda/bin/nvcc"), "")

    def test_grade_class_refuses_unless_told(self):
        for allowed, refused in ((False, True), (True, False)):
            err = io.StringIO()
            with mock.patch("grader.classroom.cli.weaker_sandbox", return_value="no bubblewrap; install it"), \
                    contextlib.redirect_stderr(err):
                self.assertEqual(cli.refused_sandbox(argparse.Namespace(allow_weaker_sandbox=allowed), "grade-class"),
                                 refused)
            self.assertIn("no bubblewrap; install it", err.getvalue())
            self.assertIn("--allow-weaker-sandbox" if refused else "grading anyway", err.getvalue())
        self.assertTrue(cli.parse_args(["grade", "x", "--allow-weaker-sandbox"]).allow_weaker_sandbox)

    def test_gradescope_grades_nothing_unless_told(self):
        root = self.dir / "ag"
        make_submission(root / "submission" / "labs", ["03-sequential"])
        with mock.patch("grader.compile.build_sandbox.weaker_sandbox", return_value="no bubblewrap; install it"), \
                mock.patch("grader.gradescope.nvcc_missing", return_value=False), \
                mock.patch("grader.gradescope.grade_once") as graded, contextlib.redirect_stdout(io.StringIO()):
            data = gradescope.grade(root, "03")
        graded.assert_not_called()
        self.assertEqual(data["score"], 0)
        self.assertIn("sandbox layer missing", data["output"])
        self.assertIn("no bubblewrap; install it", data["output"])
        self.assertIn(gradescope.WEAKER_VARIABLE, data["output"])

    def test_require_sandbox_covers_the_build(self):
        """--require-sandbox passes sandbox="require" to the build; a build the sandbox refused is the kit's error
        (the machine lacks a layer), never the student's NO BUILD."""
        config = load_config(KIT / "grader" / "labs.toml")
        submission = make_submission(self.dir / "sub", ["03-sequential"])
        asked = []

        def build(kit, pattern, source, folder, timeout=None, harness_build=None, sandbox="auto"):
            asked.append(sandbox)
            return BuildResult(False, message="the build's sandbox cannot run here (a kit problem): " + MISSING,
                               layers=["source", "limits"], missing=[f"bwrap: {MISSING}"])

        grader = Grader(config, submission, kit=KIT, build_dir=self.dir / "build", build=build,
                        build_harness=lambda *a, **k: BuildResult(True), sandbox="require")
        report = grader.grade(config.select("03"))
        self.assertEqual(asked, ["require"])
        self.assertIn(MISSING, report.kit_error)
        self.assertNotIn("NO BUILD", [r.status for r in report.results])
        self.assertEqual(report.build_sandbox["03-sequential"]["missing"], [f"bwrap: {MISSING}"])

    def test_a_build_without_bubblewrap_says_so(self):
        config = load_config(KIT / "grader" / "labs.toml")
        submission = make_submission(self.dir / "sub", ["03-sequential"])

        def build(kit, pattern, source, folder, timeout=None, harness_build=None):
            return BuildResult(False, message="reduce.cu does not compile:\nerror", layers=["source", "limits"],
                               missing=[f"bwrap: {MISSING}"])

        grader = Grader(config, submission, kit=KIT, build_dir=self.dir / "build", build=build,
                        build_harness=lambda *a, **k: BuildResult(True))
        report = grader.grade(config.select("03"))
        self.assertTrue(any(n.startswith("Sandbox: the compile of 03-sequential ran without bwrap: " + MISSING)
                            for n in report.notes), report.notes)
        from grader.report.report import format_table, gradescope_results
        self.assertIn("ran without bwrap", format_table(report))
        self.assertEqual(gradescope_results(report)["extra_data"]["build_sandbox"]["03-sequential"]["layers"],
                         ["source", "limits"])


if __name__ == "__main__":
    unittest.main()
