"""unittest with each test's wall time: `python3 -m tests.timing MODULE...` runs as `python3 -m unittest` does (the
same output, which tests/run.py reads), then prints the slowest tests, so a suite that grows slow says where.

Slow tests are marked with `slow` (below): make test skips them, saying so, and make test-all (PPL_TEST_ALL=1) runs
them; a test is slow when it takes more than about 20 s on 2 cores (a whole lab graded on the simulator, a class run,
a fresh machine).

PPL_TEST_TIMES=FILE appends a line per test to FILE, `SECONDS<TAB>TEST ID`, and one for the time between two tests
(a class's setUpClass and tearDownClass, a module's set-up) over 0.1 s, `SECONDS<TAB>set-up before TEST ID`, so that
a whole run's times can be studied: `sort -rn FILE | head`.
"""
import os
import sys
import time
import unittest

ALL = os.environ.get("PPL_TEST_ALL") == "1"
SHOWN = 8  # the slowest tests printed after a run
TIMES = os.environ.get("PPL_TEST_TIMES")  # a file to append every test's seconds to (the docstring)


def slow(test):
    """Marks a test (or a class of tests) that only make test-all runs (README: which command is which)."""
    return unittest.skipUnless(ALL, "slow: make test-all runs it")(test)


class TimedResult(unittest.TextTestResult):
    """A TextTestResult that keeps (seconds, test id) of every test it ran."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.times, self._start, self._last = [], {}, time.monotonic()

    def startTest(self, test):
        self._start[test.id()] = now = time.monotonic()
        if now - self._last > 0.1:
            self._log(now - self._last, f"set-up before {test.id()}")
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        began = self._start.pop(test.id(), None)
        self._last = time.monotonic()
        if began is not None:
            self.times.append((self._last - began, test.id()))
            self._log(self._last - began, test.id())

    @staticmethod
    def _log(seconds: float, what: str):
        if TIMES:
            with open(TIMES, "a") as f:
                f.write(f"{seconds:.2f}\t{what}\n")


class TimedRunner(unittest.TextTestRunner):
    resultclass = TimedResult

    def run(self, test):
        result = super().run(test)
        slowest = sorted(result.times, reverse=True)[:SHOWN]
        if slowest:
            self.stream.write("slowest: " + "; ".join(f"{s:.1f} s {name}" for s, name in slowest) + "\n")
        return result


if __name__ == "__main__":
    unittest.main(module=None, argv=[sys.argv[0], *sys.argv[1:]], testRunner=TimedRunner)
