"""grader/build.py with the real nvcc and mk/lab.mk: compile errors are reported, trimmed, and cost only their lab;
each pattern's program builds from a solution, and accepts every run labs.toml gives it.

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
from grader.config import load_config
from grader.grade import main
from grader.run import run_harness, run_process
from tests.grader.fakes import KIT, write_file

# One solution per harness pattern, and the small run each must pass (or find no GPU).
SOLUTIONS = {"reduce": ("03-sequential", "reduce.cu", ["--data", "integer", "--n", "1,1025"]),
             "scan": ("06-scan", "scan.cu", ["--n", "1,33,4097"]),
             "compact": ("07-compact", "compact.cu", ["--n", "1,33,4097"])}

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
        for pattern in SOLUTIONS:
            built = build_harness(KIT, pattern)
            if not built.ok:
                raise unittest.SkipTest(f"the kit's {pattern} harness does not build here:\n{built.message}")
        cls.programs_dir = tempfile.TemporaryDirectory()
        cls.programs = {}  # pattern -> a program built from its solution, shared by the tests

    @classmethod
    def tearDownClass(cls):
        cls.programs_dir.cleanup()

    def program(self, pattern):
        """The program built from SOLUTIONS[pattern] (built once for all the tests)."""
        if pattern not in self.programs:
            lab, source, _ = SOLUTIONS[pattern]
            built = build_lab(KIT, pattern, KIT / "solutions" / lab / source, Path(self.programs_dir.name) / lab)
            self.assertTrue(built.ok, built.message)
            self.programs[pattern] = built.program
        return self.programs[pattern]

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

    def test_compile_error_names_the_labs_file(self):
        source = write_file(self.dir / "sub", "scan.cu",
                            '#include "scan.h"\nint broken(void) { return undeclared_thing; }\n')
        built = build_lab(KIT, "scan", source, self.dir / "build")
        self.assertFalse(built.ok)
        self.assertEqual(built.message.splitlines()[0], "scan.cu does not compile:")
        self.assertIn("scan.cu(2): error", built.message)

    def test_missing_file(self):
        built = build_lab(KIT, "reduce", self.dir / "nowhere" / "reduce.cu", self.dir / "build")
        self.assertFalse(built.ok)
        self.assertIn("missing file", built.message)

    def test_each_pattern_builds_and_runs(self):
        """scan_lab and compact_lab, like reduce_lab, are PATTERN_lab; each plans its cases (or finds no GPU)."""
        for pattern, (lab, source, args) in SOLUTIONS.items():
            program = self.program(pattern)
            self.assertEqual(program.name, f"{pattern}_lab")
            outcome = run_harness(program, [*args, "--seed", "5"], timeout=120, workdir=self.dir / "run" / pattern,
                                  source=source)
            self.assertIn(outcome.status, ("pass", "no-device"), f"{pattern}: {outcome.message}")
            if outcome.status == "pass":
                self.assertEqual(len(outcome.cases), {"reduce": 2, "scan": 12, "compact": 12}[pattern])

    def test_the_programs_accept_every_run_of_labs_toml(self):
        """Each run's arguments (with the lab's own, --seed and the datasets' or the benchmark's) parse: the harness
        reads its options in order, so a final --help exits 0 once every option before it was accepted, and 2 at
        the first it rejects. Nothing runs, GPU or not."""
        def parses(pattern, args):
            proc = run_process([str(self.program(pattern)), *args, "--help"], timeout=30)
            return proc.returncode, proc.output

        for pattern in SOLUTIONS:
            self.assertEqual(parses(pattern, ["--n", "0"])[0], 2, f"{pattern}: --help did not come last?")
            self.assertEqual(parses(pattern, ["--no-such-option"])[0], 2, pattern)
        for lab in load_config().labs:
            if lab.pattern not in SOLUTIONS:
                self.fail(f"{lab.name}: no solution of pattern {lab.pattern} in SOLUTIONS")
            runs = [[*run, *lab.args, "--seed", "1"] for group in lab.groups for run in group.runs]
            for group in lab.groups:
                if group.datasets:
                    runs.append(["--dataset", "in.raw", *(["--expected", "out.raw"] if group.expected else []),
                                 *lab.args])
            runs.append(["--bench", lab.performance.bench, "--seed", "1"])
            for args in runs:
                status, output = parses(lab.pattern, args)
                self.assertEqual(status, 0, f"{lab.name}: {' '.join(args)}:\n{output}")

    def test_only_the_students_file_is_used(self):
        """A solution builds from a fresh folder holding only its copy; the program runs, or finds no GPU."""
        source = KIT / "solutions" / "03-sequential" / "reduce.cu"
        (self.dir / "build").mkdir()
        write_file(self.dir / "build", "stale.o", "left over")
        built = build_lab(KIT, "reduce", source, self.dir / "build")
        self.assertTrue(built.ok, built.message)
        self.assertFalse((self.dir / "build" / "stale.o").exists())
        outcome = run_harness(built.program, ["--data", "integer", "--n", "1,1025", "--seed", "5"], timeout=60,
                              workdir=self.dir / "run", source="reduce.cu")
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
        self.assertEqual(data["tests"][0]["name"], "03-sequential: static checks")
        self.assertEqual(data["tests"][0]["output"], "not run: reduce.cu does not compile")
        self.assertIn("reduce.cu(4): error", data["tests"][1]["output"])


if __name__ == "__main__":
    unittest.main()
