"""grader/grade.py's command line (python3 -m grader): its options, exit statuses and messages, over fake harness
programs as in test_grade.py."""
import contextlib
import io
import json
import unittest

from grader.compile.build import BuildResult
from grader.config import load_config
from grader.grade import main
from grader.compile.objfile import ToolError
from tests.grader.fakes import PASS, SMALL_TOML, make_submission, write_file
from tests.grader.test_grade import BONUS_TOML, GradingRun, harness_ok


class CommandLine(GradingRun):
    def main(self, config_text, programs, *extra):
        config = write_file(self.dir, "labs.toml", config_text)
        self.submission = make_submission(self.dir / "sub", ["01-first", "02-second", ("03-bonus", "scan.cu")])
        results = self.dir / "out" / "results.json"
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main(["--config", str(config), "--submission", str(self.submission), "--build-dir",
                           str(self.dir / "build"), "--results", str(results), *extra],
                          kit=self.kit, build=self.build_hook(programs, load_config(config)),
                          build_harness=harness_ok, check=self.check_hook)
        data = json.loads(results.read_text()) if results.exists() else None
        return status, out.getvalue(), data

    def test_full_marks_exit_0(self):
        status, out, data = self.main(SMALL_TOML, {"01-first": self.fake(PASS), "02-second": self.fake(PASS)})
        self.assertEqual(status, 0, out)
        self.assertEqual(data["score"], 120)

    def test_bonus_lab_does_not_decide_the_exit_status(self):
        failing = self.fake("if 'signs' in ARGS: emit(CASES[0], 'fail', message='wrong'); sys.exit(1)\n" + PASS,
                            name="failing")
        status, out, data = self.main(BONUS_TOML, {"01-first": self.fake(PASS), "02-second": self.fake(PASS),
                                                   "03-bonus": failing})
        self.assertEqual(status, 0, out)
        self.assertEqual((data["score"], data["extra_data"]["max_score"]), (120 + 10, 120))
        status, out, data = self.main(BONUS_TOML, {"01-first": failing, "02-second": self.fake(PASS),
                                                   "03-bonus": self.fake(PASS)})
        self.assertEqual(status, 1, out)
        self.assertEqual((data["score"], data["extra_data"]["max_score"]), (10 + 60 + 60, 120))

    def test_a_hung_bonus_lab_fails_the_grading(self):
        """A bonus lab's lost points leave the exit status alone; its hang does not (a kernel that never ends would
        hang the GPU of whoever grades it), and a line under the table says so."""
        hang = self.fake("if 'signs' in ARGS: time.sleep(60)\n" + PASS, name="hang")
        status, out, data = self.main(BONUS_TOML, {"01-first": self.fake(PASS), "02-second": self.fake(PASS),
                                                   "03-bonus": hang}, "--timeout", "1")
        self.assertEqual(status, 1, out)
        self.assertIn("Hung: 03-bonus: a run never finished (TIMEOUT above), so this grading fails", out)

    def test_points_lost_exit_1(self):
        status, out, data = self.main(SMALL_TOML, {"01-first": self.fake("if '--bench' in ARGS: bench(1.5)\n"
                                                                         "all_pass()")}, "--lab", "01")
        self.assertEqual(status, 1, out)
        self.assertEqual(data["score"], 30 + 7.5)

    def test_no_device_exit_77_after_writing_results(self):
        no_gpu = self.fake("""
            emit("device", "no-device", kind="device", message="no CUDA device here")
            sys.exit(77)""")
        broken = BuildResult(False, message="reduce.cu does not compile:\nreduce.cu(9): error: identifier x")
        status, out, data = self.main(SMALL_TOML, {"01-first": no_gpu, "02-second": broken})
        self.assertEqual(status, 77, out)
        tests = {t["name"]: t for t in data["tests"]}
        for name in ("01-first: small", "01-first: exact", "01-first: performance"):
            self.assertEqual(tests[name]["output"],
                             "not run: this machine has no CUDA device; grading needs an NVIDIA GPU")
        self.assertIn("reduce.cu(9): error: identifier x", tests["02-second: small"]["output"])
        self.assertTrue(data["extra_data"]["no_device"])
        self.assertIn("no CUDA device", data["output"])

    def test_harness_build_failure_exit_2(self):
        config = write_file(self.dir, "labs.toml", SMALL_TOML)
        self.submission = make_submission(self.dir / "sub", ["01-first"])
        bad = lambda kit, pattern, timeout=None, harness_build=None: BuildResult(False, message="harness broken")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            status = main(["--config", str(config), "--submission", str(self.submission), "--build-dir",
                           str(self.dir / "build")], kit=self.kit, build_harness=bad)
        self.assertEqual(status, 2)
        data = json.loads((self.dir / "build" / "results.json").read_text())
        self.assertEqual(data["score"], 0)
        self.assertEqual(data["extra_data"]["kit_error"], "harness broken")

    def test_static_checks_cannot_run_exit_2(self):
        """nm missing (the real check raises ToolError): a kit problem, exit 2, and no lab is graded or passes."""
        self.verdicts["01-first"] = ToolError("nm and objdump not found: the grader's static checks need binutils")
        status, out, data = self.main(SMALL_TOML, {"01-first": self.fake(PASS), "02-second": self.fake(PASS)})
        self.assertEqual(status, 2, out)
        self.assertEqual(self.calls, [])
        self.assertEqual(data["score"], 0)
        self.assertIn("nm and objdump not found", data["extra_data"]["kit_error"])
        self.assertIn("The static checks cannot run: nm and objdump not found", data["output"])
        self.assertEqual({t["output"] for t in data["tests"]},
                         {"not run: the grader's static checks cannot run here (a kit problem)"})
        self.assertEqual(len(data["tests"]), 8)

    def test_bad_config_exit_2(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = main(["--config", str(write_file(self.dir, "labs.toml", "x = ")), "--submission", str(self.dir)])
        self.assertEqual(status, 2)
        self.assertIn("not valid TOML", err.getvalue())

    def test_json_only(self):
        status, out, data = self.main(SMALL_TOML, {"01-first": self.fake(PASS)}, "--lab", "01-first", "--json-only")
        self.assertEqual(json.loads(out), data)


if __name__ == "__main__":
    unittest.main()


if __name__ == "__main__":
    unittest.main()
