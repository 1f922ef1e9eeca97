"""A student's commands in a lab's folder on a machine without a GPU (issue 13, "always a next command"): make sim runs
the lab there (N= and ARGS= passed on); make run, check, sanitize and profile say what they would have done and give
the simulator's commands, ending in the kit's "cannot run here" status 77, which make reports as "Error 77" before
exiting 2 itself. And make sim SUBMISSION=DIR builds each folder apart: a second folder whose file is older never
reuses the first one's program, and a file replaced by an older copy is built again (its content is stamped).

Runs the real make in solutions/01-global-strided (never labs/: the tests do not depend on what a student wrote
there) and in temporary folders. Needs nvcc; the no-GPU tests skip where nvidia-smi lists a GPU. About a minute on
2 cores once the harness is built.
"""
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.run import no_gpu

KIT = Path(__file__).resolve().parents[2]
LAB = KIT / "solutions" / "01-global-strided"
HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None
HAVE_GPU = no_gpu.nvidia_smi()[0]


def make(folder, *args, timeout=900):
    """make ARGS in folder as a student types it: no make of ours around it (MAKEFLAGS, MAKELEVEL, PPL_LAB_FOLDER)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", no_gpu.HERE_VARIABLE)}
    proc = subprocess.run(["make", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr


class MakeHelpInALabFolder(unittest.TestCase):
    def test_make_help_lists_the_folders_targets(self):
        status, out = make(LAB, "help", timeout=60)
        self.assertEqual(status, 0, out)
        for target in ("run", "check", "sanitize", "profile", "grade", "sim", "bench", "clean"):
            self.assertRegex(out, rf"\n  make {target}\b")
        self.assertIn("make            builds build/reduce_runner", out)
        self.assertNotIn("$(", out)


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs")
class MakeSimInALabFolder(unittest.TestCase):
    def test_make_sim_runs_this_folders_file_with_n_and_args(self):
        status, out = make(LAB, "sim", "N=1,33")
        self.assertEqual(status, 0, out)
        self.assertIn("building reduce.cu for the simulator", out)  # the folder it was typed in
        self.assertIn("--data integer --n 1,33 --in-process", out)
        self.assertIn("PASS  n=33 integer", out)
        self.assertIn("SIMT efficiency", out)  # the simulator's counts
        status, out = make(LAB, "sim", "ARGS=--n 2 --data uniform --seed 5")
        self.assertEqual(status, 0, out)
        self.assertIn("reduce_lab --n 2 --data uniform --seed 5 --in-process", out)
        self.assertIn("PASS  n=2 uniform", out)


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs")
@unittest.skipIf(HAVE_GPU, "nvidia-smi lists a GPU: these are the messages of a machine without one")
class WithoutAGpu(unittest.TestCase):
    def check(self, target, would):
        status, out = make(LAB, target)
        self.assertEqual(status, 2, out)  # make's own status for a failed recipe...
        self.assertRegex(out, r"\[[^\]]*\] Error 77\n")  # ...whose status was the kit's 77
        said = " ".join(out.split())
        self.assertIn(f"make {target} {would}", said)
        self.assertIn("there is none here (nvidia-smi", said)
        self.assertRegex(out, r"\n  make sim +\S")  # this folder's commands, not LAB=NN ones
        self.assertRegex(out, r"\n  make grade SIM=1 +\S")
        self.assertNotIn("make test", out)
        self.assertNotIn("make[2]:", out)  # no make's directory lines where a tool reads make's output
        return out

    def test_run(self):
        self.check("run", "builds your kernel and checks it on the default sizes")

    def test_check(self):
        out = self.check("check", "runs your kernel on small and edge sizes")
        self.assertIn("reduce.cu builds", out)

    def test_sanitize(self):
        self.check("sanitize", "runs your kernel under compute-sanitizer")

    def test_profile(self):
        out = self.check("profile", "measures your kernel with Nsight Compute")
        self.assertIn("reduce.cu builds", out)


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs")
class SubmissionFolders(unittest.TestCase):
    """make sim SUBMISSION=DIR (issue 13, item 3)."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="ppl-sim-folders-")
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.solution = (KIT / "solutions" / "01-global-strided" / "reduce.cu").read_bytes()
        # the blank: the solution without its add, so that it compiles and gets wrong sums
        self.blank = re.sub(rb"src\[i\] \+= src\[i \+ stride\];", b"", self.solution)
        self.assertNotEqual(self.blank, self.solution)

    def folder(self, name, text, *, old=False):
        path = self.dir / name / "01-global-strided" / "reduce.cu"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text)
        if old:
            os.utime(path, (1_000_000_000, 1_000_000_000))  # 2001: older than any program built today
        return path.parent.parent

    def sim(self, submission):
        return make(KIT, "sim", "LAB=01", f"SUBMISSION={submission}", "N=1,33")

    def test_each_folder_builds_its_own_file(self):
        first, second = self.folder("a", self.solution), self.folder("b", self.blank, old=True)
        status, out = self.sim(first)
        self.assertEqual(status, 0, out)
        self.assertIn(f"building {first / '01-global-strided' / 'reduce.cu'} for the simulator", out)
        status, out = self.sim(second)
        self.assertEqual(status, 2, out)  # make's status: the program's 1 (a wrong sum) inside
        self.assertIn(f"building {second / '01-global-strided' / 'reduce.cu'} for the simulator", out)
        self.assertIn("FAIL  n=33 integer", out)
        folders = re.findall(r"for the simulator \(mk/sim\.mk[^)]*\) in (\S+) \.\.\.", out)
        self.assertEqual(len(folders), 1, out)
        self.assertIn("build/sim/custom/b-", folders[0])

    def test_a_file_replaced_by_an_older_copy_is_built_again(self):
        folder = self.folder("c", self.blank)
        status, out = self.sim(folder)
        self.assertEqual(status, 2, out)
        self.folder("c", self.solution, old=True)  # the right file, with a time older than the program's
        status, out = self.sim(folder)
        self.assertEqual(status, 0, out)
        self.assertIn("PASS  n=33 integer", out)


if __name__ == "__main__":
    unittest.main()
