"""The sandbox of the student's compile: nvcc under resource limits, inside bubblewrap where bubblewrap works.

limited(argv, limits) wraps a command so that it runs (with its children) under rlimits: address space, CPU time,
file size, no core files. bwrap_argv(...) is the bubblewrap command line that shows nvcc only what a compile needs:
read-only /usr (with the compilers and /usr/include), the /lib links, /etc/ld.so.cache, the CUDA toolkit's folder,
the student's include folder (harness/include, not the rest of the kit) and the folder holding the copy of the
student's file; writable, only the output folder and a private /tmp of capped size; /dev with /dev/null alone; no
network, no other processes, no capabilities, a new session, and nothing left when the grader dies.
bwrap_usable() says whether bubblewrap runs here (it needs user namespaces, which some containers refuse).

The runner's sandbox (harness/checker/sandbox.c) is a different one, for a different program: the two share nothing.
"""
import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # symbolic links into /usr, or folders
ETC = ("/etc/ld.so.cache", "/etc/alternatives")  # the dynamic loader's cache; Debian's cc/c++ links
PROBE_TIMEOUT = 30.0

LAYERS = {"source": "the source text's check", "bwrap": "bubblewrap", "uid": "the user nobody (root without bubblewrap)",
          "limits": "resource limits"}


@dataclass(frozen=True)
class Limits:
    """What nvcc and its children (cicc, ptxas, gcc) may use: they need a few GB at most, and a lab compiles in
    seconds to an object of well under 1 MiB."""

    address_space: int = 8 << 30  # bytes, RLIMIT_AS
    cpu_seconds: int = 300  # RLIMIT_CPU, per process
    file_size: int = 256 << 20  # bytes, RLIMIT_FSIZE: no file written larger
    tmp_size: int = 1 << 30  # bytes of the private /tmp, where bubblewrap can cap it


# Runs argv[5:] under the limits argv[1..4]: a small exec shim instead of preexec_fn, which is not safe in a
# program with threads (the class grader and the tests build from threads). SIGXFSZ stays ignored, as Python leaves
# it, so that a write past the file size limit fails with "File too large" rather than killing the writer.
_SHIM = ("import os, resource, signal, sys\n"
         "signal.signal(signal.SIGPIPE, signal.SIG_DFL)\n"
         "for r, v in zip((resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_FSIZE, resource.RLIMIT_CORE),"
         " sys.argv[1:5]):\n"
         "    resource.setrlimit(r, (int(v), int(v)))\n"
         "os.execvp(sys.argv[5], sys.argv[5:])\n")


def limited(argv, limits: Limits) -> list:
    """argv run under limits (and without core files)."""
    return [sys.executable, "-I", "-S", "-c", _SHIM, str(limits.address_space), str(limits.cpu_seconds),
            str(limits.file_size), "0", *map(str, argv)]


def toolkit_root(nvcc) -> Path:
    """The CUDA toolkit's folder of the nvcc program (its real path: /usr/local/cuda/bin/nvcc is usually a link)."""
    return Path(nvcc).resolve().parent.parent


@functools.lru_cache(maxsize=None)
def bwrap_program() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=None)
def bwrap_can_size() -> bool:
    """Whether this bubblewrap caps a tmpfs's size (--size, bubblewrap 0.5 and later)."""
    try:
        done = subprocess.run([bwrap_program(), "--help"], capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in done.stdout + done.stderr


def bwrap_argv(*, toolkit, read_only=(), writable=(), workdir=None, tmp_size=None) -> list:
    """The bubblewrap command line (without the command) described in the module's docstring. toolkit: the CUDA
    toolkit's folder; read_only, writable: more folders, bound at their own paths; workdir: the command's current
    folder."""
    argv = [bwrap_program(), "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--clearenv", "--setenv", "PATH", f"{toolkit}/bin:/usr/local/bin:/usr/bin:/bin",
            "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--setenv", "LC_ALL", "C",
            "--ro-bind", "/usr", "/usr"]
    for top in LINKS:
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    argv += [arg for path in ETC if os.path.exists(path) for arg in ("--ro-bind", path, path)]
    if not Path(toolkit).resolve().is_relative_to("/usr"):
        argv += ["--ro-bind", str(toolkit), str(toolkit)]
    argv += ["--proc", "/proc", "--dir", "/dev", "--dev-bind", "/dev/null", "/dev/null"]
    argv += (["--size", str(tmp_size)] if tmp_size and bwrap_can_size() else []) + ["--tmpfs", "/tmp"]
    for path in read_only:
        argv += ["--ro-bind", str(path), str(path)]
    for path in writable:
        argv += ["--bind", str(path), str(path)]
    if workdir:
        argv += ["--chdir", str(workdir)]
    return argv + ["--"]


ALLOW_WEAKER = "--allow-weaker-sandbox"
INSTALL_BWRAP = ("install bubblewrap (sudo apt-get install bubblewrap; in a container, one that allows unprivileged "
                 "user namespaces)")


def weaker_sandbox(nvcc: str | None = None) -> str:
    """"" when every sandbox layer a grading needs can be set up here, else one line naming the missing layer, why
    and how to install it. Bubblewrap is the compile's sandbox (build_lab) and the runner's first layer (the
    checker's namespaces, harness/checker/sandbox.c): without it both run with fewer layers. nvcc: the compiler
    (default: the one on PATH); without one nothing is compiled, and this says nothing."""
    nvcc = nvcc or shutil.which(os.environ.get("NVCC", "nvcc")) or shutil.which("nvcc", path="/usr/local/cuda/bin")
    if not nvcc:
        return ""
    why = bwrap_usable(str(toolkit_root(nvcc)))
    if not why:
        return ""
    return (f"the sandbox's first layer is missing: {why}, so the students' compiles would run without bubblewrap "
            f"(resource limits only) and their programs without namespaces; {INSTALL_BWRAP}")


@functools.lru_cache(maxsize=None)
def bwrap_usable(toolkit: str) -> str:
    """"" when bubblewrap runs a program here with bwrap_argv's options, else why not (one line)."""
    if not bwrap_program():
        return "bwrap is not installed"
    try:
        done = subprocess.run([*bwrap_argv(toolkit=toolkit, tmp_size=1 << 20), "/bin/sh", "-c", "exit 0"],
                              capture_output=True, text=True, timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap does not run here ({e})"
    if done.returncode != 0:
        return f"bwrap does not run here: {(done.stderr.strip().splitlines() or ['exit %d' % done.returncode])[0]}"
    return ""
