"""grader/run/runs_ahead.py: a lab's simulator runs started ahead, side by side, taken one at a time in the grading's
order, with fake runs (tests/sim/test_ordering.py grades a bug both ways on the simulator itself)."""
import concurrent.futures
import functools
import tempfile
import threading
import time
import unittest
import unittest.mock
from pathlib import Path
from types import SimpleNamespace

from grader.run import runs_ahead
from grader.run.runs_ahead import RunsAhead


def fake_run(log, slow=(), fails=()):
    """A run(program, args, *, workdir, cancel, ...) that writes its folder, records its start and fails for the
    folder names in fails; one named in slow waits until cancelled (or 5 s)."""
    def run(program, args, *, workdir, cancel, timeout, env=None, **kwargs):
        Path(workdir).mkdir(parents=True, exist_ok=True)
        (Path(workdir) / "sim-report.json").write_text("{}")
        log.append(Path(workdir).name)
        if Path(workdir).name in slow:
            end = time.monotonic() + 5
            while not cancel.is_set() and time.monotonic() < end:
                time.sleep(0.01)
            return SimpleNamespace(passed=False, message="killed")
        ok = Path(workdir).name not in fails
        return SimpleNamespace(passed=ok, message="" if ok else f"{Path(workdir).name} failed")
    return run


class RunsAheadTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.pool = concurrent.futures.ThreadPoolExecutor(4)
        self.addCleanup(self.tmp.cleanup)
        self.addCleanup(self.pool.shutdown)

    def test_the_grading_takes_what_ran_ahead_and_the_rest_is_stopped_and_removed(self):
        log = []
        run = fake_run(log, slow={"3"}, fails={"1"})
        ahead = RunsAhead(run, pool=self.pool)
        for k in range(6):
            ahead.start("prog", ["--n", str(k)], workdir=self.root / str(k), timeout=9, cwd="/kit", source="a.cu")
        # the grading, one at a time up to the first failure (as grade_group does)
        outcomes = []
        for k in range(6):
            outcome = ahead.take("prog", ["--n", str(k)], workdir=self.root / str(k), timeout=3, cwd="/kit",
                                 source="a.cu")
            outcomes.append(outcome)
            if not outcome.passed:
                break
        self.assertEqual([o.passed for o in outcomes], [True, False])
        self.assertEqual(outcomes[1].message, "1 failed")
        started = time.monotonic()
        ahead.close()
        self.assertLess(time.monotonic() - started, 3)  # the slow run was killed through its cancel, not waited for
        self.assertEqual(sorted(p.name for p in self.root.iterdir()), ["0", "1"])  # what the grading took, only

    def test_what_the_grading_goes_past_is_stopped_at_once(self):
        """A group that ends at its first case (a blank lab) does not make the next group wait for the rest of its
        runs: asking for a later run stops every earlier one not asked for (one thread here, so order tells)."""
        log = []
        pool = concurrent.futures.ThreadPoolExecutor(1)
        self.addCleanup(pool.shutdown)
        ahead = RunsAhead(fake_run(log, slow={"a1"}, fails={"a0"}), pool=pool)
        for name in ("a0", "a1", "a2", "b0"):
            ahead.start("prog", [], workdir=self.root / name, timeout=9)
        self.assertFalse(ahead.take("prog", [], workdir=self.root / "a0", timeout=9).passed)
        while "a1" not in log:  # the slow run of the ended group is running
            time.sleep(0.01)
        started = time.monotonic()
        self.assertTrue(ahead.take("prog", [], workdir=self.root / "b0", timeout=9).passed)
        self.assertLess(time.monotonic() - started, 3)  # a1 stopped, a2 never started
        self.assertEqual(log, ["a0", "a1", "b0"])
        ahead.close()
        self.assertEqual(sorted(p.name for p in self.root.iterdir()), ["a0", "b0"])

    def test_a_call_not_as_started_is_left_to_the_caller(self):
        ahead = RunsAhead(fake_run([]), pool=self.pool)
        ahead.start("prog", ["--n", "5"], workdir=self.root / "a", timeout=9, cwd="/kit", source="a.cu")
        self.assertIsNone(ahead.take("prog", ["--n", "6"], workdir=self.root / "a", timeout=9, cwd="/kit",
                                     source="a.cu"))
        self.assertIsNone(ahead.take("prog", ["--n", "5"], workdir=self.root / "b", timeout=9, cwd="/kit",
                                     source="a.cu"))
        ahead.close()
        self.assertTrue((self.root / "a").is_dir())  # the caller's own run writes there: it is kept

    def test_a_schedule_is_its_own_run(self):
        log = []
        ahead = RunsAhead(fake_run(log), pool=self.pool)
        env = {"PPL_SIM_SCHEDULE": "reverse:7"}
        ahead.start("prog", [], workdir=self.root / "c", timeout=9)
        ahead.start("prog", [], workdir=self.root / "c" / "reverse-7", env=env, timeout=9)
        self.assertTrue(ahead.take("prog", [], workdir=self.root / "c" / "reverse-7", env=env, timeout=9).passed)
        self.assertIsNone(ahead.take("prog", [], workdir=self.root / "c" / "reverse-7", timeout=9))  # not in order
        ahead.close()

    def test_a_bound_cancel_still_stops_the_runs(self):
        """sim_check.py binds the lab's stop event (drop) to its run: it still kills a run started ahead."""
        log, stop = [], threading.Event()
        ahead = RunsAhead(functools.partial(fake_run(log, slow={"s"}), cancel=stop), pool=self.pool)
        ahead.start("prog", [], workdir=self.root / "s", timeout=9)
        while "s" not in log:
            time.sleep(0.01)
        stop.set()
        started = time.monotonic()
        self.assertFalse(ahead.take("prog", [], workdir=self.root / "s", timeout=9).passed)
        self.assertLess(time.monotonic() - started, 3)
        ahead.close()

    def test_runs_in_one_program_are_taken_up_to_the_first_failure(self):
        """start_lists: a list's outcome is the grading's only where every list before it in that program passed;
        after a failure the grading runs the rest itself (take gives None), and only taken lists are saved."""
        programs, saved = [], []

        def run_lists(program, lists, *, timeouts, workdir, cancel, cwd, source, on_ready):
            programs.append((program, [list(a) for a in lists], timeouts, Path(workdir).name))
            return [SimpleNamespace(passed=a[-1] != "bad", status="pass" if a[-1] != "bad" else "fail", message=a[-1])
                    for a in lists]

        ahead = RunsAhead(fake_run([]), pool=self.pool)
        cases = [["--n", "1"], ["--n", "bad"], ["--n", "3"]]
        calls = [(args, self.root / str(k), None, 7, [*args]) for k, args in enumerate(cases)]
        ahead.start_lists(run_lists, "prog", calls, folder=self.root / "lists", cwd="/kit", source="a.cu",
                          save=lambda outcome, workdir, folder: saved.append(Path(workdir).name))
        take = functools.partial(ahead.take, "prog", timeout=3, cwd="/kit", source="a.cu")
        self.assertTrue(take(cases[0], workdir=self.root / "0").passed)
        self.assertEqual(take(cases[1], workdir=self.root / "1").message, "bad")
        self.assertIsNone(take(cases[2], workdir=self.root / "2"))  # after a failure: the grading runs it
        self.assertIsNone(take(["--n", "4"], workdir=self.root / "9"))  # never started
        ahead.close()
        self.assertEqual(programs, [("prog", cases, [7, 7, 7], "lists")])  # one program for the three
        self.assertEqual(saved, ["0", "1"])

    def test_a_list_is_taken_as_soon_as_it_is_over(self):
        """A list the program told of (on_ready) is the grading's before the program ends: a later list that hangs
        does not hold the earlier ones."""
        def run_lists(program, lists, *, cancel, on_ready, **kwargs):
            on_ready(0, SimpleNamespace(passed=True, status="pass", message="first"))
            end = time.monotonic() + 5
            while not cancel.is_set() and time.monotonic() < end:
                time.sleep(0.01)
            return None

        ahead = RunsAhead(fake_run([]), pool=self.pool)
        calls = [(["--n", str(k)], self.root / str(k), None, 7, ["--n", str(k)]) for k in range(2)]
        ahead.start_lists(run_lists, "prog", calls, folder=self.root / "l", save=lambda *a: None, cwd="/kit",
                          source="a.cu")
        started = time.monotonic()
        self.assertEqual(ahead.take("prog", ["--n", "0"], workdir=self.root / "0", timeout=3, cwd="/kit",
                                    source="a.cu").message, "first")
        self.assertLess(time.monotonic() - started, 3)
        started = time.monotonic()
        ahead.close()  # the program still going is stopped through its cancel
        self.assertLess(time.monotonic() - started, 3)

    def test_a_list_asked_for_with_other_arguments_is_not_taken(self):
        ahead = RunsAhead(fake_run([]), pool=self.pool)
        ahead.start_lists(lambda program, lists, **kw: [SimpleNamespace(passed=True, status="pass")] * len(lists),
                          "prog", [(["--n", "1"], self.root / "0", None, 7, ["--n", "1"])], folder=self.root / "l",
                          save=lambda *a: None, cwd="/kit", source="a.cu")
        self.assertIsNone(ahead.take("prog", ["--n", "2"], workdir=self.root / "0", timeout=3, cwd="/kit",
                                     source="a.cu"))
        ahead.close()

    def test_a_background_pool_runs_at_a_lower_priority(self):
        """RunPool(background=True): its threads, and the programs they start, are BACKGROUND_NICE nicer than the
        grading (a simulator check beside the GPU side's CPU work)."""
        import os
        import subprocess
        base = os.getpriority(os.PRIO_PROCESS, 0)
        pool = runs_ahead.RunPool(2, background=True)
        self.addCleanup(pool.close)
        child = pool.executor.submit(lambda: subprocess.run(["nice"], capture_output=True, text=True).stdout).result()
        self.assertEqual(int(child), min(19, base + runs_ahead.BACKGROUND_NICE))
        self.assertEqual(os.getpriority(os.PRIO_PROCESS, 0), base)  # the grading's own threads keep theirs
        plain = runs_ahead.RunPool(2)
        self.addCleanup(plain.close)
        self.assertEqual(int(plain.executor.submit(lambda: subprocess.run(["nice"], capture_output=True,
                                                                            text=True).stdout).result()), base)

    def test_jobs(self):
        self.assertEqual([runs_ahead.ahead_jobs(cpus) for cpus in (1, 2, 4, 16)], [1, 2, 4, 16])
        self.assertIsNone(runs_ahead.RunPool(0).executor)  # every run a program of its own, one at a time
        one = runs_ahead.RunPool(1)  # the lab programs of many lists, one after another
        self.assertEqual(one.executor._max_workers, 1)
        one.close()
        pool = runs_ahead.RunPool(3)
        self.assertEqual(pool.executor._max_workers, 3)
        pool.close()

    def test_a_class_worker_has_its_share(self):
        """A class run's build worker (grader/classroom/student.py's worker_init) runs as many at once as its share
        of the cores, and its simulator check half of that (grader/sim/sim_check.py)."""
        from grader.sim import sim_check
        from grader.classroom.student import worker_init
        self.addCleanup(setattr, runs_ahead, "_SHARE", runs_ahead._SHARE)
        with unittest.mock.patch("signal.signal"):
            worker_init(None, 1)
        self.assertEqual((runs_ahead.share(), runs_ahead.ahead_jobs()), (1, 1))
        import os
        seen = []

        def build_worker():  # in a thread of its own: the nice value is the thread's
            with unittest.mock.patch("signal.signal"):
                worker_init(None, 1, background=True)
            seen.append(os.getpriority(os.PRIO_PROCESS, 0))
        base = os.getpriority(os.PRIO_PROCESS, 0)
        thread = threading.Thread(target=build_worker)
        thread.start()
        thread.join()
        self.assertEqual(seen, [min(19, base + runs_ahead.BACKGROUND_NICE)])  # behind the GPU turns
        runs_ahead.set_share(8)
        self.assertEqual(runs_ahead.ahead_jobs(sim_check.workers(runs_ahead.share())), 4)


if __name__ == "__main__":
    unittest.main()
