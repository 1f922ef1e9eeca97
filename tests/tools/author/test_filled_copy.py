"""A student who finished every lab: in a copy of the kit whose labs/ are filled in, the tests that used to read
labs/ as blank skeletons pass, and `make skeletons` keeps the work (refuses; with FORCE=1 keeps a copy first).

Filled in this way (issue 13), `make test` failed 13 tests: the drift check, tests/tools/instructor's leak checks (the release
took labs/ as the blanks, so it would have shipped the answers) and tests/sim's blank-labs test, one per lab. Each
runs again here, in the copy, and must pass; so do the cheap tests that read skeletons (the source check, the
synthetic class's blank students). The copy is what a student's clone holds: the kit's tracked files as they are in
the working tree (a new file must be `git add`ed first, as for make dist), with their times (so that the
simulator's objects, copied from build/sim/, stay up to date), and a git repository of one commit whose labs/ are
the skeletons; then every labs/ file is overwritten with its solution, the marker lines left out. CI is removed
from the copy's environment (a student's machine). 20 s to a minute on 2 cores, most of it the simulator grading
the eight skeletons (longer where build/sim/ has not been built yet).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from tools.author.make_skeletons import derive, lab_files
from grader.patterns import KIT
from tests.timing import slow

HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None
MARKER = re.compile(r"^\s*// @@ (BEGIN|END) SOLUTION")
BLANK = re.compile(r"^\s*// @@ TODO", re.M)


def git(folder, *args) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="a student", GIT_AUTHOR_EMAIL="student@localhost", GIT_CONFIG_NOSYSTEM="1",
               GIT_COMMITTER_NAME="a student", GIT_COMMITTER_EMAIL="student@localhost", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, env=env,
                          check=True).stdout


def filled_copy(dest: Path) -> dict:
    """Makes dest a student's copy of the kit with every lab filled in; returns {labs/...: the filled text}."""
    listed = git(KIT, "ls-files", "-z", "--cached").split("\0")
    for rel in filter(None, dict.fromkeys(listed)):
        src, dst = KIT / rel, dest / rel
        if src.is_file() or src.is_symlink():  # not one deleted in the working tree
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)
    for shared in ("harness", "lib"):  # the simulator's harness objects and library, if built
        if (KIT / "build" / "sim" / shared).is_dir():
            try:
                shutil.copytree(KIT / "build" / "sim" / shared, dest / "build" / "sim" / shared, symlinks=True)
            except (OSError, shutil.Error):  # being rebuilt meanwhile: the copy builds its own
                shutil.rmtree(dest / "build" / "sim" / shared, ignore_errors=True)
    derive(dest / "labs", dest / "solutions")  # the kit's own state, whatever this kit's labs/ holds
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "the kit, as cloned")
    filled = {}
    for rel, _ in lab_files(dest / "solutions"):
        solution = (dest / "solutions" / rel).read_text()
        if "@@ BEGIN SOLUTION" in solution:
            text = "".join(ln for ln in solution.splitlines(True) if not MARKER.match(ln))
            (dest / "labs" / rel).write_text(text)
            filled[f"labs/{rel.as_posix()}"] = text
    return filled


class FilledCopy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="filled-kit-")
        cls.addClassCleanup(cls.tmp.cleanup)
        cls.kit = Path(cls.tmp.name) / "kit"
        cls.filled = filled_copy(cls.kit)

    def run_in_copy(self, *argv, timeout=600) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONPATH")}
        return subprocess.run(argv, cwd=self.kit, env=env, capture_output=True, text=True, timeout=timeout)

    def unittest_in_copy(self, *names, timeout=600):
        done = self.run_in_copy(sys.executable, "-m", "unittest", *names, timeout=timeout)
        said = (done.stdout[-4000:] + done.stderr[-8000:]).splitlines()
        self.assertEqual(done.returncode, 0, "in the copy:\n" + "\n".join("    " + ln for ln in said))
        self.assertRegex(done.stderr, r"\nOK\b")
        for rel, text in self.filled.items():
            self.assertEqual((self.kit / rel).read_text(), text, f"{names} changed the student's {rel}")

    def test_the_copy_is_filled_in(self):
        self.assertEqual(len(self.filled), len(list((KIT / "solutions").glob("[0-9][0-9]-*"))),
                         "the copy is made from git's tracked files: a lab of solutions/ that git does not track is "
                         "left out (git add a new lab's files: docs/AUTHORING.md, 'A new lab of an existing pattern')")
        self.assertFalse([rel for rel in self.filled if BLANK.search((self.kit / rel).read_text())])

    def test_the_drift_check(self):
        done = self.run_in_copy(sys.executable, "-m", "tools.author.make_skeletons", "--check")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn(f"{len(self.filled)} with edits", done.stdout)

    @slow  # 36 s on 2 cores (tests/timing.py: over about 20 s, make test-all's)
    def test_the_release_ships_skeletons_not_answers(self):
        self.unittest_in_copy("tests.tools.instructor.test_dist.Rules", "tests.tools.instructor.test_dist.Release")

    def test_the_source_check_and_the_synthetic_class(self):
        self.unittest_in_copy("tests.grader.test_build.SourceText", "tests.tools.instructor.test_make_class")

    @unittest.skipUnless(HAVE_NVCC, "nvcc not found: the simulator's test of the blank labs builds them")
    @slow  # make test-all's: see tests/timing.py
    def test_the_blank_labs_lose_points_on_the_simulator(self):
        self.unittest_in_copy("tests.sim.test_sim.Grading.test_blank_labs_lose_points")


class MakeSkeletonsInAFilledCopy(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="filled-kit-")
        self.addCleanup(self.tmp.cleanup)
        self.kit = Path(self.tmp.name) / "kit"
        self.filled = filled_copy(self.kit)

    def make(self, *args) -> subprocess.CompletedProcess:
        return subprocess.run(["make", "--no-print-directory", "-s", "skeletons", *args], cwd=self.kit,
                              capture_output=True, text=True, timeout=120)

    def test_refuses_then_keeps_a_copy(self):
        done = self.make()
        self.assertNotEqual(done.returncode, 0, done.stdout + done.stderr)
        for rel, text in self.filled.items():
            self.assertIn(rel, done.stderr)
            self.assertEqual((self.kit / rel).read_text(), text, rel)
        self.assertIn("make skeletons FORCE=1", done.stderr)
        self.assertFalse((self.kit / "backups").exists())

        done = self.make("FORCE=1")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        folders = list((self.kit / "backups").iterdir())
        self.assertEqual(len(folders), 1)
        for rel, text in self.filled.items():
            self.assertEqual((folders[0] / rel).read_text(), text, rel)
            self.assertRegex((self.kit / rel).read_text(), BLANK, rel)
        restore = re.search(r"to put them all back: (cp -r \S+ labs/)", done.stdout)
        self.assertIsNotNone(restore, done.stdout)
        subprocess.run(restore.group(1), shell=True, cwd=self.kit, check=True)
        for rel, text in self.filled.items():
            self.assertEqual((self.kit / rel).read_text(), text, rel)


if __name__ == "__main__":
    unittest.main()
