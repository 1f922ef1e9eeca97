"""No process outlives its grading (issue 35, item 4; docs/DESIGN.md, "Process lifetime"): a grading killed while
the student's runner spins (tests/attacks/37-grader-host-infinite-loop, lab 03 on the simulator) leaves no checker,
runner, device program or bubblewrap behind, whether SIGTERM reached make's process group (as timeout(1) sends it),
the grader was killed with SIGKILL, or make was; and the same for a class (python3 -m grader.classroom).

Each test snapshots every process below the command it started once the runner runs, kills, and looks again: a
process of the snapshot still there (same pid, same start time, not a zombie) is a survivor. Slow: each grading
builds lab 03 with nvcc first (20 to 40 s on 2 cores); it needs nvcc, as every simulator test does."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from grader.classroom import records
from grader.patterns import KIT
from tests.timing import slow

LAB = "03-sequential"
SPINNER = KIT / "tests" / "attacks" / "37-grader-host-infinite-loop" / "reduce.cu"
START_LIMIT = 300  # seconds to the runner's start: the harness and the lab are built first
GONE_LIMIT = 15  # seconds the processes of a killed grading have to be gone


def _stat(pid: int) -> tuple | None:
    """(state, parent, start time) of pid, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def below(root: int) -> dict:
    """{pid: (start time, command line)} of every live process under root (root excluded)."""
    stats = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (stat := _stat(int(name))) is not None and stat[0] not in "ZX":
            stats[int(name)] = stat
    found = {}
    for pid, (_, parent, start) in stats.items():
        up, seen = parent, 0
        while up not in (0, 1, root) and up in stats and seen < 64:
            up, seen = stats[up][1], seen + 1
        if up == root:
            found[pid] = (start, _cmdline(pid))
    return found


def alive(snapshot: dict) -> dict:
    """The processes of snapshot still running (a zombie is not: it runs nothing and holds nothing but its pid)."""
    left = {}
    for pid, (start, cmd) in snapshot.items():
        stat = _stat(pid)
        if stat is not None and stat[2] == start and stat[0] not in "ZX":
            left[pid] = cmd
    return left


def is_runner(cmd: str) -> bool:
    program = os.path.basename(cmd.split(" ", 1)[0])
    return program in ("runner", "reduce_runner")


@unittest.skipUnless(shutil.which("nvcc"), "the simulator builds the labs with nvcc, which is not on PATH")
@unittest.skipUnless(Path("/proc/self/stat").exists(), "the test reads /proc")
@slow  # make test-all's: see tests/timing.py
class NoSurvivor(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.submission = self.dir / "labs"
        (self.submission / LAB).mkdir(parents=True)
        shutil.copy(SPINNER, self.submission / LAB / "reduce.cu")
        self.started, self.snapshots = [], []

    def tearDown(self):
        for proc, snapshot in zip(self.started, self.snapshots + [{}] * len(self.started)):
            # whatever the test's end, nothing of it stays: what it snapshot (a survivor was given to init) and more
            for pid in [*alive(snapshot), *below(proc.pid)]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def start(self, argv) -> tuple:
        """(the command, in a session of its own as `timeout` would run it; the snapshot of what runs below it once
        the student's runner spins)."""
        # the output into a file, not a pipe: waiting for a pipe's end would wait for whatever survived and holds it
        self.log = self.dir / f"output-{len(self.started)}.log"
        with open(self.log, "wb") as log:
            proc = subprocess.Popen(argv, cwd=KIT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self.started.append(proc)
        deadline = time.monotonic() + START_LIMIT
        while time.monotonic() < deadline and proc.poll() is None:
            tree = below(proc.pid)
            if any(is_runner(cmd) for _, cmd in tree.values()):
                time.sleep(1.0)  # the runner spins; what the grader started meanwhile is there too
                self.snapshots.append(below(proc.pid))
                return proc, self.snapshots[-1]
            time.sleep(0.5)
        out = self.log.read_text(errors="replace")
        self.fail(f"the student's runner never ran within {START_LIMIT} s: {out[-3000:]}")

    def assert_none_left(self, proc, snapshot, expect=None) -> str:
        """Waits for proc to end, then for the snapshot's processes to be gone; proc's output."""
        self.assertTrue(any("ppl_checker" in cmd for _, cmd in snapshot.values()), snapshot)
        self.assertTrue(any(is_runner(cmd) for _, cmd in snapshot.values()), snapshot)
        try:
            proc.wait(timeout=120)  # a class told to stop gives its workers up to 30 s (pool.stop_workers)
        except subprocess.TimeoutExpired:
            self.fail("the killed command did not end within 120 s")
        deadline = time.monotonic() + GONE_LIMIT
        while alive(snapshot) and time.monotonic() < deadline:
            time.sleep(0.2)
        left, out = alive(snapshot), self.log.read_text(errors="replace")
        self.assertEqual(left, {}, f"{len(left)} processes outlived the grading (pid: command line):\n" +
                         "\n".join(f"{pid}: {cmd[:300]}" for pid, cmd in left.items()) + f"\n{out[-2000:]}")
        if expect is not None:
            self.assertEqual(proc.returncode, expect, out[-3000:])
        return out

    def grader_of(self, snapshot) -> int:
        pids = [pid for pid, (_, cmd) in snapshot.items() if " -m grader" in cmd]
        self.assertTrue(pids, snapshot)
        return min(pids)  # the grader itself, not a worker of it

    def make_grade(self):
        return self.start(["make", "-s", "grade", "SIM=1", f"LAB={LAB[:2]}", f"SUBMISSION={self.submission}",
                           f"RESULTS={self.dir / 'results.json'}"])

    def test_sigterm_to_makes_group(self):
        """timeout(1) sends SIGTERM to make and its process group; the checker is in a session of its own."""
        proc, snapshot = self.make_grade()
        os.killpg(proc.pid, signal.SIGTERM)
        self.assert_none_left(proc, snapshot)

    def test_sigkill_of_the_grader(self):
        proc, snapshot = self.start([sys.executable, "-m", "grader", "--simulator", "--lab", LAB[:2],
                                     "--submission", str(self.submission), "--build-dir", str(self.dir / "build"),
                                     "--results", str(self.dir / "results.json")])
        os.kill(proc.pid, signal.SIGKILL)
        self.assert_none_left(proc, snapshot, expect=-signal.SIGKILL)

    def test_sigkill_of_the_grader_under_make(self):
        proc, snapshot = self.make_grade()
        os.kill(self.grader_of(snapshot), signal.SIGKILL)
        self.assert_none_left(proc, snapshot)

    def test_sigkill_of_make(self):
        """Nobody forwards a SIGKILL: the grader sees make end (PPL_DIE_WITH) and stops as on SIGTERM."""
        proc, snapshot = self.make_grade()
        os.kill(proc.pid, signal.SIGKILL)
        self.assert_none_left(proc, snapshot, expect=-signal.SIGKILL)

    def grade_class(self):
        uploads, out = self.dir / "uploads", self.dir / "class"
        shutil.copytree(self.submission, uploads / "alice" / "labs")
        return self.start([sys.executable, "-m", "grader.classroom", "grade", str(uploads), "--out", str(out),
                           "--lab", LAB[:2], "--simulator", "--jobs", "1", "--no-similarity"]), out

    def test_a_class_told_to_stop(self):
        """SIGTERM to the class's process group: it writes what it has (the gradebook) and leaves nothing."""
        (proc, snapshot), out = self.grade_class()
        os.killpg(proc.pid, signal.SIGTERM)
        self.assert_none_left(proc, snapshot, expect=records.EXIT_INTERRUPTED)
        self.assertIn("not graded", (out / records.GRADEBOOK).read_text())

    def test_a_class_killed(self):
        """SIGKILL of the class's process: its workers see it end, kill what they run and end."""
        (proc, snapshot), _ = self.grade_class()
        self.assertTrue(any("multiprocessing" in cmd for _, cmd in snapshot.values()), snapshot)
        os.kill(proc.pid, signal.SIGKILL)
        self.assert_none_left(proc, snapshot, expect=-signal.SIGKILL)


if __name__ == "__main__":
    unittest.main()
