"""tools/setup.sh (run by `make grade` and `make test` first): what it reports missing, the command it prints or runs,
and what it remembers. Each test runs the script from a throwaway copy of the kit (the script and a requirements.txt)
with a PATH of chosen programs: real ones linked in, and fakes of nvcc, id, sudo and apt-get that only record how
they were called. No test installs anything."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from grader.patterns import KIT

# What the script itself runs, linked in from this machine.
BASICS = ("bash", "env", "dirname", "cat", "sha256sum", "cut", "sed", "head", "paste", "mkdir", "flock", "rm", "mv", "stat",
          "true", "basename")  # the last two for the fakes
# What it looks for; a test drops some to see them reported.
TOOLS = ("cc", "g++", "nm", "objdump", "bwrap", "pkg-config", "pandoc", "git")
NVCC_13 = "#!/bin/sh\necho \"$0 $*\" >> \"$LOG\"\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n"
RECORD = "#!/bin/sh\necho \"$(basename \"$0\") $*\" >> \"$LOG\"\n"


def lacking_headers(target):
    """The packages the script will want on this machine for headers it lacks (the tests cannot hide headers)."""
    headers = {"/usr/include/seccomp.h": "libseccomp-dev"}
    if target == "test":
        headers.update({"/usr/include/check.h": "check", "/usr/include/zstd.h": "libzstd-dev"})
    return [pkg for h, pkg in headers.items() if not os.path.exists(h)]


class Setup(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="setup-test-"))
        self.addCleanup(shutil.rmtree, self.tmp)
        self.tmp.chmod(0o755)  # as root, a kit that nobody can reach is a finding of its own (a test below)
        self.kit = self.tmp / "kit"
        (self.kit / "tools").mkdir(parents=True)
        shutil.copy2(KIT / "tools" / "setup.sh", self.kit / "tools" / "setup.sh")
        self.requirements("# none\n")
        self.bin = self.tmp / "bin"
        self.bin.mkdir()
        self.log = self.tmp / "log"
        self.log.touch()
        for name in BASICS + TOOLS:
            real = shutil.which(name)
            if real:
                (self.bin / name).symlink_to(real)
            elif name in BASICS:
                self.skipTest(f"{name} is not installed here")
        if not all(shutil.which(t) for t in TOOLS):
            self.skipTest("the tests start from a machine with every tool: " + ", ".join(TOOLS))
        (self.bin / "python3").symlink_to(sys.executable)
        self.fake("nvcc", NVCC_13)
        self.fake("id", "#!/bin/sh\necho 0\n")  # root, unless a test says otherwise
        self.fake("apt-get", RECORD)

    def requirements(self, text):
        (self.kit / "requirements.txt").write_text(text)

    def fake(self, name, script):
        path = self.bin / name
        if path.is_symlink():
            path.unlink()
        path.write_text(script)
        path.chmod(0o755)

    def drop(self, *names):
        for name in names:
            (self.bin / name).unlink()

    def setup(self, *args, python=None, env=None):
        env = {"PATH": str(self.bin), "LOG": str(self.log), "HOME": str(self.tmp), **(env or {})}
        if python:
            env["PYTHON"] = python
        return subprocess.run([str(self.bin / "bash"), str(self.kit / "tools" / "setup.sh"), *args], env=env,
                              capture_output=True, text=True, timeout=60)

    def calls(self):
        return self.log.read_text().splitlines()

    def test_check_names_what_is_missing_and_the_line_to_run(self):
        self.drop("pandoc", "bwrap")
        done = self.setup("test", "--check")
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("pandoc (make handouts and its test)", done.stderr)
        self.assertIn("bubblewrap (the sandbox the students' code runs in)", done.stderr)
        line = next(l for l in done.stderr.splitlines() if "apt-get install" in l)
        self.assertIn("setup: to install them: sudo apt-get update && sudo apt-get install -y --no-install-recommends ",
                      line)
        self.assertEqual(set(line.split("--no-install-recommends ")[1].split()),
                         {"bubblewrap", "pandoc", *lacking_headers("test")})
        self.assertEqual(self.calls(), [f"{self.bin}/nvcc --version"])  # nothing installed

    def test_copies_named_by_the_kits_own_variables_count(self):
        """A machine with bubblewrap and libseccomp of its own, named as the sandbox and the checker's build take them
        (PPL_BWRAP; SECCOMP_CFLAGS and SECCOMP_LIBS), needs neither package."""
        self.drop("bwrap")
        self.fake("my-bwrap", "#!/bin/sh\n")
        done = self.setup("grade", "--check")
        self.assertIn("bubblewrap", done.stderr)
        done = self.setup("grade", "--check", env={"PPL_BWRAP": str(self.bin / "my-bwrap"),
                                                   "SECCOMP_LIBS": "/opt/x/libseccomp.a", "SECCOMP_CFLAGS": "-I/opt/x"})
        self.assertNotIn("bubblewrap", done.stderr)
        self.assertNotIn("libseccomp-dev", done.stderr)
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_grade_wants_less_than_test(self):
        self.drop("pandoc", "pkg-config", "git")
        done = self.setup("grade", "--check")
        self.assertEqual(done.returncode, 2 if lacking_headers("grade") else 0, done.stderr)
        self.assertNotIn("pandoc", done.stderr)
        self.assertNotIn("pkg-config", done.stderr)
        done = self.setup("test", "--check")
        self.assertEqual(done.returncode, 2)
        self.assertIn("pandoc", done.stderr)
        self.assertIn("check pkg-config", done.stderr)
        self.assertIn("git (make dist and its tests)", done.stderr)

    def test_without_root_or_sudo_it_prints_the_line_and_stops(self):
        self.drop("objdump")
        self.fake("id", "#!/bin/sh\necho 1000\n")
        done = self.setup("grade")
        self.assertEqual(done.returncode, 2)
        self.assertIn("not root, and sudo asks for a password", done.stderr)
        self.assertRegex(done.stdout, r"^    sudo apt-get update && sudo apt-get install -y --no-install-recommends "
                                      r"binutils( \S+)*\n$")
        self.assertEqual(self.calls(), [f"{self.bin}/nvcc --version"])
        self.fake("sudo", "#!/bin/sh\nexit 1\n")  # sudo that wants a password
        done = self.setup("grade")
        self.assertEqual(done.returncode, 2)
        self.assertIn("sudo apt-get install", done.stdout)

    def test_as_root_it_runs_apt_get(self):
        self.drop("cc")
        done = self.setup("grade")
        self.assertEqual(done.returncode, 0, done.stderr)
        installs = [c for c in self.calls() if c.startswith("apt-get")]
        self.assertEqual(installs[0], "apt-get update -qq")
        self.assertEqual(installs[1].split(), ["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                                               "build-essential", *lacking_headers("grade")])
        self.assertTrue((self.kit / "build" / "setup" / "grade.ok").exists())

    def test_apt_get_failing_stops_it(self):
        self.drop("nm")
        self.fake("apt-get", RECORD + "exit 100\n")
        done = self.setup("grade")
        self.assertEqual(done.returncode, 2)
        self.assertIn("apt-get failed (its message is above): make grade cannot go on", done.stderr)
        self.assertFalse((self.kit / "build" / "setup" / "grade.ok").exists())

    def test_through_sudo_without_a_password(self):
        self.drop("bwrap")
        self.fake("id", "#!/bin/sh\necho 1000\n")
        self.fake("sudo", "#!/bin/sh\n[ \"$1\" = -n ] && shift\necho \"sudo $*\" >> \"$LOG\"\nexec \"$@\"\n")
        done = self.setup("grade")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("sudo apt-get update -qq", self.calls())
        self.assertIn("apt-get install -y -qq --no-install-recommends bubblewrap", " ".join(self.calls()))

    def test_nvcc_missing_or_too_old(self):
        self.drop("nvcc")
        done = self.setup("grade")
        self.assertEqual(done.returncode, 2)
        self.assertIn("nvcc is in /usr/local/cuda/bin, which is not on PATH" if os.path.exists("/usr/local/cuda/bin/nvcc")
                      else "the kit needs the CUDA toolkit, 12 or later", done.stderr)
        self.fake("nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 11.8, V11.8.89'\n")
        done = self.setup("test")
        self.assertEqual(done.returncode, 2)
        self.assertIn(f"{self.bin}/nvcc is CUDA 11: the kit needs CUDA 12 or later", done.stderr)
        self.assertEqual([c for c in self.calls() if c.startswith("apt-get")], [])

    def test_python_packages_a_python_of_your_own_lacks(self):
        self.requirements("kit-setup-test-no-such-package==1.0\n")
        done = self.setup("grade", "--check", python=sys.executable)
        self.assertEqual(done.returncode, 2)
        self.assertIn(f"{sys.executable} lacks: kit-setup-test-no-such-package==1.0 (installed: none)", done.stderr)
        self.assertIn(f"then: {sys.executable} -m pip install -r requirements.txt", done.stderr)

    def test_python_packages_the_kits_python_lacks_go_into_build_venv(self):
        self.requirements("kit-setup-test-no-such-package==1.0\n")
        done = self.setup("grade", "--check")
        self.assertEqual(done.returncode, 2)
        self.assertIn("python3 lacks: kit-setup-test-no-such-package==1.0", done.stderr)
        self.assertIn("make grade installs requirements.txt's Python packages into build/venv", done.stderr)
        self.assertFalse((self.kit / "build" / "venv").exists())

    def test_python_older_than_3_11(self):
        old = next(iter(glob.glob("/usr/bin/python3.10") + glob.glob("/usr/bin/python3.[0-9]")
                        + glob.glob(os.path.expanduser("~/.pyenv/versions/3.10.*/bin/python3"))
                        + glob.glob(os.path.expanduser("~/.pyenv/versions/3.[0-9].*/bin/python3"))), None)
        if not old:
            self.skipTest("no Python older than 3.11 here")
        (self.bin / "python3").unlink()
        (self.bin / "python3").symlink_to(old)
        done = self.setup("grade")
        self.assertEqual(done.returncode, 2)
        self.assertRegex(done.stderr, r"setup: python3 is Python 3\.\d+\.\d+: the kit needs 3\.11 or later")

    def test_a_python_that_does_not_run(self):
        self.fake("python3", "#!/bin/sh\necho 'Traceback: broken' >&2\nexit 1\n")
        done = self.setup("grade")
        self.assertEqual(done.returncode, 2)
        self.assertIn("setup: python3 does not run (exit status 1): Traceback: broken", done.stderr)
        self.assertFalse((self.kit / "build" / "setup" / "grade.ok").exists())

    def test_as_root_the_kit_must_be_reachable_by_nobody(self):
        if not str(self.tmp).startswith("/tmp/") or os.stat("/tmp").st_mode & 0o001 == 0:
            self.skipTest("the test wants its folder under a /tmp anyone may enter")
        self.tmp.chmod(0o700)
        done = self.setup("test")
        self.assertEqual(done.returncode, 2)
        self.assertIn(f"who cannot enter {self.tmp} (mode 700)", done.stderr)
        self.assertIn(f"or chmod o+x {self.tmp}", done.stderr)
        done = self.setup("grade")  # grading falls back to fewer layers: a warning
        self.assertIn("setup: warning: as root, the sandbox runs the students' code as nobody", done.stderr)
        self.fake("id", "#!/bin/sh\necho 1000\n")  # a user's sandbox maps nobody to that user: no finding
        self.assertNotIn("cannot enter", self.setup("test", "--check").stderr)

    def test_requirements_must_be_pinned(self):
        self.requirements("matplotlib>=3\n")
        done = self.setup("grade")
        self.assertEqual(done.returncode, 2)
        self.assertIn("requirements.txt:1: 'matplotlib>=3' is not pinned as NAME==VERSION", done.stderr)

    def test_a_second_run_checks_nvcc_and_python_no_more(self):
        if lacking_headers("grade"):
            self.skipTest("this machine lacks " + ", ".join(lacking_headers("grade")))
        self.assertEqual(self.setup("grade").returncode, 0)
        self.assertEqual(len(self.calls()), 1)
        self.assertEqual(self.setup("grade").returncode, 0)
        self.assertEqual(len(self.calls()), 1)  # remembered
        self.requirements("# changed\n")
        self.assertEqual(self.setup("grade").returncode, 0)
        self.assertEqual(len(self.calls()), 2)  # checked again
        self.drop("bwrap")  # the cheap checks run every time
        done = self.setup("grade", "--check")
        self.assertEqual(done.returncode, 2)
        self.assertIn("bubblewrap", done.stderr)


def readme_commands(section: str) -> list:
    """The `make ...` lines of README.md's code blocks under the heading section (without their comments)."""
    text = (KIT / "README.md").read_text()
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return [line.split("#")[0].strip() for line in body.splitlines() if line.startswith("    make ")]


class FirstCommandSetsUp(unittest.TestCase):
    """Every command README.md gives a student, typed first on a fresh machine, installs what it needs before it
    builds or runs anything (tools/setup.sh grade): make -n shows the order, and recursive makes run under it."""

    def order(self, folder: Path, command: str) -> str:
        done = subprocess.run(["make", "-n", *command.split()[1:]], cwd=folder, capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        setup = next((k for k, line in enumerate(lines) if "tools/setup.sh grade" in line), None)
        self.assertIsNotNone(setup, f"{command} in {folder.name} runs no set-up:\n{done.stdout}")
        work = [line for line in lines[:setup] if any(tool in line for tool in ("nvcc", "python", " cc "))]
        self.assertEqual(work, [], f"{command} in {folder.name} builds or runs before its set-up")
        return done.stdout

    def test_in_a_lab_folder(self):
        commands = readme_commands("Students and self-learners")
        self.assertIn("make sim", commands)
        folder = sorted((KIT / "labs").glob("[0-9][0-9]-*"))[0]
        for command in commands:
            with self.subTest(command=command):
                self.order(folder, command)

    def test_at_the_top(self):
        for command in ("make grade", "make grade SIM=1", "make sim LAB=03"):  # README.md, Set-up
            with self.subTest(command=command):
                self.order(KIT, command)


if __name__ == "__main__":
    unittest.main()
