"""make gradescope: the autograder zip, unpacked into a folder shaped like Gradescope's /autograder
(AUTOGRADER_ROOT), grades a submission and always leaves a valid results.json: without a GPU (the run-time tests
say they need one), with a compile error, without nvcc, when the grader crashes, when Python is missing. And the
student's files are found in every shape the README allows, archives unpacked by grader/unpack.py within its caps (a
nested zip bomb stops at the upload's 200 MiB)."""
import io
import os
import shutil
import stat
import tarfile
import tempfile
import time
import unittest
import zipfile
from pathlib import Path

from tests.tools.instructor.support import (KIT, SM, GradescopeFormat, have_gpu, have_nvcc, leaks_in, run, shared_harness_build,
                                solution_secrets)
from grader import gradescope as autograde
from tests.grader.classroom.test_intake import disk_bytes, nested_bomb
from tools.author.make_skeletons import blank_out

BOMB_NOTE = "could not unpack inner.zip: the upload unpacks to more than 200 MiB (the limit for one upload"


BROKEN = "#include \"reduce.h\"\nvoid reduce(float *d_in, float *d_out, size_t n, float *d_work) { this is not C }\n"


def write(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


class Collect(unittest.TestCase):
    """autograde.collect: which uploaded file is graded as which lab."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="collect-")
        self.root = Path(self.tmp.name)
        self.all_labs = autograde.graded_labs("")

    def tearDown(self):
        self.tmp.cleanup()

    def collect(self, files: dict, lab_filter="", archives=None) -> tuple:
        """({lab/source: text} gathered, notes) from a submission of files (and archives: {name: bytes})."""
        sub = write(self.root / "submission", files)
        sub.mkdir(parents=True, exist_ok=True)
        for name, data in (archives or {}).items():
            (sub / name).write_bytes(data)
        dest = self.root / "dest"
        notes = autograde.collect(sub, autograde.graded_labs(lab_filter), dest, self.root / "scratch")
        got = {str(p.relative_to(dest)): p.read_text() for p in dest.rglob("*") if p.is_file()}
        return got, "\n".join(notes)

    def test_a_whole_copy_of_the_kit(self):
        files = {f"my-kit/labs/{lab.name}/{lab.source}": lab.name for lab in self.all_labs}
        files["my-kit/labs/03-sequential/build/tmp.cu"] = "a build output"
        files["my-kit/tools/instructor/variants/x/03-sequential/reduce.cu"] = "deeper: not taken"
        got, notes = self.collect(files)
        self.assertEqual(got, {f"{lab.name}/{lab.source}": lab.name for lab in self.all_labs})
        self.assertIn("03-sequential/reduce.cu <- my-kit/labs/03-sequential/reduce.cu", notes)

    def test_loose_files_named_after_their_lab(self):
        got, notes = self.collect({"03-sequential.cu": "3", "lab04.cu": "4", "06_scan.cu": "6", "compact.cu": "7",
                                   "reduce.cu": "which?", "notes.cu": "?"})
        self.assertEqual(got, {"03-sequential/reduce.cu": "3", "04-unrolled/reduce.cu": "4", "06-scan/scan.cu": "6",
                               "07-compact/compact.cu": "7"})
        self.assertIn("ignored reduce.cu: 5 labs use reduce.cu", notes)
        self.assertIn("ignored notes.cu: no lab in its name", notes)
        self.assertIn("05-coarsened: no file found (upload labs/05-coarsened/reduce.cu, or 05-coarsened.cu)", notes)

    def test_one_lab_assignment_takes_its_plain_file_name(self):
        got, notes = self.collect({"reduce.cu": "mine", "04-unrolled/reduce.cu": "another lab"}, lab_filter="03")
        self.assertEqual(got, {"03-sequential/reduce.cu": "mine"})
        self.assertIn("ignored 04-unrolled/reduce.cu: lab 04 is not graded by this assignment", notes)

    def test_a_lab_folder_beats_a_loose_copy(self):
        got, notes = self.collect({"03-sequential/reduce.cu": "folder", "backup/reduce.cu": "old"}, lab_filter="03")
        self.assertEqual(got, {"03-sequential/reduce.cu": "folder"})
        self.assertIn("also found backup/reduce.cu, not graded", notes)

    def test_a_zip_of_labs_and_a_tarball(self):
        data = io.BytesIO()
        with zipfile.ZipFile(data, "w") as z:
            z.writestr("labs/05-coarsened/reduce.cu", "5")
            z.writestr("../../escape.cu", "never written")
            z.writestr("/abs/06-scan.cu", "never written")
        tar_data = io.BytesIO()
        with tarfile.open(fileobj=tar_data, mode="w:gz") as t:
            info = tarfile.TarInfo("07-compact/compact.cu")
            info.size = 1
            t.addfile(info, io.BytesIO(b"7"))
        got, notes = self.collect({}, archives={"submission.zip": data.getvalue(), "more.tar.gz": tar_data.getvalue()})
        self.assertEqual(got, {"05-coarsened/reduce.cu": "5", "07-compact/compact.cu": "7"})
        self.assertIn("05-coarsened/reduce.cu <- submission.zip: labs/05-coarsened/reduce.cu", notes)
        self.assertFalse(list(self.root.rglob("escape.cu")))
        self.assertFalse((self.root / "abs").exists())

    def test_a_broken_zip_is_reported(self):
        got, notes = self.collect({}, archives={"labs.zip": b"not a zip"})
        self.assertEqual(got, {})
        self.assertIn("could not unpack labs.zip", notes)

    def test_a_nested_zip_bomb_stops_at_the_cap(self):
        """inner.zip, as Gradescope leaves it after unpacking the upload, would unpack to 1000 MiB: it stops at the
        upload's cap, its partial files are removed, and the lab's own file is still graded."""
        _, inner = nested_bomb()
        got, notes = self.collect({"03-sequential/reduce.cu": "mine"}, archives={"inner.zip": inner})
        self.assertEqual(got, {"03-sequential/reduce.cu": "mine"})
        self.assertIn(BOMB_NOTE, notes)
        self.assertLess(disk_bytes(self.root / "scratch"), 1 << 20)

    def test_archives_inside_archives_and_huge_files_are_not_taken(self):
        inner = io.BytesIO()
        with zipfile.ZipFile(inner, "w") as z:
            z.writestr("04-unrolled/reduce.cu", "two levels down")
        outer = io.BytesIO()
        with zipfile.ZipFile(outer, "w") as z:
            z.writestr("inner.zip", inner.getvalue())
            z.writestr("lab05.cu", "one level down")
        got, notes = self.collect({"03-sequential.cu": "x" * 2000}, archives={"outer.zip": outer.getvalue()})
        self.assertEqual(got, {"03-sequential/reduce.cu": "x" * 2000, "05-coarsened/reduce.cu": "one level down"})
        sub = self.root / "submission"
        dest = self.root / "dest2"
        from grader.unpack import Limits
        notes = autograde.collect(sub, autograde.graded_labs("03"), dest, self.root / "scratch2",
                                  Limits(max_file_bytes=1000))
        self.assertIn("ignored 03-sequential.cu: larger than", "\n".join(notes))


class Autograder(GradescopeFormat):
    """make gradescope SM=75 LAB=03, unpacked into ROOT/source; each test grades into a fresh ROOT."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="gradescope-")
        cls.zip = Path(cls.tmp.name) / "autograder.zip"
        made = run(["make", "-s", "gradescope", f"SM={SM}", "LAB=03", f"GRADESCOPE_ZIP={cls.zip}"], KIT)
        if made.returncode != 0:
            raise AssertionError(f"make gradescope failed:\n{made.stdout}{made.stderr}")
        cls.source = Path(cls.tmp.name) / "source"
        with zipfile.ZipFile(cls.zip) as z:
            z.extractall(cls.source)
            for info in z.infolist():  # zipfile drops modes and times: put them back, as unzip does
                if (info.external_attr >> 16) & 0o111:
                    (cls.source / info.filename).chmod(0o755)
                when = time.mktime(info.date_time + (0, 0, -1))
                os.utime(cls.source / info.filename, (when, when))
            cls.names = z.namelist()
            cls.modes = {i.filename: (i.external_attr >> 16) for i in z.infolist()}
        cls.count = 0

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def autograder_root(self, submission: dict, source: Path = None) -> Path:
        """A fresh folder shaped like /autograder: source/ (the unpacked zip, shared unless given), submission/."""
        type(self).count += 1
        root = Path(self.tmp.name) / f"root{self.count}"
        (root / "source").parent.mkdir(parents=True)
        (root / "source").symlink_to(source or self.source)
        write(root / "submission", submission)
        (root / "submission").mkdir(exist_ok=True)
        return root

    def grade(self, root: Path, **env) -> tuple:
        env = {"AUTOGRADER_ROOT": str(root), "HARNESS_BUILD": str(shared_harness_build()), **env}
        done = run([str(root / "source" / "run_autograder")], root, env=env)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return self.assert_results(root / "results" / "results.json"), done.stdout + done.stderr

    def blank(self) -> str:
        """Lab 03's skeleton, derived from solutions/ (labs/ may hold a student's work)."""
        return blank_out((KIT / "solutions" / "03-sequential" / "reduce.cu").read_text())

    def test_the_zip(self):
        for name in ("setup.sh", "run_autograder"):
            self.assertIn(name, self.names)
            self.assertTrue(self.modes[name] & stat.S_IXUSR, f"{name} is not executable")
        env = (self.source / "autograder.env").read_text()
        self.assertIn(f"SM={SM}\n", env)
        self.assertIn("LAB=03\n", env)
        for rel in ("grader/grade.py", "grader/labs.toml", "mk/lab.mk", "mk/harness.mk", "mk/checker.mk",
                    "harness/include/reduce.h", "harness/checker/reduce.c", "harness/runner/main.cu",
                    "harness/common/protocol.h", "grader/patterns.py", "labs/03-sequential/Makefile",
                    "datasets/reduce/0001-n1-uniform/input.raw", "Makefile", "grader/gradescope.py"):
            self.assertIn(rel, self.names)
        setup = (self.source / "setup.sh").read_text()
        for package in ("libseccomp-dev", "bubblewrap"):  # the checker's build, and its sandbox at run time
            self.assertRegex(setup, rf"apt-get install [^\n]*\b{package}\b")
        self.assertFalse([n for n in self.names if n.startswith(("solutions/", "tests/"))])
        secrets, given = solution_secrets()
        self.assertEqual(leaks_in(self.source, secrets, given), [])

    def test_bad_settings_are_refused(self):
        for args in (["--sm", "7.5"], ["--lab", "99"]):
            with self.subTest(args=args):
                done = run(["python3", "-m", "tools.instructor.dist", "gradescope", "--out", str(Path(self.tmp.name) / "x.zip"),
                            *args], KIT)
                self.assertEqual(done.returncode, 2)
                self.assertIn("dist: ", done.stderr)

    @unittest.skipUnless(have_nvcc(), "nvcc not found: the autograder cannot compile here (install the CUDA toolkit)")
    def test_the_blank_lab_is_graded(self):
        files = {"labs/03-sequential/reduce.cu": self.blank(), "labs/04-unrolled/reduce.cu": "not graded here"}
        data, log = self.grade(self.autograder_root(files))
        names = [t["name"] for t in data["tests"]]
        self.assertIn("03-sequential: datasets", names)
        self.assertTrue(all(n.startswith("03-sequential: ") for n in names), names)
        self.assertIn("03-sequential/reduce.cu <- labs/03-sequential/reduce.cu", data["output"])
        if not have_gpu():
            self.assertTrue(data["output"].startswith("No GPU on this autograder"), data["output"])
            run_time = {name for name, _ in autograde.test_titles(autograde.graded_labs("03"))}
            self.assertEqual(len(run_time), 5)
            for test in data["tests"]:
                if test["name"] in run_time:
                    self.assertEqual(test["score"], 0)
                    self.assertIn("needs an NVIDIA GPU", test["output"], test["name"])
            self.assertLessEqual(run_time, set(names))

    @unittest.skipUnless(have_nvcc(), "nvcc not found: the autograder cannot compile here (install the CUDA toolkit)")
    def test_a_compile_error(self):
        data, _ = self.grade(self.autograder_root({"reduce.cu": BROKEN}))
        self.assertEqual(data["score"], 0)
        outputs = "\n".join(t["output"] for t in data["tests"])
        self.assertIn("reduce.cu does not compile", outputs)
        self.assertIn("reduce.cu(2): error", outputs)  # the compiler's own message
        self.assertEqual(sum(t["max_score"] for t in data["tests"]), 100)
        self.assertIn("03-sequential/reduce.cu <- reduce.cu", data["output"])

    def test_an_empty_submission(self):
        data, _ = self.grade(self.autograder_root({}), NVCC="/bin/true")
        self.assertEqual(data["score"], 0)
        self.assertIn("03-sequential: no file found", data["output"])
        self.assertIn("missing file", "\n".join(t["output"] for t in data["tests"]))

    def test_no_cuda_toolkit(self):
        data, _ = self.grade(self.autograder_root({"reduce.cu": self.blank()}), NVCC="/nonexistent/nvcc")
        self.assertEqual(data["score"], 0)
        self.assertIn("no CUDA toolkit", data["output"])
        self.assertEqual([t["max_score"] for t in data["tests"]], [10, 15, 15, 10, 50])
        self.assertTrue(all("no CUDA toolkit" in t["output"] for t in data["tests"]))

    def copy_of_source(self) -> Path:
        copy = Path(tempfile.mkdtemp(prefix="source-", dir=self.tmp.name)) / "source"
        shutil.copytree(self.source, copy, symlinks=True)
        return copy

    def test_the_grader_crashes(self):
        source = self.copy_of_source()
        (source / "grader" / "grade.py").write_text("raise RuntimeError('the grader fell over')\n")
        data, _ = self.grade(self.autograder_root({"reduce.cu": self.blank()}, source), NVCC="/bin/true")
        self.assertEqual(data["score"], 0)
        self.assertIn("The grader stopped without results", data["output"])
        self.assertIn("the grader fell over", data["output"])
        self.assertEqual(len(data["tests"]), 5)

    def test_setup_sh(self):
        """setup.sh with apt-get stubbed out: it records the Python to use and, with SM, prebuilds the harness."""
        source = self.copy_of_source()
        stubs = source.parent / "stubs"
        stubs.mkdir()
        (stubs / "apt-get").write_text("#!/bin/sh\necho \"apt-get $*\" >> \"$(dirname \"$0\")/apt.log\"\n")
        (stubs / "apt-get").chmod(0o755)
        done = run(["bash", str(source / "setup.sh")], source, env={
            "PATH": f"{stubs}:{os.environ['PATH']}", "HARNESS_BUILD": str(shared_harness_build())})
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("install -y -qq --no-install-recommends python3 make build-essential",
                      (stubs / "apt.log").read_text())
        self.assertRegex((source / "setup.env").read_text(), r"^PYTHON=python3(\.1[1-9])?\n$")
        if have_nvcc():
            self.assertIn(f"the reduce harness for sm_{SM}: built", done.stdout)
        else:
            self.assertIn("no nvcc in this image", done.stderr)

    def test_a_nested_zip_bomb(self):
        """The upload held a zip bomb, which Gradescope unpacked one level: the autograder stops at the cap, says
        so in the results, and leaves far less than the cap on disk."""
        _, inner = nested_bomb()
        root = self.autograder_root({"reduce.cu": self.blank()})
        (root / "submission" / "inner.zip").write_bytes(inner)
        data, _ = self.grade(root, NVCC="/nonexistent/nvcc")
        self.assertIn(BOMB_NOTE, data["output"])
        self.assertIn("03-sequential/reduce.cu <- reduce.cu", data["output"])
        self.assertLess(disk_bytes(root), 5 << 20)

    def test_python_is_missing(self):
        source = self.copy_of_source()
        (source / "setup.env").write_text("PYTHON=/nonexistent/python3\n")
        data, _ = self.grade(self.autograder_root({}, source))
        self.assertEqual(data["score"], 0)
        self.assertIn("failed before grading", data["output"])


if __name__ == "__main__":
    unittest.main()
