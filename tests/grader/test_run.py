"""grader/run/run.py: one harness run's verdict, from fake harness programs that pass, fail, hang, crash, find no GPU or
stop before planning their cases."""
import resource
import sys
import tempfile
import time
import unittest
from pathlib import Path

from grader.run.process import OUTPUT_KEEP, Process, run_process
from grader.run.run import interpret, run_harness, run_harness_runs, split_plan, split_program_options
from tests.grader.fakes import fake_program, process_gone

ARGS = ["--data", "integer", "--n", "1,33,1025"]


class ProgramOptions(unittest.TestCase):
    """The limits that hold a runner from its start (RLIMIT_CPU, RLIMIT_DATA) go on a program's own command line,
    not in its lists (the checker starts the runner before it reads the first list)."""

    def test_they_are_taken_out_of_a_list(self):
        self.assertEqual(split_program_options(["--n", "5", "--cpu-seconds", "60", "--host-memory-mib", "512", "-q"]),
                         (["--n", "5", "-q"], ["--cpu-seconds", "60", "--host-memory-mib", "512"]))

    def test_the_lists_of_one_program_must_agree(self):
        with tempfile.TemporaryDirectory() as tmp, self.assertRaises(ValueError):
            run_harness_runs("/bin/true", [["--cpu-seconds", "60"], ["--cpu-seconds", "30"]], timeouts=[1, 1],
                             workdir=tmp)


class Plans(unittest.TestCase):
    """The cases come from the plan line, whatever the arguments were."""

    def test_split_plan(self):
        plan = {"case": "plan", "kind": "plan", "cases": ["a", "b"]}
        line = {"case": "a", "kind": "check", "status": "pass"}
        self.assertEqual(split_plan([plan, line]), (["a", "b"], [line]))
        self.assertEqual(split_plan([line]), (None, [line]))
        self.assertEqual(split_plan([{**plan, "cases": "a"}, line])[0], None)
        self.assertEqual(split_plan([plan, {**plan, "cases": ["x"]}])[0], ["a", "b"])  # the first plan counts

    def test_names_are_the_planned_ones(self):
        lines = [{"case": "plan", "kind": "plan", "cases": ["n=5 random kogge-stone inclusive"]},
                 {"case": "n=5 random kogge-stone inclusive", "kind": "check", "status": "pass"}]
        o = interpret(Process(0, "", 0.1), lines, 10.0)
        self.assertEqual((o.status, o.cases, o.message), ("pass", ["n=5 random kogge-stone inclusive"],
                                                          "1 case passed"))
        self.assertEqual(o.lines, lines[1:])

    def test_an_empty_plan_is_not_a_pass(self):
        o = interpret(Process(0, "", 0.1), [{"case": "plan", "kind": "plan", "cases": []}], 10.0)
        self.assertEqual(o.status, "fail")
        self.assertIn("planned no cases", o.message)


class FakeRuns(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)

    def run_fake(self, body, args=ARGS, timeout=10.0, plan=True, source="reduce.cu"):
        program = fake_program(self.dir, body, plan=plan)
        return run_harness(program, args, timeout=timeout, workdir=self.dir / "run", source=source)

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
            import subprocess
            child = subprocess.Popen(["sleep", "60"])
            open(os.path.join(os.path.dirname(sys.argv[0]), "run", "child.pid"), "w").write(str(child.pid))
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
            sys.exit(77)""", plan=False)
        self.assertEqual(o.status, "no-device")
        self.assertIn("no CUDA device", o.message)

    def test_harness_error(self):
        o = self.run_fake("print('d/in.raw: bad magic', file=sys.stderr); sys.exit(2)",
                          args=["--dataset", "d/in.raw", "--expected", "d/out.raw"])
        self.assertEqual(o.status, "harness-error")
        self.assertIn("d/in.raw: bad magic", o.message)
        self.assertIn("not a fault of reduce.cu", o.message)

    def test_dataset_error_before_the_plan(self):
        """scan_lab checks a dataset before planning: exit 2 and an error line naming the dataset."""
        o = self.run_fake("""
            emit(opt("--dataset"), "error", message="d/out.raw is not the inclusive scan of d/in.raw")
            sys.exit(2)""", args=["--dataset", "d/in.raw", "--expected", "d/out.raw"], plan=False, source="scan.cu")
        self.assertEqual((o.status, o.case), ("harness-error", "d/in.raw"))
        self.assertIn("not a fault of scan.cu", o.message)
        self.assertIn("is not the inclusive scan", o.message)

    def test_exit_before_reporting_every_case(self):
        o = self.run_fake("emit(CASES[0]); sys.exit(0)", source="compact.cu")
        self.assertEqual((o.status, o.case), ("fail", "n=33 integer"))
        self.assertIn("exited with status 0 before reporting it (does compact.cu call exit()?)", o.message)

    def test_no_plan_is_a_failure(self):
        for rc in (0, 1):
            o = self.run_fake(f"all_pass() if {rc} == 0 else sys.exit(1)", plan=False)
            self.assertEqual((o.status, o.case), ("fail", None), rc)
            self.assertEqual(o.message, f"the program stopped before it planned its cases (exit status {rc})")

    def test_the_plan_not_the_arguments_names_the_cases(self):
        """A case the arguments do not suggest is still expected once planned; one missing fails the run."""
        o = self.run_fake("""
            plan(["n=1 random kogge-stone inclusive", "n=1 random brent-kung inclusive"])
            emit("n=1 random kogge-stone inclusive")
            sys.exit(0)""", plan=False)
        self.assertEqual((o.status, o.case), ("fail", "n=1 random brent-kung inclusive"))
        self.assertEqual(o.cases, ["n=1 random kogge-stone inclusive", "n=1 random brent-kung inclusive"])

    def test_timeout_before_the_plan(self):
        o = self.run_fake("time.sleep(60)", timeout=1.0, plan=False)
        self.assertEqual((o.status, o.case), ("timeout", None))
        self.assertIn("timed out after 1 s before it planned its cases", o.message)

    def test_crash_names_the_first_planned_case_without_a_line(self):
        o = self.run_fake("emit(CASES[0]); emit(CASES[1]); os.kill(os.getpid(), signal.SIGABRT)")
        self.assertEqual((o.status, o.case, o.message), ("crash", "n=1025 integer", "crashed with signal SIGABRT"))

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
            write_raw('{"case": "n=33 integer", "kind": "che')
            os.kill(os.getpid(), signal.SIGKILL)""")
        self.assertEqual((o.status, o.case, len(o.lines)), ("crash", "n=33 integer", 1))  # the plan is not a result
        self.assertIn("SIGKILL", o.message)

    def test_bench_line(self):
        o = self.run_fake("bench(4.0)", args=["--bench", "2^10", "--seed", "1"])
        self.assertEqual(o.status, "pass")
        self.assertEqual(o.bench_line()["speedup"], 4.0)

    def test_the_seed_goes_through_a_pipe(self):
        """--seed S reaches the program as --seed-fd (a pipe holding S), never on its command line; the result lines
        come back through --result-fd."""
        o = self.run_fake("emit(CASES[0], seed=SEED, argv=ARGS); emit(CASES[1]); emit(CASES[2]); sys.exit(0)",
                          args=[*ARGS, "--seed", "1234567"])
        self.assertEqual(o.status, "pass", o.message)
        line = o.lines[0]
        self.assertEqual(line["seed"], "1234567")
        self.assertNotIn("--seed", line["argv"])
        self.assertNotIn("1234567", " ".join(line["argv"]))
        self.assertIn("--seed-fd", line["argv"])
        self.assertIn("--result-fd", line["argv"])
        self.assertNotIn("--result", line["argv"])
        self.assertEqual(line["argv"][:len(ARGS)], ARGS)
        self.assertTrue((self.dir / "run" / "result.jsonl").is_file())  # the lines are kept for people, too

    def test_the_program_cannot_read_its_own_output(self):
        o = self.run_fake("""
            print("secret words")
            sys.stdout.flush()
            try:
                os.lseek(1, 0, os.SEEK_SET)
                readable = len(os.read(1, 100)) > 0
            except OSError:
                readable = False
            emit(CASES[0], readable=readable); emit(CASES[1]); emit(CASES[2]); sys.exit(0)""")
        self.assertEqual(o.status, "pass", o.message)
        self.assertFalse(o.lines[0]["readable"])

    def test_crash_names_the_case_the_checker_reported(self):
        """The harness's checker writes an error line for the case whose runner crashed, then dies of the same
        signal: that case is named, not the next one without a line."""
        o = self.run_fake("""
            emit(CASES[0])
            emit(CASES[1], "error", kind="error", message="the process running the lab's code died of SIGSEGV")
            os.kill(os.getpid(), signal.SIGSEGV)""")
        self.assertEqual((o.status, o.case, o.message), ("crash", "n=33 integer", "crashed with signal SIGSEGV"))

    def test_missing_program(self):
        p = run_process([str(self.dir / "nothing")], timeout=5)
        self.assertEqual(p.returncode, 127)
        self.assertIn("cannot run", p.output)


class Processes(unittest.TestCase):
    """run_process against programs that print without end, stop themselves, or leave processes behind."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def wait_gone(self, pid: int, seconds: float = 5.0) -> bool:
        deadline = time.monotonic() + seconds
        while not process_gone(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        return process_gone(pid)

    def test_a_flood_of_output_is_kept_at_both_ends_only(self):
        """1.5 GiB on stdout: the first and last 64 KiB are kept, with the count left out, in memory and in the log;
        the grader's memory does not grow with it."""
        size = 3 << 29
        script = f"echo FIRST; head -c {size} /dev/zero; echo; echo LAST >&2"
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
        p = run_process(["sh", "-c", script], timeout=300, log_path=self.dir / "out.log")
        growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
        self.assertEqual(p.returncode, 0)
        self.assertLess(growth, 64 << 20)
        written = len("FIRST\n") + size + len("\nLAST\n")
        self.assertEqual((p.written, p.dropped), (written, written - 2 * OUTPUT_KEEP))
        self.assertTrue(p.output.startswith("FIRST\n\0"))
        self.assertTrue(p.output.endswith("\0\nLAST\n"))
        self.assertIn(f"[... {written - 2 * OUTPUT_KEEP} bytes of output left out here: the program wrote {written} "
                      f"bytes, of which the first and the last 64 KiB are kept ...]", p.output)
        self.assertLess(len(p.output), 2 * OUTPUT_KEEP + 200)
        self.assertEqual((self.dir / "out.log").read_text(), p.output)

    def test_a_short_output_is_kept_whole(self):
        p = run_process(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
        self.assertEqual((p.returncode, p.output, p.written, p.dropped, p.escaped), (3, "out\nerr\n", 8, 0, ""))

    def test_a_program_that_stops_itself_is_killed_at_its_timeout(self):
        """SIGSTOP to its own process group (itself and a child holding the output): killed at the timeout."""
        script = f"sleep 60 & echo $! > {self.dir}/child; echo stopping; kill -STOP 0; echo never"
        start = time.monotonic()
        p = run_process(["sh", "-c", script], timeout=1.0)
        self.assertLess(time.monotonic() - start, 10)
        self.assertTrue(p.timed_out)
        self.assertEqual(p.output, "stopping\n")
        self.assertTrue(self.wait_gone(int((self.dir / "child").read_text())), "the stopped child is still there")

    def test_a_stopped_program_that_ignores_signals_is_killed(self):
        script = "trap '' TERM INT HUP; echo stopping; kill -STOP $$"
        start = time.monotonic()
        p = run_process(["sh", "-c", script], timeout=0.5)
        self.assertLess(time.monotonic() - start, 10)
        self.assertTrue(p.timed_out)

    def test_a_process_that_leaves_the_session_does_not_hold_the_run(self):
        """setsid escapes killpg (the sandbox forbids it): the run still ends when the program does, says so, and
        kills the escaped process that holds its output."""
        script = (f"setsid sh -c 'echo $$ > {self.dir}/escaped; exec sleep 60' &\n"
                  f"while [ ! -s {self.dir}/escaped ]; do sleep 0.05; done\necho started")
        start = time.monotonic()
        p = run_process(["sh", "-c", script], timeout=30)
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual(p.returncode, 0)
        self.assertTrue(p.output.startswith("started\n"), p.output)
        self.assertIn("1 process started by the program outlived it outside its process group", p.escaped)
        self.assertIn(p.escaped, p.output)
        self.assertTrue(self.wait_gone(int((self.dir / "escaped").read_text())))

    def test_a_process_in_a_group_of_its_own_is_killed(self):
        """A child that moves to a new process group (setpgid) is still in the session: killed when the run ends,
        even with its output closed."""
        script = ("import os, sys, time\n"
                  "if os.fork() == 0:\n"
                  "    os.setpgid(0, 0); os.close(1); os.close(2)\n"
                  f"    open('{self.dir}/moved', 'w').write(str(os.getpid()))\n"
                  "    time.sleep(60); os._exit(0)\n"
                  f"while not os.path.exists('{self.dir}/moved') or not os.path.getsize('{self.dir}/moved'):\n"
                  "    time.sleep(0.05)\n")
        p = run_process([sys.executable, "-c", script], timeout=30)
        self.assertEqual(p.returncode, 0)
        self.assertIn("1 process started by the program outlived it", p.escaped)
        self.assertTrue(self.wait_gone(int((self.dir / "moved").read_text())))

    def test_the_end_of_a_run_is_seen_as_it_comes(self):
        """_wait polls a pidfd: it never sleeps in Popen.wait's steps, with or without a cancel to look at."""
        import subprocess
        import threading
        from unittest import mock
        steps = []
        real = subprocess.Popen.wait

        def wait(proc, timeout=None):
            steps.append(timeout)
            return real(proc, timeout)
        with mock.patch.object(subprocess.Popen, "wait", wait):
            for cancel in (None, threading.Event()):
                p = run_process([sys.executable, "-c", "import time; time.sleep(0.3); raise SystemExit(3)"],
                                timeout=30, cancel=cancel)
                self.assertEqual(p.returncode, 3)
        self.assertEqual(steps, [None, None], "the exit was awaited in timed steps, not through the pidfd")

    def test_missing_program_with_a_log(self):
        p = run_process([str(self.dir / "nothing")], timeout=5, log_path=self.dir / "log")
        self.assertEqual(p.returncode, 127)
        self.assertIn("cannot run", (self.dir / "log").read_text())


if __name__ == "__main__":
    unittest.main()


class RunSeconds(unittest.TestCase):
    """run_seconds: each run of a --runs-fd program lasts from the previous run-end line's arrival to its own."""

    def test_from_the_arrival_of_each_run_end(self):
        import json as json_mod
        import tempfile
        from grader.run.run import run_seconds
        lines = [{"case": "a", "run": 0, "kind": "check"}, {"case": "run", "run": 0, "kind": "run-end"},
                 {"case": "b", "run": 1, "kind": "check"}, {"case": "run", "run": 1, "kind": "run-end"}]
        data = b"".join(json_mod.dumps(ln).encode() + b"\n" for ln in lines)
        ends = [k for k in range(len(data)) if data[k:k + 1] == b"\n"]
        arrivals = [(ends[1] + 1, 11.5), (len(data), 14.0)]  # the first two lines came at 11.5 s, the rest at 14 s
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "result.jsonl"
            path.write_bytes(data)
            self.assertEqual(run_seconds(path, arrivals, start=10.0), {0: 1.5, 1: 2.5})
