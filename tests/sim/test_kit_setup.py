"""A machine that lacks something the kit's own parts need is the kit's problem, never the student's:

- mk/zstd.mk decides whether libzstd is here by asking the C compiler for <zstd.h> (the test it replaced piped
  '\\#include' to cc -E, which make 4.3 passed on with its backslash, so it said yes everywhere); both builds of the
  simulator's fatbinary reader (sim/Makefile, tests/sim/runtime/Makefile) follow it, and mk/sim.mk always asks nvcc
  for plain PTX, which a simulator built without libzstd reads;
- grader/compile/build.py's kit_failure names the package a failed kit build lacks and the command that installs it;
- when the simulator's library does not build (a compiler that reports zstd.h missing for sim/fatbin.c), make grade
  SIM=1 reports a kit error naming libzstd-dev, not "reduce.cu does not compile" on the student's row, and make sim
  says the same instead of advising SM=80.

The make tests need make and a C compiler; the two builds need nvcc too (the kit's simulator harness, built once in
build/sim/harness). About 30 s on 2 cores once the harness is built.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from grader.compile.build import kit_failure, missing_package
from grader.patterns import KIT

HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None
HAVE_CC = shutil.which("cc") is not None
# A C compiler that sees only FOLDER's headers (-nostdinc): a machine with or without libzstd-dev, on any machine.
ISOLATED_CC = '#!/bin/sh\nexec cc -nostdinc -isystem "{folder}" "$@"\n'
# A C compiler that fails on sim/fatbin.c as it does where libzstd-dev is missing and the test said it was there.
NO_ZSTD_CC = """#!/bin/sh
for arg; do
    case "$arg" in *fatbin.c) echo "$arg:11:10: fatal error: zstd.h: No such file or directory" >&2; exit 1 ;; esac
done
exec cc "$@"
"""
PRINT = "--eval=ppl-print: ; @echo 'HAVE_ZSTD=[$(HAVE_ZSTD)]' ; echo 'NVCCFLAGS=[$(NVCCFLAGS)]'"


def script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)
    return path


class MissingPackage(unittest.TestCase):
    def test_headers_libraries_and_programs_name_their_package(self):
        cases = {
            "fatbin.c:11:10: fatal error: zstd.h: No such file or directory": "sudo apt-get install libzstd-dev",
            "sandbox.c:59:10: fatal error: seccomp.h: No such file or directory": "sudo apt-get install libseccomp-dev",
            "/usr/bin/ld: cannot find -lseccomp: No such file or directory": "sudo apt-get install libseccomp-dev",
            "make: cc: No such file or directory": "sudo apt-get install build-essential",
            "/bin/sh: 1: g++: not found": "sudo apt-get install build-essential",
            "make[1]: ar: Command not found": "sudo apt-get install binutils",
        }
        for output, remedy in cases.items():
            with self.subTest(output=output):
                self.assertEqual(missing_package(output)[1], remedy)

    def test_nvcc_is_the_toolkit_not_a_package(self):
        lacking, remedy = missing_package("/bin/sh: 1: nvcc: not found")
        self.assertIn("CUDA toolkit", lacking)
        self.assertNotIn("apt-get", remedy)

    def test_a_compile_error_is_a_kit_bug(self):
        message = kit_failure("the kit's reduce harness", "main.cu(3): error: identifier \"x\" is undefined")
        self.assertIn("a kit bug, not the submission's fault", message)
        self.assertEqual(missing_package("main.cu(3): error: identifier \"x\" is undefined"), ("", ""))

    def test_the_message_says_what_and_how(self):
        message = kit_failure("the kit's reduce harness", "fatbin.c:11:10: fatal error: zstd.h: No such file or "
                                                          "directory\nmake: *** [Makefile:150: x] Error 1")
        first = message.splitlines()[0]
        self.assertIn("lacks libzstd-dev (zstd.h)", first)
        self.assertIn("sudo apt-get install libzstd-dev", first)
        self.assertIn("tools/setup.sh grade", first)
        self.assertIn("not of the submission", first)
        self.assertNotIn("make: ***", message)


@unittest.skipUnless(HAVE_CC, "no C compiler (cc): apt-get install build-essential")
class ZstdProbe(unittest.TestCase):
    """HAVE_ZSTD as each makefile that compiles sim/fatbin.c sees it, with a compiler that has or lacks zstd.h."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="ppl-zstd-probe-"))
        self.addCleanup(shutil.rmtree, self.tmp)

    def compiler(self, with_zstd: bool) -> Path:
        headers = self.tmp / ("with" if with_zstd else "without")
        headers.mkdir()
        if with_zstd:
            (headers / "zstd.h").write_text("/* stands in for libzstd-dev's header */\n")
        return script(self.tmp, f"cc-{headers.name}", ISOLATED_CC.format(folder=headers))

    def printed(self, cc: Path, *makefile: str) -> str:
        done = subprocess.run(["make", "-s", "--no-print-directory", *makefile, f"CC={cc}", PRINT, "ppl-print"],
                              cwd=KIT, capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_each_simulator_build_follows_the_header(self):
        for makefile in (["-C", "sim"], ["-f", "tests/sim/runtime/Makefile"]):
            for with_zstd in (True, False):
                with self.subTest(makefile=makefile, with_zstd=with_zstd):
                    shown = self.printed(self.compiler(with_zstd), *makefile)
                    self.assertIn(f"HAVE_ZSTD=[{'yes' if with_zstd else ''}]", shown)
                    shutil.rmtree(self.tmp)
                    self.tmp.mkdir()

    @unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit")
    def test_lab_programs_carry_plain_ptx_either_way(self):
        for with_zstd in (True, False):
            with self.subTest(with_zstd=with_zstd):
                shown = self.printed(self.compiler(with_zstd), "-f", "mk/sim.mk", f"KIT={KIT}", "PATTERN=reduce")
                self.assertIn("-Xfatbin -compress=false", shown)
                shutil.rmtree(self.tmp)
                self.tmp.mkdir()


@unittest.skipUnless(HAVE_NVCC and HAVE_CC, "nvcc or cc not found: install the CUDA toolkit and build-essential")
class SimulatorThatDoesNotBuild(unittest.TestCase):
    """The simulator's library built into a folder of its own (SIM_BUILD) with NO_ZSTD_CC: only that part fails."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="ppl-kit-failure-"))
        cc = script(cls.tmp, "cc", NO_ZSTD_CC)
        cls.env = {**os.environ, "CC": str(cc), "SIM_BUILD": str(cls.tmp / "sim-lib")}
        cls.env.pop("SM", None)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_grade_sim_reports_the_kit_not_the_student(self):
        results = self.tmp / "results.json"
        done = subprocess.run([sys.executable, "-m", "grader", "--submission", "solutions", "--lab", "03",
                               "--simulator", "--build-dir", str(self.tmp / "grade"), "--results", str(results)],
                              cwd=KIT, env=self.env, capture_output=True, text=True, timeout=900)
        out = done.stdout + done.stderr
        self.assertEqual(done.returncode, 2, out)  # EXIT_BROKEN: the kit
        data = json.loads(results.read_text())
        self.assertIn("libzstd-dev", data["extra_data"]["kit_error"])
        self.assertIn("sudo apt-get install libzstd-dev", out)
        self.assertNotIn("does not compile", out)

    def test_make_sim_names_the_package_not_a_target(self):
        done = subprocess.run([sys.executable, "-m", "tools.student.sim", "--lab", "03", "--submission", "solutions",
                               "--no-estimate"], cwd=KIT, env=self.env, capture_output=True, text=True, timeout=900)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertIn("lacks libzstd-dev (zstd.h)", done.stderr)
        self.assertNotIn("SM=80", done.stderr)
        self.assertNotIn("does not build for the simulator", done.stderr)


if __name__ == "__main__":
    unittest.main()
