"""tools/student/check.py (`make check`): the lines it prints from recorded result lines, and its exit statuses with
fake harness programs that pass, fail, hang, crash or find no GPU, and with a build that fails."""
import io
import os
import tempfile
import time
import unittest
from pathlib import Path

from grader.compile import static_check
from grader.compile.build import BuildResult
from grader.run.run import Outcome, plan_reruns
from tests.grader.fakes import fake_program, make_submission
from grader.patterns import KIT
from tools.student import check

REDUCE_FAIL = {"case": "n=1025 integer", "kind": "check", "status": "fail",
               "rerun": ["--n", "1025", "--data", "integer"], "n": 1025, "data": "integer", "seed": 7,
               "got": 7689.0, "expected": 7701.0, "tolerance": 0.0,
               "message": "wrong sum: got 7689, expected 7701 (off by -12, tolerance 0)"}
REDUCE_NAN = {**REDUCE_FAIL, "case": "n=33 uniform", "rerun": ["--n", "33", "--data", "uniform"], "data": "uniform",
              "got": "nan", "expected": 40.123456789,
              "tolerance": 1.2e-5, "message": "wrong sum: got nan, expected 40.1234568 (off by nan, tolerance "
                                              "1.2e-05); NaN means *d_out was never written"}
SCAN_FAIL = {"case": "n=4097 random brent-kung exclusive", "kind": "check", "status": "fail",
             "rerun": ["--n", "4097", "--algorithms", "brent-kung", "--kinds", "exclusive"], "n": 4097,
             "algorithm": "brent-kung", "scan": "exclusive",
             "message": "element 16: got 387, expected 2488 (4081 of 4097 elements wrong)"}
COMPACT_COUNT = {"case": "n=31 random threshold=900", "kind": "check", "status": "fail",
                 "rerun": ["--n", "31", "--thresholds", "900"], "n": 31, "threshold": 900,
                 "expected_count": 2, "count": 5, "message": "count: got 5, expected 2 of 31 elements"}


def outcome(status, cases, lines, message="", case=None):
    return Outcome(status, message, case, lines, cases, reruns=plan_reruns(lines))


class Describe(unittest.TestCase):
    """What each case tried, in words, from the arguments that rerun it (which the harness writes with each case)."""

    def test_reduction(self):
        self.assertEqual(check.describe("n=1025 integer", ["--n", "1025", "--data", "integer"]),
                         "n=1025, integer data (exact sums)")
        self.assertEqual(check.describe("n=1 uniform", ["--n", "1", "--data", "uniform"]),
                         "n=1, uniform data (float sums, rounding allowed)")

    def test_scan(self):
        self.assertEqual(check.describe("x", ["--n", "4097", "--algorithms", "brent-kung", "--kinds", "exclusive"]),
                         "n=4097, exclusive scan, Brent-Kung")
        self.assertEqual(check.describe("x", ["--n", "2", "--algorithms", "kogge-stone", "--kinds", "inclusive"]),
                         "n=2, inclusive scan, Kogge-Stone")

    def test_compaction(self):
        self.assertEqual(check.describe("x", ["--n", "33", "--thresholds", "0"]), "n=33, keep x > 0 (about half kept)")
        self.assertEqual(check.describe("x", ["--n", "33", "--thresholds", "-1001"]), "n=33, keep x > -1001 (all kept)")
        self.assertEqual(check.describe("x", ["--n", "33", "--thresholds", "5"]), "n=33, keep x > 5")

    def test_without_arguments_the_name_is_kept(self):
        self.assertEqual(check.describe("datasets/reduce/small/input.raw"), "datasets/reduce/small/input.raw")
        self.assertEqual(check.describe("n=1025 integer", []), "n=1025 integer")

    def test_reruns_come_from_the_plan_and_the_lines(self):
        plan = {"case": "plan", "kind": "plan", "cases": ["a", "b", "c"],
                "reruns": [["--n", "1"], None, ["--n", "3"]]}
        line = {"case": "c", "kind": "check", "status": "fail", "rerun": ["--n", "3", "--data", "signs"]}
        self.assertEqual(plan_reruns([plan, line]), {"a": ["--n", "1"], "c": ["--n", "3", "--data", "signs"]})
        self.assertEqual(plan_reruns([{**plan, "reruns": [["--n", 1]] * 3}]), {})  # not strings: left out


class Lines(unittest.TestCase):
    """One line per case, from recorded result lines."""

    def test_pass(self):
        o = outcome("pass", ["n=1 integer"], [{"case": "n=1 integer", "kind": "check", "status": "pass", "got": 3.0,
                                               "expected": 3.0, "tolerance": 0.0,
                                               "rerun": ["--n", "1", "--data", "integer"]}])
        (r,) = check.case_results(o)
        self.assertEqual(r.render(), "  PASS    n=1, integer data (exact sums)")

    def test_reduction_failure_shows_yours_and_expected(self):
        (r,) = check.case_results(outcome("fail", [REDUCE_FAIL["case"]], [REDUCE_FAIL], case=REDUCE_FAIL["case"]))
        self.assertEqual(r.verdict, "FAIL")
        self.assertTrue(r.render().startswith("  FAIL    n=1025, integer data (exact sums): yours 7689 / expected "
                                              "7701 (off by -12;"), r.render())
        self.assertIn("dropped or double-counted", r.render())

    def test_reduction_failure_with_tolerance(self):
        line = {**REDUCE_FAIL, "got": 10.5, "expected": 10.25, "tolerance": 0.001}
        self.assertEqual(check.failure_detail(line),
                         "yours 10.5 / expected 10.25 (off by 0.25, more than the rounding tolerance 0.001)")

    def test_nan(self):
        (r,) = check.case_results(outcome("fail", [REDUCE_NAN["case"]], [REDUCE_NAN]))
        self.assertIn("yours NaN / expected 40.1234568", r.render())
        self.assertIn("never written", r.render())

    def test_scan_failure_names_the_element(self):
        (r,) = check.case_results(outcome("fail", [SCAN_FAIL["case"]], [SCAN_FAIL]))
        self.assertEqual(r.render(), "  FAIL    n=4097, exclusive scan, Brent-Kung: element 16: yours 387 / "
                                     "expected 2488 (4081 of 4097 elements wrong)")

    def test_never_written_element(self):
        message = "element 0: got -1515870811, expected 5 (never written) (31 of 31 elements wrong)"
        self.assertEqual(check.element_detail(message),
                         "element 0: yours -1515870811 (never written) / expected 5 (31 of 31 elements wrong)")

    def test_compaction_count(self):
        (r,) = check.case_results(outcome("fail", [COMPACT_COUNT["case"]], [COMPACT_COUNT]))
        self.assertEqual(r.render(), "  FAIL    n=31, keep x > 900 (about 1 in 20 kept): count: yours 5 / "
                                     "expected 2 (of 31 elements)")

    def test_compaction_count_never_written(self):
        message = "count: got 11936128518282651045, expected 16 of 31 elements (*d_count was never written)"
        self.assertEqual(check.element_detail(message), "count: yours never written / expected 16 (of 31 elements)")

    def test_compaction_order_suffix_is_kept(self):
        message = "element 3: got 5, expected 7 (2 of 16 elements wrong); the kept elements must stay in input order"
        self.assertEqual(check.element_detail(message), "element 3: yours 5 / expected 7 (2 of 16 elements wrong); "
                                                        "the kept elements must stay in input order")

    def test_other_messages_pass_through(self):
        message = "wrote past the end of the output: element 40 was written (the output has 33 elements)"
        self.assertEqual(check.element_detail(message), message)

    def test_a_hang_names_its_case_and_the_rest_did_not_run(self):
        cases = ["n=1 integer", "n=2 integer", "n=31 integer"]
        lines = [{"case": "n=1 integer", "kind": "check", "status": "pass"}]
        o = outcome("timeout", cases, lines, "timed out after 60 s (the kernel may loop forever)", "n=2 integer")
        results = check.case_results(o)
        self.assertEqual([r.verdict for r in results], ["PASS", "TIMEOUT", "NOT RUN"])
        self.assertIn("timed out after 60 s", results[1].render())
        self.assertEqual(check.summary_line(results), "1 passed, 1 failed, 1 not run")

    def test_cuda_error_line(self):
        line = {"case": "n=2 integer", "kind": "error", "status": "error",
                "message": "CUDA error at reduce.cu:40: cudaDeviceSynchronize() failed: an illegal memory access"}
        results = check.case_results(outcome("cuda-error", ["n=2 integer"], [line], line["message"], "n=2 integer"))
        self.assertEqual(results[0].verdict, "ERROR")
        self.assertIn("illegal memory access", results[0].render())

    def test_a_run_without_a_plan(self):
        results = check.case_results(outcome("crash", [], [], "crashed with signal SIGSEGV before it planned"))
        self.assertEqual(len(results), 1)
        self.assertEqual(results[0].verdict, "CRASH")

    def test_summary(self):
        results = [check.CaseResult("a", "PASS"), check.CaseResult("b", "FAIL", "x"), check.CaseResult("c", "PASS")]
        self.assertEqual(check.summary_line(results), "2 passed, 1 failed")


class Runs(unittest.TestCase):
    """main() with a fake build (a fake harness program) and the real run_harness: exit statuses and output."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)
        self.submission = make_submission(self.dir / "sub", ["03-sequential", ("06-scan", "scan.cu"),
                                                               ("07-compact", "compact.cu")])
        self.builds = []

    def main(self, lab, *bodies, build_ok=True, extra=(), plan=True, findings=()):
        program = fake_program(self.dir, *bodies, plan=plan) if bodies else None

        def build(kit, pattern, source, folder):
            self.builds.append((pattern, Path(source).name))
            if not build_ok:
                return BuildResult(False, message="reduce.cu does not compile:\nreduce.cu(4): error: expected a \";\"")
            return BuildResult(True, program=program)

        out = io.StringIO()
        status = check.main(["--lab", lab, "--submission", str(self.submission), "--seed", "7",
                             "--build-dir", str(self.dir / "build"), *extra], out=out, build=build,
                            build_harness=lambda kit, pattern: BuildResult(True),
                            static=lambda obj, pattern: static_check.Verdict(list(findings)))
        return status, out.getvalue()

    def test_a_forbidden_file_is_not_run(self):
        """What the grader's static checks reject scores 0 there: make check says so and runs nothing."""
        finding = static_check.Finding("files", "calls fopen: the lab's code may not open files")
        status, text = self.main("03", "all_pass()", findings=[finding])
        self.assertEqual(status, check.EXIT_FAIL, text)
        self.assertIn("FORBIDDEN  reduce.cu uses what the labs may not; the grader gives this lab 0 points", text)
        self.assertIn("calls fopen: the lab's code may not open files", text)
        self.assertNotIn("PASS", text)

    def test_all_pass(self):
        status, text = self.main("03", "all_pass()")
        self.assertEqual(status, check.EXIT_PASS, text)
        self.assertIn("  PASS    n=1025, integer data (exact sums)", text)
        self.assertIn("  PASS    n=65537, uniform data", text)
        self.assertIn("lab 03-sequential: 20 passed, 0 failed", text)
        self.assertIn("make grade LAB=03", text)
        self.assertIn("compute-sanitizer", text)
        self.assertEqual(self.builds, [("reduce", "reduce.cu")])

    def test_a_failure(self):
        status, text = self.main("03-seq", """
            for c in CASES:
                if c == "n=1025 integer":
                    emit(c, "fail", got=7689.0, expected=7701.0, tolerance=0.0, message="wrong sum")
                else:
                    emit(c)
            sys.exit(1 if "n=1025 integer" in CASES else 0)""")
        self.assertEqual(status, check.EXIT_FAIL, text)
        self.assertIn("  FAIL    n=1025, integer data (exact sums): yours 7689 / expected 7701", text)
        self.assertIn("19 passed, 1 failed", text)
        # labs.toml's args for the lab (lab 03: --input-const) are part of the command that reruns the case
        self.assertRegex(text, r"compute-sanitizer \S*_lab --n 1025 --data integer --input-const --seed 7")

    def test_scan_runs_every_size_once(self):
        status, text = self.main("06", """
            plan([f"n={n} random {a} {k}" for n in opt("--n").split(",") for k in ("inclusive", "exclusive")
                  for a in ("kogge-stone", "brent-kung")])
            sys.exit(0)""", plan=False)
        self.assertEqual(status, check.EXIT_FAIL, text)  # planned, never reported: not a pass
        self.assertIn("NOT RUN", text)
        self.assertIn("n=4097, exclusive scan, Brent-Kung", text)
        self.assertEqual(self.builds, [("scan", "scan.cu")])

    def test_lab_arguments_from_labs_toml(self):
        status, text = self.main("08", """
            assert opt("--algorithms") == "brent-kung", ARGS
            plan(["n=1 random brent-kung inclusive"])
            emit("n=1 random brent-kung inclusive")
            sys.exit(0)""", plan=False)
        self.assertEqual(status, check.EXIT_PASS, text)

    def test_no_device(self):
        status, text = self.main("03", "sys.exit(77)", plan=False)
        self.assertEqual(status, check.EXIT_NO_DEVICE, text)
        self.assertIn("reduce.cu builds", text)
        # what it would have done, and the simulator's commands for this lab and submission (grader/run/no_gpu.py)
        self.assertIn("make check runs your kernel on small and edge sizes, on a GPU; there is none here (", text)
        self.assertRegex(text, r"\n  make sim LAB=03 SUBMISSION=\S+sub\n")
        self.assertRegex(text, r"\n  make grade SIM=1 LAB=03 SUBMISSION=\S+sub\n")

    def test_no_device_in_a_lab_folder(self):
        """Typed in a lab's folder (mk/lab.mk sets PPL_LAB_FOLDER), the commands are that folder's."""
        with unittest.mock.patch.dict(os.environ, {"PPL_LAB_FOLDER": str(self.submission / "03-sequential")}):
            status, text = self.main("03", "sys.exit(77)", plan=False)
        self.assertEqual(status, check.EXIT_NO_DEVICE, text)
        self.assertRegex(text, r"\n  make sim +your kernel on the same small and edge sizes")
        self.assertRegex(text, r"\n  make grade SIM=1 +the grader's correctness tests")

    def test_no_device_still_builds_every_lab(self):
        every = ",".join(d.name[:2] for d in check.kit_labs(KIT))  # LAB=01,02,...: the one lab selector
        status, text = self.main(every, "sys.exit(77)", plan=False)
        self.assertEqual(status, check.EXIT_NO_DEVICE, text)
        self.assertEqual(len(self.builds), len(check.kit_labs(KIT)))

    def test_build_error(self):
        status, text = self.main("03", build_ok=False)
        self.assertEqual(status, check.EXIT_BUILD, text)
        self.assertIn('reduce.cu(4): error: expected a ";"', text)
        self.assertIn("does not build", text)

    def test_a_hang_is_stopped(self):
        start = time.monotonic()
        status, text = self.main("03", """
            emit(CASES[0])
            time.sleep(60)""", extra=["--timeout", "1"])
        self.assertLess(time.monotonic() - start, 20)
        self.assertEqual(status, check.EXIT_FAIL, text)
        self.assertIn("TIMEOUT", text)
        self.assertEqual(text.count("TIMEOUT"), 1)  # the second run (uniform data) is not started after a hang

    def test_crash(self):
        status, text = self.main("07", """
            plan(["n=1 random threshold=0", "n=2 random threshold=0"])
            emit("n=1 random threshold=0")
            os.kill(os.getpid(), signal.SIGSEGV)""", plan=False)
        self.assertEqual(status, check.EXIT_FAIL, text)
        self.assertIn("CRASH   n=2, keep x > 0 (about half kept): crashed with signal SIGSEGV", text)

    def test_usage(self):
        with unittest.mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            self.assertEqual(check.main([], out=io.StringIO()), check.EXIT_BUILD)
            self.assertIn("make check LAB=03", err.getvalue())
            self.assertEqual(check.main(["--lab", "99"], out=io.StringIO()), check.EXIT_BUILD)
            self.assertIn("no lab matches", err.getvalue())


import unittest.mock  # noqa: E402  (used by Runs.test_usage)

if __name__ == "__main__":
    unittest.main()
