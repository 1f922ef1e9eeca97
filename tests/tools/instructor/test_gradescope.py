"""make gradescope: the autograder zip, unpacked into a folder shaped like Gradescope's /autograder
(AUTOGRADER_ROOT), grades a submission and always leaves a valid results.json: without a GPU (on the kit's
simulator: the reference solution gets its correctness points at once and performance is pending), with a compile
error, without nvcc, when the grader crashes, when Python is missing. And the student's files are found in every
shape the README allows, archives unpacked by grader/intake/unpack.py within its caps (a nested zip bomb stops at the
upload's 200 MiB)."""
import io
import os
import shutil
import stat
import sys
import tarfile
import tempfile
import time
import unittest
import zipfile
from pathlib import Path

from tests.tools.instructor.support import (KIT, SM, GradescopeFormat, have_gpu, have_nvcc, leaks_in, run,
                                            shared_harness_build, solution_secrets)
from grader import gradescope as autograde
from grader.intake.collect import collect
from grader.sim.simulator import SIM_MAX_N, largest_size
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
        notes = collect(sub, autograde.graded_labs(lab_filter), dest, self.root / "scratch")
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
        users = sum(1 for lab in self.all_labs if lab.source == "reduce.cu")
        self.assertIn(f"ignored reduce.cu: {users} labs use reduce.cu", notes)
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
        from grader.intake.unpack import Limits
        notes = collect(sub, autograde.graded_labs("03"), dest, self.root / "scratch2",
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
        if have_nvcc():  # what setup.sh builds in Gradescope's image before any submission (the simulator's library
            # and harness), so that no test relies on another's build (test_an_empty_submission's NVCC=/bin/true)
            built = run([sys.executable, "-m", "grader.gradescope", "--prebuild", "--lab", "03"], cls.source,
                        env={"PYTHONPATH": str(cls.source), "SM": None})
            if built.returncode != 0:
                raise AssertionError(f"the zip's --prebuild failed:\n{built.stdout}{built.stderr}")

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
        """results.json and the log of run_autograder on root. The GPU harness is shared between tests
        (HARNESS_BUILD); a grading on the simulator builds its own in the zip's build/sim, as on Gradescope."""
        env = {"AUTOGRADER_ROOT": str(root), "HARNESS_BUILD": str(shared_harness_build()), **env}
        if env.get("AUTOGRADE_SIMULATOR") == "1" or (env.get("AUTOGRADE_SIMULATOR") != "0" and not have_gpu()):
            env["HARNESS_BUILD"] = None  # mk/sim.mk's objects differ from lab.mk's: never in the same folder
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
        self.assertRegex(env, r"\nCUDA=1[2-9]-[0-9]\n")
        for rel in ("grader/grade.py", "grader/labs.toml", "mk/lab.mk", "mk/harness.mk", "mk/checker.mk",
                    "mk/sim.mk", "sim/Makefile", "sim/sim.h", "sim/runtime.c", "sim/cub_scan_sim.cu",
                    "patterns/reduce/include/reduce.h", "patterns/reduce/check.c", "harness/device/main.cu",
                    "harness/runner/main.cpp",
                    "harness/common/protocol.h", "grader/patterns.py", "labs/03-sequential/Makefile",
                    "datasets/reduce/0001-n1-uniform/input.raw", "Makefile", "grader/gradescope.py"):
            self.assertIn(rel, self.names)
        setup = (self.source / "setup.sh").read_text()
        for package in ("libseccomp-dev", "bubblewrap", "python3-yaml"):  # the checker, its sandbox, the metadata
            self.assertRegex(setup, rf"apt-get install [^\n]*(\n    [^\n]*)?\b{package}\b")
        self.assertFalse([n for n in self.names if n.startswith(("solutions/", "tests/"))])
        secrets, given = solution_secrets()
        self.assertEqual(leaks_in(self.source, secrets, given), [])

    def test_bad_settings_are_refused(self):
        for args in (["--sm", "7.5"], ["--lab", "99"]):
            with self.subTest(args=args):
                done = run(["python3", "-m", "tools.instructor.dist", "gradescope",
                            "--out", str(Path(self.tmp.name) / "x.zip"), *args], KIT)
                self.assertEqual(done.returncode, 2)
                self.assertIn("dist: ", done.stderr)

    @unittest.skipUnless(have_nvcc(), "nvcc not found: the autograder cannot compile here (install the CUDA toolkit)")
    def test_the_blank_lab_is_graded(self):
        """The skeleton, as it is: 0 points. Without a GPU, AUTOGRADE_SIMULATOR=0 makes the autograder try the GPU
        first, as on a runner whose nvidia-smi lists a GPU that CUDA cannot use: it grades again on the simulator."""
        files = {"labs/03-sequential/reduce.cu": self.blank(), "labs/04-unrolled/reduce.cu": "not graded here"}
        data, log = self.grade(self.autograder_root(files), **({} if have_gpu() else {"AUTOGRADE_SIMULATOR": "0"}))
        names = [t["name"] for t in data["tests"]]
        self.assertIn("03-sequential: datasets", names)
        self.assertTrue(all(n.startswith("03-sequential: ") for n in names), names)
        self.assertIn("03-sequential/reduce.cu <- labs/03-sequential/reduce.cu", data["output"])
        self.assertEqual(data["score"], 0)
        if not have_gpu():
            self.assertIn("no CUDA device after all: grading again on the simulator", log)
            self.assertTrue(data["output"].startswith("No GPU on this autograder, so your labs ran on the kit's "
                                                      "simulator"), data["output"])
            failed = [t for t in data["tests"] if t.get("status") == "failed"]
            self.assertIn("03-sequential: datasets", [t["name"] for t in failed])

    @unittest.skipUnless(have_nvcc(), "nvcc not found: the autograder cannot compile here (install the CUDA toolkit)")
    def test_the_reference_solution_without_a_gpu(self):
        """Issue 12's check: on a runner without a GPU (forced with AUTOGRADE_SIMULATOR=1 where there is one) the
        reference solution gets every point the simulator can grade at once, the hazard checks pass, and the rest
        (performance, sizes too large for the simulator) is pending: neither failed nor scored."""
        solution = (KIT / "solutions" / "03-sequential" / "reduce.cu").read_text()
        data, _ = self.grade(self.autograder_root({"03-sequential/reduce.cu": solution}), AUTOGRADE_SIMULATOR="1")
        lab = autograde.graded_labs("03")[0]
        runnable = [g for g in lab.groups if largest_size(g.runs) <= SIM_MAX_N]
        waiting = [g for g in lab.groups if g not in runnable]
        self.assertTrue(runnable and waiting)
        self.assertEqual(data["score"], sum(g.points for g in runnable))
        self.assertEqual(data["extra_data"]["pending_points"], sum(g.points for g in waiting) + lab.performance.points)
        tests = {t["name"].removeprefix("03-sequential: "): t for t in data["tests"]}
        for name in ("static checks", "sanitizers", *(g.name for g in runnable)):
            self.assertEqual(tests[name]["status"], "passed", tests[name])
            self.assertEqual(tests[name]["score"], tests[name]["max_score"])
        for name in ("performance", *(g.name for g in waiting)):
            test = tests[name]
            self.assertNotIn("status", test)
            self.assertEqual((test["score"], test["max_score"]), (0, 0))
            self.assertTrue(test["output"].startswith("pending: graded on the course's GPU ("), test["output"])
            self.assertTrue(test["extra_data"]["pending"])
        self.assertIn("On the simulator: speed is measured on a GPU", tests["performance"]["output"])
        self.assertTrue(data["output"].startswith("No GPU on this autograder, so your labs ran on the kit's simulator: "
                                                  f"correctness and the hazard checks are graded now "
                                                  f"({data['score']:g} of {data['score']:g} points)"), data["output"])
        self.assertNotIn("Grade on a GPU for the full marks", data["output"])  # make grade SIM=1's advice
        self.assertNotIn("leaderboard", data)  # an estimate is never put beside the measured speedups

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
        """setup.sh with apt-get stubbed out: it records the Python to use and prebuilds the simulator's library and
        harness and, with SM, the GPU's harness."""
        source = self.copy_of_source()
        stubs = source.parent / "stubs"
        stubs.mkdir()
        for tool in ("apt-get", "curl", "dpkg"):  # curl and dpkg: where nvcc is missing, never the network
            (stubs / tool).write_text(f"#!/bin/sh\necho \"{tool} $*\" >> \"$(dirname \"$0\")/apt.log\"\n")
            (stubs / tool).chmod(0o755)
        done = run(["bash", str(source / "setup.sh")], source, env={
            "PATH": f"{stubs}:{os.environ['PATH']}", "HARNESS_BUILD": str(shared_harness_build())})
        self.assertEqual(done.returncode, 0 if have_nvcc() else 1, done.stdout + done.stderr)
        self.assertIn("install -y -qq --no-install-recommends python3 make build-essential",
                      (stubs / "apt.log").read_text())
        self.assertRegex((source / "setup.env").read_text(), r"^PYTHON=python3(\.1[1-9])?\nCUDA_BIN=\n$")
        if have_nvcc():
            self.assertIn(f"the reduce harness for sm_{SM}: built", done.stdout)
            self.assertIn("the reduce harness for the simulator: built", done.stdout)
            self.assertIn("the simulator's library: built", done.stdout)
        else:
            self.assertIn("FAILED: no nvcc: CUDA 12-8 could not be installed", done.stderr)

    def test_setup_sh_installs_cuda(self):
        """Without nvcc in the image, setup.sh installs NVIDIA's packages of the version autograder.env names
        (curl, dpkg and apt-get stubbed: they only record what they were asked)."""
        source = self.copy_of_source()
        stubs = source.parent / "stubs"
        stubs.mkdir()
        for tool in ("apt-get", "curl", "dpkg"):
            (stubs / tool).write_text(f"#!/bin/sh\necho \"{tool} $*\" >> \"$(dirname \"$0\")/calls.log\"\n")
            (stubs / tool).chmod(0o755)
        path = ":".join([str(stubs), "/usr/bin", "/bin"])  # no nvcc on it
        done = run(["bash", str(source / "setup.sh")], source, env={"PATH": path, "NVCC": "no-such-nvcc"})
        calls = (stubs / "calls.log").read_text()
        self.assertRegex(calls, r"curl -fsSL -o \S+ https://developer\.download\.nvidia\.com/compute/cuda/repos/"
                                r"\w+/(x86_64|sbsa)/cuda-keyring_1\.1-1_all\.deb")
        self.assertRegex(calls, r"apt-get install [^\n]*cuda-nvcc-12-8 cuda-cudart-dev-12-8 cuda-cccl-12-8")
        self.assertIn("CUDA_BIN=/usr/local/cuda-12.8/bin\n", (source / "setup.env").read_text())
        # the stubs installed nothing: the image's build fails, saying why, rather than every submission after it
        self.assertIn("FAILED: no nvcc: CUDA 12-8 could not be installed", done.stderr)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)

    def test_setup_sh_fails_when_the_shared_build_fails(self):
        """A kit part that does not build on the image (here: a C compiler that finds no zstd.h for the
        simulator's fatbin.c) fails the image's build, with the package it lacks in the output."""
        if not have_nvcc():
            self.skipTest("nvcc not found: the shared build needs it")
        source = self.copy_of_source()
        shutil.rmtree(source / "build", ignore_errors=True)  # what the class's other tests built there: built anew
        stubs = source.parent / "stubs"
        stubs.mkdir()
        (stubs / "apt-get").write_text("#!/bin/sh\nexit 0\n")
        (stubs / "cc").write_text("#!/bin/sh\nfor a; do case \"$a\" in *fatbin.c) "
                                  "echo \"$a:11:10: fatal error: zstd.h: "
                                  "No such file or directory\" >&2; exit 1 ;; esac; done\nexec /usr/bin/cc \"$@\"\n")
        for stub in stubs.iterdir():
            stub.chmod(0o755)
        done = run(["bash", str(source / "setup.sh")], source, env={
            "PATH": f"{stubs}:{os.environ['PATH']}", "HARNESS_BUILD": str(shared_harness_build())})
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("lacks libzstd-dev (zstd.h)", done.stdout)
        self.assertIn("FAILED: the kit's shared parts do not build", done.stderr)

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
