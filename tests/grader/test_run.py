"""grader/run.py: one harness run's verdict, from fake harness programs that pass, fail, hang, crash or find no GPU."""
import tempfile
import time
import unittest
from pathlib import Path

from grader.run import case_names, parse_sizes, run_harness, run_process
from tests.grader.fakes import fake_program, process_gone

ARGS = ["--data", "integer", "--n", "1,33,1025"]


class Names(unittest.TestCase):
    def test_sizes(self):
        self.assertEqual(parse_sizes("1,1025,2^20+1,2^4-1,2^26"), [1, 1025, 2 ** 20 + 1, 15, 2 ** 26])
        for bad in ("", "0", "x", "2^", "1,,2", "2^3*2"):
            with self.assertRaises(ValueError, msg=bad):
                parse_sizes(bad)

    def test_case_names_follow_the_harness(self):
        self.assertEqual(case_names(ARGS), ["n=1 integer", "n=33 integer", "n=1025 integer"])
        self.assertEqual(case_names(["--n", "2^29+1", "--data", "signs", "--seed", "3"]), ["n=536870913 signs"])
        self.assertEqual(case_names(["--bench", "2^26", "--seed", "3"]), ["bench n=67108864"])
        self.assertEqual(case_names(["--dataset", "d/in.raw", "--expected", "d/out.raw"]), ["d/in.raw"])


class FakeRuns(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)

    def run_fake(self, body, args=ARGS, timeout=10.0):
        program = fake_program(self.dir, body)
        return run_harness(program, args, timeout=timeout, workdir=self.dir / "run")

    def test_pass(self):
        o = self.run_fake("all_pass()")
        self.assertEqual(o.status, "pass", o.message)
        self.assertEqual(o.message, "3 cases passed")
        self.assertEqual(len(o.lines), 3)

    def test_failing_case(self):
        o = self.run_fake("""
            emit(CASES[0])
            emit(CASES[1], "fail", message="wrong sum: got 32, expected 33 (off by -1, tolerance 0)")
            emit(CASES[2])
            sys.exit(1)""")
        self.assertEqual((o.status, o.case), ("fail", "n=33 integer"))
        self.assertIn("got 32, expected 33", o.message)

    def test_timeout_kills_the_group_and_names_the_running_case(self):
        o_start = time.monotonic()
        o = self.run_fake("""
            child = subprocess.Popen(["sleep", "60"])
            open(os.path.join(os.path.dirname(RESULT), "child.pid"), "w").write(str(child.pid))
            emit(CASES[0])
            time.sleep(60)""", timeout=1.0)
        self.assertLess(time.monotonic() - o_start, 10)
        self.assertEqual((o.status, o.case), ("timeout", "n=33 integer"))
        self.assertIn("timed out after 1 s (the kernel may loop forever or deadlock at a barrier)", o.message)
        child = int((self.dir / "run" / "child.pid").read_text())
        deadline = time.monotonic() + 5
        while not process_gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(process_gone(child), "the program's child outlived the timeout")

    def test_crash(self):
        o = self.run_fake("emit(CASES[0]); os.kill(os.getpid(), signal.SIGSEGV)")
        self.assertEqual((o.status, o.case), ("crash", "n=33 integer"))
        self.assertEqual(o.message, "crashed with signal SIGSEGV")

    def test_cuda_error(self):
        o = self.run_fake("""
            emit(CASES[0])
            emit(CASES[1], "error", kind="error", message="CUDA error at reduce.cu:30: an illegal memory access")
            print("CUDA error at reduce.cu:30 ...", file=sys.stderr)
            sys.exit(3)""")
        self.assertEqual((o.status, o.case), ("cuda-error", "n=33 integer"))
        self.assertEqual(o.message, "CUDA error at reduce.cu:30: an illegal memory access")

    def test_cuda_error_without_a_line_uses_stderr(self):
        o = self.run_fake("print('something broke', file=sys.stderr); sys.exit(3)")
        self.assertEqual((o.status, o.case, o.message), ("cuda-error", "n=1 integer", "something broke"))

    def test_no_device(self):
        o = self.run_fake("""
            emit("device", "no-device", kind="device", message="no CUDA device here")
            sys.exit(77)""")
        self.assertEqual(o.status, "no-device")
        self.assertIn("no CUDA device", o.message)

    def test_harness_error(self):
        o = self.run_fake("print('d/in.raw: bad magic', file=sys.stderr); sys.exit(2)",
                          args=["--dataset", "d/in.raw", "--expected", "d/out.raw"])
        self.assertEqual(o.status, "harness-error")
        self.assertIn("d/in.raw: bad magic", o.message)
        self.assertIn("not a fault of reduce.cu", o.message)

    def test_exit_before_reporting_every_case(self):
        o = self.run_fake("emit(CASES[0]); sys.exit(0)")
        self.assertEqual((o.status, o.case), ("fail", "n=33 integer"))
        self.assertIn("exited with status 0 before reporting it", o.message)

    def test_a_forged_pass_does_not_hide_a_fail(self):
        o = self.run_fake("""
            for c in CASES: emit(c)
            emit(CASES[2], "fail", message="wrong")
            sys.exit(0)""")
        self.assertEqual((o.status, o.case), ("fail", "n=1025 integer"))

    def test_exit_1_with_every_case_passed(self):
        o = self.run_fake("for c in CASES: emit(c)\nsys.exit(1)")
        self.assertEqual(o.status, "fail")

    def test_cut_line_is_skipped(self):
        o = self.run_fake("""
            emit(CASES[0])
            open(RESULT, "a").write('{"case": "n=33 integer", "kind": "che')
            os.kill(os.getpid(), signal.SIGKILL)""")
        self.assertEqual((o.status, o.case, len(o.lines)), ("crash", "n=33 integer", 1))
        self.assertIn("SIGKILL", o.message)

    def test_bench_line(self):
        o = self.run_fake("bench(4.0)", args=["--bench", "2^10", "--seed", "1"])
        self.assertEqual(o.status, "pass")
        self.assertEqual(o.bench_line()["speedup"], 4.0)

    def test_missing_program(self):
        p = run_process([str(self.dir / "nothing")], timeout=5)
        self.assertEqual(p.returncode, 127)
        self.assertIn("cannot run", p.output)


if __name__ == "__main__":
    unittest.main()
