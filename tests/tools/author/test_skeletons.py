"""tools/author/make_skeletons.py: the kit's labs/ are the skeletons of its solutions/ (the drift check), and its rules on a
small made-up kit in a temp git repository: `make skeletons` replaces only files that are still blank skeletons and
keeps a copy of anything it replaces with --force; the drift check tells a student's work from drift.

The drift rule, as tested here (and written in make_skeletons.py's docstring): a labs/ file equal to the skeleton
derived from solutions/ is fine; one equal to the skeleton of the committed solution (HEAD) is drift (a solution
edited, labs/ not rederived); any other content is edits, judged by the kit's own commits: the skeleton must be what
labs/ held at the last commit that changed the solution, or at a commit since; without git, edits are not judged.
With --strict, or CI set in the environment, labs/ must hold the skeletons, edits or not (the kit's own CI).
"""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from tools.author import make_skeletons
from tools.author.make_skeletons import MarkerError, blank_out
from grader.patterns import KIT


SOLUTION = """\
// A made-up lab file.
__global__ void k(float *d_out)
{
    // @@ BEGIN SOLUTION (about 1 line): write 1 to d_out[0]
    d_out[0] = 1.0f;
    // @@ END SOLUTION
}
"""
SKELETON = """\
// A made-up lab file.
__global__ void k(float *d_out)
{
    // @@ TODO (about 1 line): write 1 to d_out[0]
}
"""
FILLED = SKELETON.replace("    // @@ TODO", "    d_out[0] = 1.0f;  // mine\n    // @@ TODO")


def git(folder, *args) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="drift test", GIT_AUTHOR_EMAIL="drift@localhost", GIT_CONFIG_NOSYSTEM="1",
               GIT_COMMITTER_NAME="drift test", GIT_COMMITTER_EMAIL="drift@localhost", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, env=env,
                          check=True).stdout


class KitDrift(unittest.TestCase):
    def test_labs_are_the_skeletons_of_the_solutions(self):
        """The drift check of the kit itself (a student's filled-in labs/ passes it: see the rules below)."""
        done = subprocess.run([sys.executable, "-m", "tools.author.make_skeletons", "--check"], cwd=KIT, capture_output=True,
                              text=True)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("labs/ matches solutions/", done.stdout)


class BlankOut(unittest.TestCase):
    def test_a_region_becomes_its_todo_line(self):
        self.assertEqual(blank_out(SOLUTION), SKELETON)
        self.assertEqual(blank_out("no regions\n"), "no regions\n")

    def test_unpaired_markers_name_the_line(self):
        for text, says in (("// @@ BEGIN SOLUTION\n", ":1: BEGIN SOLUTION never closed"),
                           ("x\n// @@ END SOLUTION\n", ":2: END SOLUTION without a BEGIN"),
                           ("// @@ BEGIN SOLUTION\n  // @@ BEGIN SOLUTION\n", ":2: BEGIN SOLUTION inside")):
            with self.subTest(text=text), self.assertRaisesRegex(MarkerError, says):
                blank_out(text, "a.cu")


class Rules(unittest.TestCase):
    """A made-up kit (solutions/01-first/a.cu and its labs/ skeleton, committed) in a temp git repository."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="drift-test-")
        self.addCleanup(self.tmp.cleanup)
        self.kit = Path(self.tmp.name) / "kit"
        for rel, text in (("solutions/01-first/a.cu", SOLUTION), ("labs/01-first/a.cu", SKELETON)):
            (self.kit / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.kit / rel).write_text(text)
        git(self.kit, "init", "-q")
        self.commit("the kit")
        self.lab = self.kit / "labs/01-first/a.cu"

    def commit(self, message):
        git(self.kit, "add", "-A")
        git(self.kit, "commit", "-q", "-m", message)

    def run_tool(self, *args, env=None) -> tuple:
        """(exit status, stdout, stderr) of make_skeletons.main on the made-up kit."""
        out, err = io.StringIO(), io.StringIO()
        old = dict(os.environ)
        os.environ.pop("CI", None)
        os.environ.update(env or {})
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = make_skeletons.main(["--solutions", str(self.kit / "solutions"),
                                              "--labs", str(self.kit / "labs"), *args])
        finally:
            os.environ.clear()
            os.environ.update(old)
        return status, out.getvalue(), err.getvalue()

    def edit_solution(self):
        path = self.kit / "solutions/01-first/a.cu"
        path.write_text(path.read_text().replace("write 1", "write one"))
        return SKELETON.replace("write 1", "write one")

    # ---- make skeletons ----

    def test_edited_files_are_named_and_nothing_is_written(self):
        self.edit_solution()  # a file that could be rewritten, beside the edited one: neither is
        (self.kit / "solutions/02-second").mkdir()
        (self.kit / "solutions/02-second/b.cu").write_text(SOLUTION)
        self.lab.write_text(FILLED)
        status, out, err = self.run_tool()
        self.assertEqual(status, 1, out + err)
        self.assertIn("labs/01-first/a.cu", err)
        self.assertIn("Nothing was written", err)
        self.assertIn("make skeletons FORCE=1", err)
        self.assertEqual(self.lab.read_text(), FILLED)
        self.assertFalse((self.kit / "labs/02-second").exists())
        self.assertFalse((self.kit / "backups").exists())

    def test_force_keeps_a_copy_first(self):
        self.lab.write_text(FILLED)
        status, out, err = self.run_tool("--force")
        self.assertEqual(status, 0, out + err)
        self.assertEqual(self.lab.read_text(), SKELETON)
        copies = list((self.kit / "backups").glob("skeletons-*/labs/01-first/a.cu"))
        self.assertEqual(len(copies), 1, out)
        self.assertEqual(copies[0].read_text(), FILLED)
        self.assertIn(f"cp -r {copies[0].parents[2].relative_to(self.kit)}/labs/. labs/", out)
        self.lab.write_text(FILLED)  # a second forced run in the same second gets a folder of its own
        self.run_tool("--force")
        self.assertEqual(sorted(p.read_text() for p in (self.kit / "backups").glob("*/labs/01-first/a.cu")),
                         [FILLED, FILLED])

    def test_a_committed_blank_is_rederived_without_force(self):
        """A maintainer edits a solution; labs/ still holds the committed skeleton, which is replaced."""
        want = self.edit_solution()
        status, out, err = self.run_tool()
        self.assertEqual(status, 0, out + err)
        self.assertEqual(self.lab.read_text(), want)
        self.assertFalse((self.kit / "backups").exists())

    def test_missing_files_are_written(self):
        self.lab.unlink()
        self.assertEqual(self.run_tool()[0], 0)
        self.assertEqual(self.lab.read_text(), SKELETON)

    def test_out_writes_a_folder_shaped_like_labs(self):
        out = Path(self.tmp.name) / "derived"
        status, said, _ = self.run_tool("--out", str(out))
        self.assertEqual(status, 0)
        self.assertEqual((out / "01-first/a.cu").read_text(), SKELETON)
        self.assertEqual(make_skeletons.derive(out, self.kit / "solutions"), out)  # again, over the first
        self.lab.write_text(FILLED)
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            self.run_tool("--out", str(self.kit / "labs"))  # --out never replaces labs/ itself
        self.assertEqual(self.lab.read_text(), FILLED)

    # ---- the drift check ----

    def check(self, *args, env=None) -> tuple:
        status, out, err = self.run_tool("--check", *args, env=env)
        return status, out + err

    def test_skeletons_pass(self):
        self.assertEqual(self.check(), (0, "labs/ matches solutions/ (1 files)\n"))

    def test_a_students_work_is_not_drift(self):
        self.lab.write_text(FILLED)
        status, said = self.check()
        self.assertEqual(status, 0, said)
        self.assertIn("labs/01-first/a.cu holds edits (your work?)", said)
        self.commit("my lab")  # committed or not
        self.assertEqual(self.check()[0], 0)

    def test_a_solution_edited_without_rederiving_is_drift(self):
        self.edit_solution()
        status, said = self.check()
        self.assertEqual(status, 1, said)
        self.assertIn("-    // @@ TODO (about 1 line): write 1 to d_out[0]", said)
        self.assertIn("run `make skeletons`", said)
        self.commit("a solution edited, labs/ not rederived")
        self.lab.write_text(FILLED)  # a student's work on top does not hide the kit's drift
        self.assertEqual(self.check()[0], 1)

    def test_the_kit_rederived_in_a_later_commit(self):
        want = self.edit_solution()
        self.commit("the solution")
        self.lab.write_text(want)
        self.commit("its skeleton")
        self.lab.write_text(FILLED)
        self.commit("my lab")
        self.assertEqual(self.check()[0], 0)

    def test_strict_counts_edits_as_drift(self):
        self.lab.write_text(FILLED)
        self.assertEqual(self.check("--strict")[0], 1)
        self.assertEqual(self.check(env={"CI": "true"})[0], 1)
        (self.kit / "labs/01-first/notes.txt").write_text("mine")
        self.lab.write_text(SKELETON)
        self.assertEqual(self.check()[0], 0)  # a file of the student's own is named, not drift
        self.assertEqual(self.check("--strict")[0], 1)

    def test_edits_outside_git_are_not_judged(self):
        shutil.rmtree(self.kit / ".git")
        self.lab.write_text(FILLED)
        status, said = self.check()
        self.assertEqual(status, 0, said)
        self.assertIn("not under git here: not judged", said)
        status, out, err = self.run_tool()  # and make skeletons keeps them all the same
        self.assertEqual((status, self.lab.read_text()), (1, FILLED), out + err)


if __name__ == "__main__":
    unittest.main()
