"""grader/build.py with the real nvcc and mk/lab.mk: compile errors are reported, trimmed, and cost only their lab.

The harness objects go to the kit's own per-architecture folder (build/harness/...), so they build once and every
later run of these tests reuses them.
"""
import contextlib
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path

from grader.build import build_harness, build_lab, trim_compiler_output
from grader.grade import main
from grader.run import run_harness
from tests.grader.fakes import KIT, write_file

BROKEN = """#include "reduce.h"
void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    int x = undeclared_thing + 1
}
"""


class Trim(unittest.TestCase):
    def test_make_lines_go_and_paths_are_relative(self):
        text = ("/tmp/b/lab/reduce.cu(4): error: identifier \"y\" is undefined\n"
                "make: *** [/kit/mk/lab.mk:30: /tmp/b/lab/student.o] Error 2\n")
        self.assertEqual(trim_compiler_output(text, "/tmp/b/lab"), 'reduce.cu(4): error: identifier "y" is undefined')

    def test_long_output_starts_at_the_first_error(self):
        text = "\n".join([f"warning {k}" for k in range(5)] + [f"reduce.cu({k}): error: bad" for k in range(100)])
        lines = trim_compiler_output(text, max_lines=30).splitlines()
        self.assertEqual(len(lines), 31)
        self.assertEqual(lines[0], "reduce.cu(0): error: bad")
        self.assertEqual(lines[-1], "... (70 more lines)")


@unittest.skipUnless(shutil.which("nvcc") and shutil.which("make"), "nvcc or make is not installed here")
class RealBuild(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        built = build_harness(KIT, "reduce")
        if not built.ok:
            raise unittest.SkipTest(f"the kit's harness does not build here:\n{built.message}")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)

    def test_compile_error(self):
        source = write_file(self.dir / "sub", "reduce.cu", BROKEN)
        built = build_lab(KIT, "reduce", source, self.dir / "build")
        self.assertFalse(built.ok)
        lines = built.message.splitlines()
        self.assertEqual(lines[0], "reduce.cu does not compile:")
        self.assertTrue(any(ln.startswith("reduce.cu(4): error") and "undeclared_thing" in ln for ln in lines),
                        built.message)
        self.assertNotIn(str(self.dir), built.message)
        self.assertLessEqual(len(lines), 32)

    def test_missing_file(self):
        built = build_lab(KIT, "reduce", self.dir / "nowhere" / "reduce.cu", self.dir / "build")
        self.assertFalse(built.ok)
        self.assertIn("missing file", built.message)

    def test_only_the_students_file_is_used(self):
        """A solution builds from a fresh folder holding only its copy; the program runs, or finds no GPU."""
        source = KIT / "solutions" / "03-sequential" / "reduce.cu"
        (self.dir / "build").mkdir()
        write_file(self.dir / "build", "stale.o", "left over")
        built = build_lab(KIT, "reduce", source, self.dir / "build")
        self.assertTrue(built.ok, built.message)
        self.assertFalse((self.dir / "build" / "stale.o").exists())
        outcome = run_harness(built.program, ["--data", "integer", "--n", "1,1025", "--seed", "5"], timeout=60,
                              workdir=self.dir / "run")
        self.assertIn(outcome.status, ("pass", "no-device"), outcome.message)

    def test_grader_reports_the_compile_error(self):
        write_file(self.dir / "sub", "03-sequential/reduce.cu", BROKEN)
        results = self.dir / "results.json"
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main(["--submission", str(self.dir / "sub"), "--lab", "03", "--build-dir",
                           str(self.dir / "build"), "--results", str(results)])
        self.assertEqual(status, 1, out.getvalue())
        self.assertIn("NO BUILD", out.getvalue())
        self.assertIn("undeclared_thing", out.getvalue())
        data = json.loads(results.read_text())
        self.assertEqual(data["score"], 0)
        self.assertIn("reduce.cu(4): error", data["tests"][0]["output"])


if __name__ == "__main__":
    unittest.main()
