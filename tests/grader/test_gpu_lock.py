"""grader/run/gpu_lock.py: students of a class share a GPU for their correctness runs, a benchmark has it alone, and a
waiting benchmark goes before runs that come after it."""
import tempfile
import threading
import time
import unittest

from grader.run.gpu_lock import GpuLock


class Lock(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.lock = GpuLock(tmp.name, "0")
        self.events, self.guard = [], threading.Lock()

    def note(self, what):
        with self.guard:
            self.events.append(what)

    def hold(self, how, name, seconds, delay=0.0):
        def body():
            time.sleep(delay)
            with getattr(self.lock, how)():
                self.note(f"{name} in")
                time.sleep(seconds)
                self.note(f"{name} out")
        thread = threading.Thread(target=body)
        thread.start()
        return thread

    def test_runs_share_the_gpu(self):
        threads = [self.hold("shared", "a", 0.3), self.hold("shared", "b", 0.3, delay=0.05)]
        for t in threads:
            t.join()
        self.assertEqual(self.events[:2], ["a in", "b in"])

    def test_a_benchmark_waits_for_the_runs_and_keeps_them_out(self):
        threads = [self.hold("shared", "run", 0.3), self.hold("exclusive", "bench", 0.3, delay=0.05),
                   self.hold("shared", "later run", 0.1, delay=0.1)]
        for t in threads:
            t.join()
        self.assertEqual(self.events, ["run in", "run out", "bench in", "bench out", "later run in",
                                       "later run out"])


if __name__ == "__main__":
    unittest.main()
