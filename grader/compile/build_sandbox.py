"""The sandbox of the student's compile: nvcc under resource limits, inside bubblewrap where bubblewrap works.

limited(argv, limits) wraps a command so that it runs (with its children) under rlimits: address space, CPU time, file
size, no core files. bwrap_argv(...) is the bubblewrap command line that shows nvcc only what a compile needs:
read-only /usr (with the compilers and /usr/include), the /lib links, /etc/ld.so.cache, the CUDA toolkit's folder, the
student's include folders (harness/include and the pattern's include/, not the rest of the kit) and the folder holding
the copy of the student's file; writable, only the output folder and a private /tmp of capped size; /dev with
/dev/null alone; no network, no other processes, no capabilities, a new session, and nothing left when the grader
dies.
bwrap_usable() says whether bubblewrap runs here (it needs user namespaces, which some containers refuse).

contain(argv, limits, ...) is the one way the grader runs a program over the student's bytes outside the runner:
the compile, and the tools that read the compiled object (grader/compile/static_check.py: nm, objdump, cuobjdump, zstd
and the grader's own ELF reader, run as a program of their own; grader/compile/build.py's fatbinary extraction): under
the limits and in bubblewrap where it works, else under the limits alone (as the user nobody when the grader is root),
which the build reports as fewer layers.

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

LAYERS = {"source": "the source text's check", "bwrap": "bubblewrap",
          "uid": "the user nobody (root without bubblewrap)", "limits": "resource limits"}


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
    """The bubblewrap to run: $PPL_BWRAP where it is set (a copy of its own, as the runner's sandbox takes it:
    harness/checker/sandbox.c), else bwrap on PATH; None where there is none."""
    own = os.environ.get("PPL_BWRAP")
    if own:
        return own if os.access(own, os.X_OK) else None
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


NOBODY = 65534  # the uid and gid a sandboxed program without bubblewrap runs as, when the grader runs as root


def as_nobody_here() -> bool:
    """Whether a program without bubblewrap can drop to nobody: the grader runs as root and setpriv is installed."""
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


def contain(argv, limits: Limits, *, bwrap: bool, toolkit, read_only=(), writable=(), workdir=None,
            as_nobody: bool = False) -> list:
    """The command line that runs argv over student bytes: under limits, inside bubblewrap (bwrap_argv: toolkit,
    read_only and writable folders or files, workdir) when bwrap, else as the user nobody when as_nobody (root
    without bubblewrap; the caller makes the writable folders nobody's), else under the limits alone."""
    argv = [str(a) for a in argv]
    if bwrap:
        argv = bwrap_argv(toolkit=toolkit, read_only=read_only, writable=writable, workdir=workdir,
                          tmp_size=limits.tmp_size) + argv
    elif as_nobody:
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *argv]
    return limited(argv, limits)


def python_argv(module: str, *args) -> tuple:
    """(argv running `python3 -m module args` with the grader's Python and the standard library alone (-E -S: no
    environment, no site packages; the kit's folder is the current one), the folders that Python needs to be seen
    read-only in the sandbox beyond /usr)."""
    exe = Path(sys.executable).resolve()
    extra = [] if exe.is_relative_to("/usr") else [exe.parent, Path(sys.base_prefix).resolve()]
    return [str(exe), "-E", "-S", "-m", module, *map(str, args)], extra


def tools_toolkit() -> Path:
    """The CUDA toolkit folder whose tools (cuobjdump) read the object: cuobjdump's, else nvcc's, else /usr."""
    for name in ("cuobjdump", os.environ.get("NVCC", "nvcc")):
        found = shutil.which(name) or shutil.which(name, path="/usr/local/cuda/bin")
        if found:
            return toolkit_root(found)
    return Path("/usr")


def plan(sandbox: str, toolkit) -> str:
    """"" when a program over student bytes can run in bubblewrap here (sandbox "auto" or "require"), else why
    not ("turned off" for sandbox "off")."""
    return "turned off" if sandbox == "off" else bwrap_usable(str(toolkit))


KIT = Path(__file__).resolve().parents[2]
TOOL_TIMEOUT = 300.0  # seconds a kit program over the student's object may take, the tools it starts included


def run_kit_python(module: str, args, *, read_only=(), writable=(), sandbox: str = "auto",
                   limits: Limits = Limits(), timeout: float = TOOL_TIMEOUT, log_path=None):
    """Runs `python3 -m module args` (a module of the kit's grader/ package, standard library only) over student
    bytes, contained (contain): the kit's grader/ and patterns/ folders (the code and the patterns' descriptors),
    read_only and the CUDA toolkit's tools (tools_toolkit) seen read-only, writable (folders made nobody's where it
    runs as nobody) the only places it may write. sandbox: "auto" (bubblewrap where it works), "off", or "require"
    (ValueError, a kit problem, when bubblewrap cannot run).
    Returns the grader.run.process.Process."""
    from grader.run.process import run_process  # here: the build's sandbox module stays free of the grader's others
    toolkit = tools_toolkit()
    why_not = plan(sandbox, toolkit)
    if why_not and sandbox == "require":
        raise ValueError(f"the build's sandbox cannot run here (a kit problem): {why_not}")
    argv, extra = python_argv(module, *args)
    nobody = bool(why_not) and as_nobody_here()
    for folder in writable if nobody else ():
        os.chown(folder, NOBODY, NOBODY)
    argv = contain(argv, limits, bwrap=not why_not, toolkit=toolkit,
                   read_only=[KIT / "grader", KIT / "patterns", *extra, *read_only],
                   writable=writable, workdir=KIT, as_nobody=nobody)
    return run_process(argv, timeout=timeout, cwd=KIT, log_path=log_path)


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
