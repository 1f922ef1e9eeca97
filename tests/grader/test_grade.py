"""grader/grade.py and grader/report.py: whole grading runs over fake harness programs (the build is a hook)."""
import contextlib
import io
import json
import tempfile
import time
import unittest
from pathlib import Path

from grader.build import BuildResult
from grader.config import load_config
from grader.grade import Grader, main
from grader.report import format_table, gradescope_results
from grader.run import run_harness
from tests.grader.fakes import PASS, SMALL_TOML, fake_program, make_submission, write_file

REAL_LABS = ["01-global-strided", "02-shared-strided", "03-sequential", "04-unrolled", "05-coarsened"]


def harness_ok(kit, pattern, timeout=None, harness_build=None):
    return BuildResult(True)


class GradingRun(unittest.TestCase):
    """A temp kit (for datasets), a submission, a build folder, and fake programs standing in for built labs."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)
        self.kit = self.dir / "kit"
        self.kit.mkdir()
        self.calls = []  # (lab, args) of every run

    def add_datasets(self, *names):
        for name in names:
            write_file(self.kit, f"datasets/reduce/{name}/input.raw", "x")
            write_file(self.kit, f"datasets/reduce/{name}/expected.raw", "y")

    def fake(self, *bodies, name="fake_lab"):
        return fake_program(self.dir, *bodies, name=name)

    def build_hook(self, programs):
        """A build hook: programs maps a lab name to a fake program, or to a BuildResult for a failed build."""
        def build(kit, pattern, source, folder, timeout=None, harness_build=None):
            lab = Path(folder).name
            self.assertEqual(Path(source), self.submission / lab / "reduce.cu")
            program = programs[lab]
            return program if isinstance(program, BuildResult) else BuildResult(True, program=program)
        return build

    def run_hook(self, program, args, timeout, workdir, cwd):
        self.calls.append((Path(workdir).parts[-3], list(args)))
        return run_harness(program, args, timeout=timeout, workdir=workdir, cwd=cwd)

    def grader(self, config, programs, labs=None, **kw):
        self.submission = make_submission(self.dir / "sub", labs or [lab.name for lab in config.labs])
        return Grader(config, self.submission, kit=self.kit, build_dir=self.dir / "build", seed=12345,
                      build=self.build_hook(programs), build_harness=harness_ok, run=self.run_hook, **kw)

    def small_config(self):
        return load_config(write_file(self.dir, "labs.toml", SMALL_TOML))


class RealConfig(GradingRun):
    def test_full_marks(self):
        self.add_datasets("small", "tiny")
        config = load_config()
        program = self.fake(PASS)
        report = self.grader(config, {lab: program for lab in REAL_LABS}).grade(list(config.labs))
        self.assertEqual(report.score, report.max_score)
        self.assertEqual(report.max_score, sum(lab.max_score for lab in config.labs))
        self.assertEqual(report.device, "NVIDIA Fake GPU")
        lab1 = [args for lab, args in self.calls if lab == "01-global-strided"]
        self.assertEqual(lab1[0], ["--dataset", "datasets/reduce/small/input.raw",
                                   "--expected", "datasets/reduce/small/expected.raw"])
        self.assertEqual(lab1[1][0], "--dataset")
        self.assertEqual(lab1[2][-2:], ["--seed", "12345"])  # generated data gets the run's seed
        self.assertEqual(lab1[-1], ["--bench", "2^26", "--seed", "12345"])
        self.assertEqual(len(lab1), 2 + 1 + 1 + 2 + 1)

    def test_no_datasets_is_an_error_not_a_pass(self):
        config = load_config()
        report = self.grader(config, {"03-sequential": self.fake(PASS)}, ["03-sequential"]).grade(
            config.select("03"))
        datasets, perf = report.results[0], report.results[-1]
        self.assertEqual((datasets.score, datasets.status), (0, "ERROR"))
        self.assertIn("no datasets found in datasets/reduce", datasets.summary)
        self.assertEqual((perf.score, perf.status), (0, "not run"))
        self.assertEqual([r.status for r in report.results[1:4]], ["pass"] * 3)


class SmallConfig(GradingRun):
    def test_timeout_is_reported_and_grading_goes_on(self):
        config = self.small_config()
        hang = self.fake("""
            if "integer" in ARGS:
                emit(CASES[0]); time.sleep(60)
            """, PASS, name="hang")
        hang_first = self.fake("""
            if "uniform" in ARGS:
                time.sleep(60)
            """, PASS, name="hang_first")
        programs = {"01-first": hang, "02-second": hang_first, "03-third": self.fake(PASS)}
        config = load_config(write_file(self.dir, "labs.toml", SMALL_TOML + SMALL_TOML[SMALL_TOML.index(
            "[labs.02-second]"):].replace("02-second", "03-third")))
        grader = self.grader(config, programs, timeout=1.0)
        start = time.monotonic()
        report = grader.grade(list(config.labs))
        self.assertLess(time.monotonic() - start, 15)
        first = {r.name: r for r in report.results if r.lab == "01-first"}
        self.assertEqual(first["small"].status, "pass")
        self.assertEqual((first["exact"].status, first["exact"].score), ("TIMEOUT", 0))
        self.assertIn("n=6 integer: timed out after 1 s", first["exact"].summary)
        self.assertIn("deadlock at a barrier", first["exact"].summary)
        self.assertEqual(first["performance"].status, "not run")
        second = [r for r in report.results if r.lab == "02-second"]
        self.assertEqual([r.status for r in second], ["TIMEOUT", "not run", "not run"])
        self.assertIn("n=1 uniform: timed out", second[0].summary)
        self.assertIn("an earlier test of this lab timed out", second[1].summary)
        third = [r for r in report.results if r.lab == "03-third"]
        self.assertEqual([r.status for r in third], ["pass", "pass", "pass"])
        self.assertEqual(report.score, 10 + 0 + 60)

    def test_crash_and_cuda_error(self):
        config = self.small_config()
        crash = self.fake("if 'signs' in ARGS: os.kill(os.getpid(), signal.SIGSEGV)", PASS, name="crash")
        cuda = self.fake("""
            if "uniform" in ARGS:
                emit(CASES[0], "error", kind="error", message="CUDA error: an illegal memory access was encountered")
                sys.exit(3)
            """, PASS, name="cuda")
        report = self.grader(config, {"01-first": crash, "02-second": cuda}).grade(list(config.labs))
        by = {r.title: r for r in report.results}
        self.assertEqual(by["01-first: exact"].status, "CRASH")
        self.assertIn("n=7 signs: crashed with signal SIGSEGV", by["01-first: exact"].summary)
        self.assertEqual(by["02-second: small"].status, "CUDA ERROR")
        self.assertIn("n=1 uniform: CUDA error: an illegal memory access", by["02-second: small"].summary)
        self.assertEqual(by["02-second: exact"].status, "pass")

    def test_performance_partial_credit(self):
        config = self.small_config()
        report = self.grader(config, {"01-first": self.fake("if '--bench' in ARGS: bench(2.0)\nall_pass()")},
                             ["01-first"]).grade(config.select("01"))
        perf = report.results[-1]
        self.assertEqual((perf.score, perf.status), (15.0, "partial"))
        self.assertEqual(report.score, 45.0)

    def test_wrong_sum_in_bench(self):
        config = self.small_config()
        program = self.fake("if '--bench' in ARGS: bench(9.0, 'fail', message='2 of 12 timed runs gave a wrong sum')\n"
                            "all_pass()")
        report = self.grader(config, {"01-first": program}, ["01-first"]).grade(config.select("01"))
        perf = report.results[-1]
        self.assertEqual((perf.score, perf.status), (0, "FAIL"))
        self.assertIn("2 of 12 timed runs gave a wrong sum", perf.summary)

    def test_compile_error_costs_the_lab_only(self):
        config = self.small_config()
        broken = BuildResult(False, message="reduce.cu does not compile:\nreduce.cu(3): error: expected a \";\"")
        report = self.grader(config, {"01-first": broken, "02-second": self.fake(PASS)}).grade(list(config.labs))
        first = [r for r in report.results if r.lab == "01-first"]
        self.assertEqual([r.score for r in first], [0, 0, 0])
        self.assertEqual(first[0].status, "NO BUILD")
        self.assertIn('reduce.cu(3): error: expected a ";"', first[0].detail)
        self.assertTrue(all("does not compile" in r.summary for r in first))
        self.assertEqual(report.score, 60)

    def test_reports(self):
        config = self.small_config()
        failing = self.fake("""
            if "integer" in ARGS:
                emit(CASES[0], "fail", message="wrong sum: got 4, expected 5 (off by -1, tolerance 0)"); sys.exit(1)
            """, PASS, name="failing")
        report = self.grader(config, {"01-first": failing, "02-second": self.fake(PASS)}).grade(list(config.labs))
        table = format_table(report)
        self.assertIn("Grading ", table)
        self.assertIn("seed 12345", table)
        self.assertRegex(table, r"01-first +10 / 60")
        self.assertRegex(table, r"  exact +0 / 20 +FAIL +n=5 integer: wrong sum: got 4, expected 5")
        self.assertIn("to reproduce, from the kit's root: make -C labs/01-first && labs/01-first/build/failing "
                      "--data integer --n 5,6 --seed 12345", table)
        self.assertRegex(table, r"  performance +0 / 30 +not run +every correctness test must pass first")
        self.assertTrue(table.rstrip().endswith("Total 70 / 120"))

        results = gradescope_results(report)
        json.dumps(results)  # serializable
        self.assertEqual(results["score"], 70)
        self.assertIsInstance(results["execution_time"], (int, float))
        self.assertIsInstance(results["output"], str)
        self.assertEqual(len(results["tests"]), 6)
        for test in results["tests"]:
            self.assertEqual(set(test), {"name", "score", "max_score", "status", "output", "visibility"})
            self.assertIsInstance(test["name"], str)
            self.assertIsInstance(test["score"], (int, float))
            self.assertIsInstance(test["max_score"], (int, float))
            self.assertLessEqual(test["score"], test["max_score"])
            self.assertIn(test["status"], ("passed", "failed"))
            self.assertEqual(test["visibility"], "visible")
        self.assertEqual(results["tests"][1]["name"], "01-first: exact")
        self.assertIn("wrong sum: got 4", results["tests"][1]["output"])
        self.assertEqual(sum(t["score"] for t in results["tests"]), results["score"])
        self.assertEqual(results["extra_data"]["max_score"], 120)


class CommandLine(GradingRun):
    def main(self, config_text, programs, *extra):
        config = write_file(self.dir, "labs.toml", config_text)
        self.submission = make_submission(self.dir / "sub", ["01-first", "02-second"])
        results = self.dir / "out" / "results.json"
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main(["--config", str(config), "--submission", str(self.submission), "--build-dir",
                           str(self.dir / "build"), "--results", str(results), *extra],
                          kit=self.kit, build=self.build_hook(programs), build_harness=harness_ok)
        data = json.loads(results.read_text()) if results.exists() else None
        return status, out.getvalue(), data

    def test_full_marks_exit_0(self):
        status, out, data = self.main(SMALL_TOML, {"01-first": self.fake(PASS), "02-second": self.fake(PASS)})
        self.assertEqual(status, 0, out)
        self.assertEqual(data["score"], 120)

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
