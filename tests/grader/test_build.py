"""grader/compile/build.py, grader/compile/source_check.py and grader/compile/build_sandbox.py: the source text's
refusals (each with its line and what to do, and no compile), the bubblewrap command line and the limits, then with the
real nvcc and mk/lab.mk: compile errors are reported, trimmed, and cost only their lab; the layers that contained the
compile are reported; what the sandbox and the limits stop if the text check were bypassed (#include "/dev/zero", a kit
file by its absolute path, an object or a temporary file too large); each pattern's program builds from a solution, and
accepts every run labs.toml gives it.

The harness objects go to the kit's own per-architecture folder (build/harness/...), so they build once and every
later run of these tests reuses them.
"""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from grader.compile import build as build_mod
from grader.compile.build import Limits, build_harness, build_lab, compile_student, native_arch, student_command, \
    trim_compiler_output
from grader.compile.build_sandbox import bwrap_argv, bwrap_usable, limited, toolkit_root
from grader.config import load_config
from grader.grade import main
from grader.patterns import PATTERNS
from grader.run.process import run_process
from grader.run.run import run_harness
from grader.compile.source_check import PUBLIC_HEADERS, check_source
from tests.grader.fakes import KIT, write_file
from tools.author.make_skeletons import lab_files

# One solution per pattern of labs.toml (its first lab's), and the small run each must pass (or find no GPU): the
# pattern's make sim run at its first two sizes.
SOLUTIONS = {lab.pattern: (lab.name, lab.source, [*PATTERNS[lab.pattern].sim_run[:-1],
                                                  ",".join(PATTERNS[lab.pattern].sim_run[-1].split(",")[:2])])
             for lab in reversed(load_config().labs)}

BROKEN = """#include "reduce.h"
void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    int x = undeclared_thing + 1
}
"""

LAB = 'void reduce(float *d_in, float *d_out, size_t n, float *d_work) {}\n'

# Source texts refused before compiling: (text, the line named, a piece of the message).
REFUSED = {
    "dev-zero": ('#include "reduce.h"\n#include "/dev/zero"\n', 2, 'never a path that starts with / or contains ..'),
    "absolute": ('#include </etc/passwd>\n', 1, "never a path that starts with /"),
    "dot-dot": ('#include <../runner/device.h>\n', 1, "never a path that starts with / or contains .."),
    "own-header": ('#include "helpers.h"\n', 1, "put helpers of your own in this file"),
    "line": ('#include "reduce.h"\n\n#line 10 "harness/device/main.cu"\n', 3, "a #line directive"),
    "linemarker": ('# 7 "main.cu"\n', 1, "a #line directive"),
    "line-in-comment": ('#/* a */ line 7\n', 1, "a #line directive"),
    "digraph": ('%:include "/dev/zero"\n', 1, "never a path"),
    "after-a-comment": ('/* a comment\n   over two lines */ #include "/dev/zero"\n', 2, "never a path"),
    "spliced": ('#inc\\\nlude "/dev/zero"\n', 1, "never a path"),
    "computed": ('#define F "/dev/zero"\n#include F\n', 2, "without a header name in quotes or <...>"),
    "include-next": ('#include_next <stdio.h>\n', 1, "with #include"),
    "import": ('#import "reduce.h"\n', 1, "with #include"),
    "ident": ('#ident "x"\n', 1, "not a directive a lab's file may use"),
    "raw-string-splice": ('const char *s = R"x(  )\\\nx" /*  )x";\n#include "/dev/zero"\n// */\n', 3, "never a path"),
    "has-include": ('#if __has_include(</dev/zero>)\n#endif\n', 1, "__has_include"),
    "carriage-return": ('int a;\r#include "/dev/zero"\r\n', 2, "never a path"),
    "non-ascii-code": ('int \xe9t\xe9;\n', 1, "non-ASCII character outside comments"),
}

# What passes the text check: the public headers, system headers, comments and strings that look like directives.
ACCEPTED = ("#include \"reduce.h\"\n#include <cstdio>\n#include <cooperative_groups.h>\n"
            "/* # of blocks: a comment line\n   #include \"/dev/zero\" in a comment */\n"
            "#define STR(x) \\\n    #x\nint big = 1'000'000;\nconst char *raw = R\"x(\n#include \"/dev/zero\"\n)x\";\n"
            "const char *unit = \"\u00b5s\"; // \u00e9t\u00e9\n#pragma unroll 4\n#if 0\n#error never\n#endif\n")


class Trim(unittest.TestCase):
    def test_make_lines_go_and_paths_are_relative(self):
        text = ("/tmp/b/lab/reduce.cu(4): error: identifier \"y\" is undefined\n"
                "make: *** [/kit/mk/lab.mk:30: /tmp/b/lab/student.o] Error 2\n")
        self.assertEqual(trim_compiler_output(text, "/tmp/b/lab"), 'reduce.cu(4): error: identifier "y" is undefined')

    def test_long_output_starts_at_the_first_error(self):
        text = "\n".join([f"warning {k}" for k in range(5)] + [f"reduce.cu({k}): error: bad" for k in range(100)])
        lines = trim_compiler_output(text, max_lines=30).splitlines()
        self.assertEqual(len(lines), 31)
        self.assertEqual(lines[0], "reduce.cu(0): error: bad")
        self.assertEqual(lines[-1], "... (70 more lines)")


class SourceText(unittest.TestCase):
    """grader/compile/source_check.py on made-up texts and the kit's own lab files (no compiler needed)."""

    def test_refusals_name_the_line_and_what_to_do(self):
        for name, (text, line, says) in REFUSED.items():
            with self.subTest(name):
                found = check_source(text.encode("utf-8"), "reduce.cu", KIT / "harness" / "include")
                self.assertTrue(found, name)
                self.assertTrue(found[0].startswith(f"reduce.cu:{line}: "), found)
                self.assertIn(says, found[0])

    def test_honest_text_passes(self):
        self.assertEqual(check_source(ACCEPTED.encode("utf-8"), "reduce.cu", KIT / "harness" / "include"), [])

    def test_every_solution_and_skeleton_passes(self):
        """The skeletons are derived from solutions/ here: labs/ may hold a student's work."""
        files = [(str(p.relative_to(KIT)), p.read_bytes()) for p in sorted((KIT / "solutions").glob("*/*.cu"))]
        files += [(f"the skeleton of solutions/{rel}", text.encode())
                  for rel, text in lab_files(KIT / "solutions") if rel.suffix == ".cu"]
        self.assertGreaterEqual(len(files), 16)
        for name, text in files:
            self.assertEqual(check_source(text, Path(name).name, KIT / "harness" / "include"), [], name)

    def test_a_kit_header_that_is_not_public(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_file(tmp, "reduce.h", "")
            write_file(tmp, "secret.h", "")
            self.assertEqual(check_source(b"#include <reduce.h>\n", "reduce.cu", tmp), [])
            found = check_source(b"#include <secret.h>\n", "reduce.cu", tmp)
            self.assertIn("not one of the kit's public headers", found[0])

    def test_the_public_headers_are_the_include_folders(self):
        """harness/include's headers and every pattern's include/ (patterns/NAME/include/)."""
        found = [p.name for p in (KIT / "harness" / "include").glob("*.h")] + \
            [p.name for p in (KIT / "patterns").glob("*/include/*.h")]
        self.assertEqual(sorted(found), sorted(PUBLIC_HEADERS))


class Sandbox(unittest.TestCase):
    """The bubblewrap command line and the limits (no compiler needed)."""

    def test_ppl_bwrap_names_the_compiles_bubblewrap_as_the_runners(self):
        """PPL_BWRAP (a bubblewrap of one's own, which the runner's sandbox takes: harness/checker/sandbox.c) is the
        compile's bubblewrap too; one that is not executable is none, as in the runner."""
        from grader.compile import build_sandbox
        with tempfile.TemporaryDirectory() as tmp:
            own, plain = Path(tmp) / "bwrap", Path(tmp) / "not-a-program"
            own.write_text("#!/bin/sh\n")
            own.chmod(0o755)
            plain.write_text("")
            for value, want in ((str(own), str(own)), (str(plain), None)):
                build_sandbox.bwrap_program.cache_clear()
                try:
                    with mock.patch.dict(os.environ, {"PPL_BWRAP": value}):
                        self.assertEqual(build_sandbox.bwrap_program(), want)
                finally:
                    build_sandbox.bwrap_program.cache_clear()

    def test_the_bwrap_command_line(self):
        with mock.patch("grader.compile.build_sandbox.bwrap_program", return_value="/usr/bin/bwrap"), \
                mock.patch("grader.compile.build_sandbox.bwrap_can_size", return_value=True):
            argv = bwrap_argv(toolkit="/opt/cuda-13.0", read_only=["/kit/harness/include", "/b/lab"],
                              writable=["/b/lab/out"], workdir="/b/lab/out", tmp_size=1 << 30)
        text = " ".join(argv)
        for part in ("--unshare-all", "--die-with-parent", "--new-session", "--cap-drop ALL", "--clearenv",
                     "--ro-bind /usr /usr", "--ro-bind /opt/cuda-13.0 /opt/cuda-13.0",
                     "--ro-bind /kit/harness/include /kit/harness/include", "--ro-bind /b/lab /b/lab",
                     "--bind /b/lab/out /b/lab/out", "--dev-bind /dev/null /dev/null",
                     "--size 1073741824 --tmpfs /tmp", "--chdir /b/lab/out"):
            self.assertIn(part, text)
        self.assertEqual(argv[-1], "--")
        writable = [argv[k + 1] for k, a in enumerate(argv) if a in ("--bind", "--dev-bind")]
        self.assertEqual(writable, ["/dev/null", "/b/lab/out"])
        self.assertNotIn("/kit ", text + " ")  # the kit itself is never bound: only its include folder

    def test_the_link_is_contained_like_the_compile(self):
        """The link reads the student's object: it runs under the limits, in bubblewrap where the kit's build inputs
        are read-only and the lab's folder the one place it writes, with the compile's architecture passed on (the
        sandbox has no GPU for -arch=native to find)."""
        seen = {}

        def run(argv, **kw):
            seen["argv"] = argv
            return mock.Mock(returncode=0, output="", timed_out=False)

        folder = Path("/b/lab")
        with mock.patch("grader.compile.build.run_process", run), \
                mock.patch("grader.compile.build_sandbox.bwrap_program", return_value="/usr/bin/bwrap"):
            build_mod.link_student(KIT, "reduce", ["/opt/cuda/bin/nvcc", "-O3", "-arch=sm_90", "-I/x"],
                                   folder / "reduce.cu", folder, timeout=60, limits=Limits(), bwrap=True)
        argv = seen["argv"]
        text = " ".join(argv)
        self.assertIn("/usr/bin/bwrap", argv)
        for part in (f"--ro-bind {KIT}/harness {KIT}/harness", f"--ro-bind {KIT}/patterns {KIT}/patterns",
                     f"--ro-bind {KIT}/mk {KIT}/mk", "--bind /b/lab /b/lab", "--chdir /b/lab"):
            self.assertIn(part, text)
        writable = [argv[k + 1] for k, a in enumerate(argv) if a in ("--bind", "--dev-bind")]
        self.assertEqual(writable, ["/dev/null", "/b/lab"])
        make = argv[argv.index("make"):]
        self.assertIn("ARCH_FLAGS=-arch=sm_90", make)
        self.assertIn("-o", make)
        self.assertLess(argv.index("/usr/bin/bwrap"), argv.index("make"))

    def test_limits_apply_to_the_command(self):
        probe = ("import resource as r; print(r.getrlimit(r.RLIMIT_AS)[0], r.getrlimit(r.RLIMIT_CPU)[0], "
                 "r.getrlimit(r.RLIMIT_FSIZE)[0], r.getrlimit(r.RLIMIT_CORE)[0])")
        done = subprocess.run(limited([sys.executable, "-c", probe], Limits(3 << 30, 7, 5 << 20)),
                              capture_output=True, text=True, check=True)
        self.assertEqual(done.stdout.split(), [str(3 << 30), "7", str(5 << 20), "0"])

    def test_native_arch_is_resolved_outside_the_sandbox(self):
        with tempfile.TemporaryDirectory() as tmp:
            smi = write_file(tmp, "nvidia-smi", "#!/bin/sh\necho 9.0\n")
            smi.chmod(0o755)
            with mock.patch.dict(os.environ, {"PATH": f"{tmp}:{os.environ['PATH']}"}):
                self.assertEqual(native_arch(["nvcc", "-O3", "-arch=native", "-lineinfo"]),
                                 ["nvcc", "-O3", "-arch=sm_90", "-lineinfo"])
            smi.write_text("#!/bin/sh\necho 8.0; echo 9.0\n")
            with mock.patch.dict(os.environ, {"PATH": f"{tmp}:{os.environ['PATH']}"}):  # each keeps its PTX
                self.assertEqual(native_arch(["nvcc", "-arch=native"]),
                                 ["nvcc", "-gencode=arch=compute_80,code=sm_80",
                                  "-gencode=arch=compute_80,code=compute_80", "-gencode=arch=compute_90,code=sm_90",
                                  "-gencode=arch=compute_90,code=compute_90"])
            self.assertEqual(native_arch(["nvcc", "-gencode", "arch=compute_75,code=sm_75"]),
                             ["nvcc", "-gencode", "arch=compute_75,code=sm_75"])


@unittest.skipUnless(shutil.which("nvcc") and shutil.which("make"), "nvcc or make is not installed here")
class RealBuild(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for pattern in SOLUTIONS:
            built = build_harness(KIT, pattern)
            if not built.ok:
                raise unittest.SkipTest(f"the kit's {pattern} harness does not build here:\n{built.message}")
        cls.programs_dir = tempfile.TemporaryDirectory()
        cls.programs = {}  # pattern -> a program built from its solution, shared by the tests

    @classmethod
    def tearDownClass(cls):
        cls.programs_dir.cleanup()

    def program(self, pattern):
        """The program built from SOLUTIONS[pattern] (built once for all the tests)."""
        if pattern not in self.programs:
            lab, source, _ = SOLUTIONS[pattern]
            built = build_lab(KIT, pattern, KIT / "solutions" / lab / source, Path(self.programs_dir.name) / lab)
            self.assertTrue(built.ok, built.message)
            self.programs[pattern] = built.program
        return self.programs[pattern]

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)

    def compile_alone(self, text, *, bwrap, limits=Limits()):
        """compile_student on text as it is (the source text's check bypassed): (returncode, output)."""
        source = write_file(self.dir / "src", "reduce.cu", text)
        (self.dir / "out").mkdir(exist_ok=True)
        command = student_command(KIT, "reduce", source, self.dir)
        proc = compile_student(command, source, self.dir / "out", timeout=120, limits=limits, bwrap=bwrap,
                               log_path=self.dir / "compile.log")
        return proc.returncode, proc.output

    def test_compile_error(self):
        source = write_file(self.dir / "sub", "reduce.cu", BROKEN)
        built = build_lab(KIT, "reduce", source, self.dir / "build")
        self.assertFalse(built.ok)
        lines = built.message.splitlines()
        self.assertEqual(lines[0], "reduce.cu does not compile:")
        self.assertTrue(any(ln.startswith("reduce.cu(4): error") and "undeclared_thing" in ln for ln in lines),
                        built.message)
        self.assertNotIn(str(self.dir), built.message)
        self.assertLessEqual(len(lines), 32)
        self.assertIsNone(built.object)

    def test_compile_error_names_the_labs_file(self):
        source = write_file(self.dir / "sub", "scan.cu",
                            '#include "scan.h"\nint broken(void) { return undeclared_thing; }\n')
        built = build_lab(KIT, "scan", source, self.dir / "build")
        self.assertFalse(built.ok)
        self.assertEqual(built.message.splitlines()[0], "scan.cu does not compile:")
        self.assertIn("scan.cu(2): error", built.message)

    def test_missing_file(self):
        built = build_lab(KIT, "reduce", self.dir / "nowhere" / "reduce.cu", self.dir / "build")
        self.assertFalse(built.ok)
        self.assertIn("missing file", built.message)

    def test_refused_source_is_not_compiled(self):
        for name in ("dev-zero", "line"):
            text, line, says = REFUSED[name]
            source = write_file(self.dir / "sub" / name, "reduce.cu", text + LAB)
            built = build_lab(KIT, "reduce", source, self.dir / "build" / name)
            self.assertFalse(built.ok)
            lines = built.message.splitlines()
            self.assertEqual(lines[0], "reduce.cu is refused before compiling:")
            self.assertTrue(lines[1].startswith(f"reduce.cu:{line}: ") and says in lines[1], built.message)
            self.assertFalse((self.dir / "build" / name / "compile.log").exists())
            self.assertIsNone(built.object)

    def test_layers(self):
        source = KIT / "solutions" / "03-sequential" / "reduce.cu"
        why_not = bwrap_usable(str(toolkit_root(shutil.which("nvcc"))))
        built = build_lab(KIT, "reduce", source, self.dir / "auto")
        self.assertTrue(built.ok, built.message)
        if why_not:
            self.assertEqual(built.layers, ["source", "limits"])
            self.assertEqual(built.missing, [f"bwrap: {why_not}"])
        else:
            self.assertEqual((built.layers, built.missing), (["source", "bwrap", "limits"], []))
        os.chmod(self.dir, 0o755)  # as root without bubblewrap the compile runs as nobody, who must reach its folder
        off = build_lab(KIT, "reduce", source, self.dir / "off", sandbox="off")
        self.assertTrue(off.ok, off.message)
        self.assertEqual((off.layers, off.missing), (["source", *(["uid"] if build_mod.as_nobody_here() else []),
                                                      "limits"], ["bwrap: turned off"]))
        with mock.patch("grader.compile.build.bwrap_usable", return_value="bwrap is not installed"):
            required = build_lab(KIT, "reduce", source, self.dir / "required", sandbox="require")
        self.assertFalse(required.ok)
        self.assertEqual(required.message,
                         "the build's sandbox cannot run here (a kit problem): bwrap is not installed")
        self.assertFalse((self.dir / "required" / "compile.log").exists())

    def test_without_bubblewrap_root_compiles_as_nobody(self):
        """Without bubblewrap a grader that runs as root (Gradescope's) compiles as nobody, so that the assembler's
        .incbin cannot carry what only root may read into the object (a course's hidden data, course/ made
        owner-only there): a red-team helper read it through the student's own sums."""
        if not build_mod.as_nobody_here():
            self.skipTest("not root, or setpriv (util-linux) is not installed: the compile runs as the grader's user")
        secret = Path(tempfile.mkdtemp(prefix="ppl-course-"))
        self.addCleanup(shutil.rmtree, secret, True)
        (secret / "hidden.raw").write_text("SECRET")
        os.chmod(secret, 0o700)
        os.chmod(self.dir, 0o755)
        text = (KIT / "solutions" / "03-sequential" / "reduce.cu").read_text()
        source = write_file(self.dir / "sub", "reduce.cu",
                            text + f'asm(".section .rodata\\n.incbin \\"{secret}/hidden.raw\\"\\n.text");\n')
        built = build_lab(KIT, "reduce", source, self.dir / "build", sandbox="off")
        self.assertFalse(built.ok)
        self.assertIn("file not found", built.message)
        self.assertIn("uid", built.layers)
        honest = build_lab(KIT, "reduce", write_file(self.dir / "honest", "reduce.cu", text), self.dir / "h",
                           sandbox="off")
        self.assertTrue(honest.ok, honest.message)

    def test_an_object_over_the_cap_is_refused(self):
        source = write_file(self.dir / "sub", "reduce.cu", '#include "reduce.h"\nchar big[16 << 20] = {1};\n'
                                                          'void reduce(float *d_in, float *d_out, size_t n, '
                                                          'float *d_work) { big[n] = 2; }\n')
        with mock.patch.object(build_mod, "MAX_OBJECT_BYTES", 4 << 20):
            built = build_lab(KIT, "reduce", source, self.dir / "build")
        self.assertFalse(built.ok)
        self.assertEqual(built.message, "reduce.cu is refused: the compiled file is 16 MiB: a lab's code compiles to "
                                        "under 1 MiB; does it declare a large initialized array?")
        self.assertIsNone(built.object)
        smaller = build_lab(KIT, "reduce", source, self.dir / "fsize", limits=Limits(file_size=8 << 20))
        self.assertFalse(smaller.ok)
        self.assertIn("File too large", smaller.message)
        self.assertIn("(the compiler wrote a file larger than 8 MiB, the limit)", smaller.message)

    def test_what_the_sandbox_and_the_limits_stop(self):
        """Were the source text's check bypassed: in bubblewrap, neither /dev/zero nor any file outside the folders
        it shows is there; without it, the address space limit ends the endless include."""
        if bwrap_usable(str(toolkit_root(shutil.which("nvcc")))):
            self.skipTest("bubblewrap does not run here")
        status, output = self.compile_alone('#include "/dev/zero"\n', bwrap=True)
        self.assertNotEqual(status, 0)
        self.assertIn("/dev/zero: No such file or directory", output)
        elsewhere = write_file(self.dir / "elsewhere", "expected.h", "static const float expected_sum = 42.0f;\n")
        status, output = self.compile_alone(f'#include "{elsewhere}"\n' + LAB, bwrap=True)
        self.assertNotEqual(status, 0)
        self.assertIn("expected.h: No such file or directory", output)
        status, output = self.compile_alone(f'#include "{elsewhere}"\n' + LAB, bwrap=False)
        self.assertEqual(status, 0, output)  # the same file outside the sandbox: the sandbox is what stopped it
        status, output = self.compile_alone('#include "/dev/zero"\n', bwrap=False, limits=Limits(2 << 30))
        self.assertNotEqual(status, 0)
        self.assertIn("out of memory", output)
        self.assertIn("(the compiler needed more than 2 GiB of memory, the limit)",
                      build_mod.limit_hint(output, Limits(2 << 30)))

    def test_a_device_program_older_than_a_shared_object_is_made_current_before_the_link(self):
        """Two patterns' harnesses built side by side both write the objects they share (main.o): the later write
        leaves the other's device program older than it. The link's make would relink that program inside the
        sandbox, where the kit is read-only; build_lab makes the kit's parts current first, outside it."""
        pattern, (lab, source, _) = next(iter(SOLUTIONS.items()))
        made = build_lab(KIT, pattern, KIT / "solutions" / lab / source, self.dir / "first")
        self.assertTrue(made.ok, made.message)
        device = Path(made.program.read_text().split('--device "')[1].split('"')[0])
        shared = device.parent / "main.o"
        self.assertTrue(device.is_file() and shared.is_file(), (device, shared))
        now = time.time()  # the device program a minute old, the shared object newer, neither in the future
        os.utime(device, (now - 60, now - 60))
        os.utime(shared, (now - 30, now - 30))
        again = build_lab(KIT, pattern, KIT / "solutions" / lab / source, self.dir / "again")
        self.assertTrue(again.ok, again.message)
        self.assertGreater(device.stat().st_mtime, now - 30)

    def test_each_pattern_builds_and_runs(self):
        """scan_lab and compact_lab, like reduce_lab, are PATTERN_lab; each plans its cases (or finds no GPU)."""
        for pattern, (lab, source, args) in SOLUTIONS.items():
            program = self.program(pattern)
            self.assertEqual(program.name, f"{pattern}_lab")
            outcome = run_harness(program, [*args, "--seed", "5"], timeout=120, workdir=self.dir / "run" / pattern,
                                  source=source)
            self.assertIn(outcome.status, ("pass", "no-device"), f"{pattern}: {outcome.message}")
            if outcome.status == "pass":
                self.assertGreaterEqual(len(outcome.cases), 2)

    def test_the_programs_accept_every_run_of_labs_toml(self):
        """Each run's arguments (with the lab's own, --seed and the datasets' or the benchmark's) parse: the harness
        reads its options in order, so a final --help exits 0 once every option before it was accepted, and 2 at
        the first it rejects. Nothing runs, GPU or not."""
        def parses(pattern, args):
            proc = run_process([str(self.program(pattern)), *args, "--help"], timeout=30)
            return proc.returncode, proc.output

        for pattern in SOLUTIONS:
            self.assertEqual(parses(pattern, ["--n", "0"])[0], 2, f"{pattern}: --help did not come last?")
            self.assertEqual(parses(pattern, ["--no-such-option"])[0], 2, pattern)
        for lab in load_config().labs:
            if lab.pattern not in SOLUTIONS:
                self.fail(f"{lab.name}: no solution of pattern {lab.pattern} in SOLUTIONS")
            runs = [[*run, *lab.args, "--seed", "1"] for group in lab.groups for run in group.runs]
            for group in lab.groups:
                if group.datasets:
                    runs.append(["--dataset", "in.raw", *(["--expected", "out.raw"] if group.expected else []),
                                 *lab.args])
            runs.append(["--bench", lab.performance.bench, "--seed", "1"])
            for args in runs:
                status, output = parses(lab.pattern, args)
                self.assertEqual(status, 0, f"{lab.name}: {' '.join(args)}:\n{output}")

    def test_only_the_students_file_is_used(self):
        """A solution builds from a fresh folder holding only its copy; the program runs, or finds no GPU."""
        source = KIT / "solutions" / "03-sequential" / "reduce.cu"
        (self.dir / "build").mkdir()
        write_file(self.dir / "build", "stale.o", "left over")
        built = build_lab(KIT, "reduce", source, self.dir / "build")
        self.assertTrue(built.ok, built.message)
        self.assertFalse((self.dir / "build" / "stale.o").exists())
        self.assertEqual((built.source, built.object),
                         (self.dir / "build" / "reduce.cu", self.dir / "build" / "student.o"))
        self.assertEqual(built.runner, self.dir / "build" / "reduce_runner")
        outcome = run_harness(built.program, ["--data", "integer", "--n", "1,1025", "--seed", "5"], timeout=60,
                              workdir=self.dir / "run", source="reduce.cu")
        self.assertIn(outcome.status, ("pass", "no-device"), outcome.message)

    def test_grader_reports_the_compile_error(self):
        write_file(self.dir / "sub", "03-sequential/reduce.cu", BROKEN)
        results = self.dir / "results.json"
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main(["--submission", str(self.dir / "sub"), "--lab", "03", "--build-dir",
                           str(self.dir / "build"), "--results", str(results)])
        self.assertEqual(status, 1, out.getvalue())
        self.assertIn("NO BUILD", out.getvalue())
        self.assertIn("undeclared_thing", out.getvalue())
        data = json.loads(results.read_text())
        self.assertEqual(data["score"], 0)
        self.assertEqual(data["tests"][0]["name"], "03-sequential: static checks")
        self.assertEqual(data["tests"][0]["output"], "not run: reduce.cu does not compile")
        self.assertIn("reduce.cu(4): error", data["tests"][1]["output"])


if __name__ == "__main__":
    unittest.main()
