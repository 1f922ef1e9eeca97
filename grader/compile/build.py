"""Building a lab program from the kit's trusted harness plus only the student's one file, with mk/lab.mk (or, with
makefile="sim.mk", mk/sim.mk: the same program for the kit's CPU simulator, grader/sim/simulator.py).

build_harness() compiles the harness objects once per pattern. build_lab() copies the student's file into a fresh
folder and then, in three steps:
  1. checks the source text for what the preprocessor would do on the student's behalf (grader/compile/source_check.py:
     includes of anything but the kit's public headers and system headers, #line); a refused file is not compiled;
  2. compiles it to student.o itself, with the command `make student-flags` prints (the kit's own nvcc flags),
     under resource limits and, where bubblewrap works, inside a sandbox that shows nvcc the toolkit, the system's
     compilers and headers and the kit's harness/include and the pattern's include/ alone
     (grader/compile/build_sandbox.py); an object over MAX_OBJECT_BYTES is refused before anything reads it;
  3. links the runner and the lab's launcher through make, which finds student.o made and only links, contained as
     the compile is (link_student).
Both return a BuildResult whose message, on failure, is the compiler's output cut to its first errors.
"""
import functools
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from grader.compile.build_sandbox import (LAYERS, NOBODY, Limits, as_nobody_here, bwrap_usable, contain, run_kit_python,
                                  toolkit_root)
from grader.run.process import run_process
from grader.sim.sim_target import may_need_later_gpu, target_note
from grader.compile.source_check import check_source

MAX_ERROR_LINES = 30
DEFAULT_BUILD_TIMEOUT = 300.0
MAX_OBJECT_BYTES = 64 << 20
SANDBOX_MODES = ("auto", "require", "off")  # bubblewrap where it works; or else no build; or never


@dataclass
class BuildResult:
    """ok and the program's path, or not ok and why (missing file, refused source, compile errors, timeout).
    object: the student's compiled file (student.o) whenever it was made, even when the link failed, for the static
    checks. runner: the program holding the student's code (program is the lab's launcher, which runs it through
    the checker). source: the copy of the student's file that was compiled. layers: what contained the compile
    (names of build_sandbox.LAYERS), and missing: the layers that could not be used here, with why."""

    ok: bool
    program: Path | None = None
    message: str = ""
    object: Path | None = None
    runner: Path | None = None
    source: Path | None = None
    layers: list = field(default_factory=list)
    missing: list = field(default_factory=list)


def make_argv(kit, pattern, *settings, target=None, jobs=1, harness_build=None, makefile="lab.mk") -> list:
    """The `make -f KIT/mk/lab.mk ...` command line (makefile: another of mk/); SM from the environment is passed on
    when set."""
    kit = Path(kit).resolve()
    # --no-print-directory: a make around this one (a lab folder's) would add "make[2]: Leaving directory" last,
    # where student_compile reads the compiler's command line
    argv = ["make", "-s", "--no-print-directory", f"-j{jobs}", "-f", str(kit / "mk" / makefile), f"KIT={kit}",
            f"PATTERN={pattern}", *settings]
    if harness_build:
        argv.append(f"HARNESS_BUILD={Path(harness_build).resolve()}")
    if os.environ.get("SM"):
        argv.append(f"SM={os.environ['SM']}")
    if target:
        argv.append(target)
    return argv


def trim_compiler_output(text: str, folder=None, max_lines: int = MAX_ERROR_LINES) -> str:
    """make's output without its own lines, paths inside folder shown relative, cut to max_lines from the first
    error."""
    if folder:
        text = text.replace(str(folder).rstrip("/") + "/", "")
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not re.match(r"make(\[\d+\])?: ", ln)]
    if len(lines) > max_lines:
        first = next((k for k, ln in enumerate(lines) if re.search(r"error|undefined reference", ln, re.I)), 0)
        rest = len(lines) - first - max_lines
        lines = lines[first:first + max_lines] + ([f"... ({rest} more lines)"] if rest > 0 else [])
    return "\n".join(lines)


# What the kit's own parts need from Debian (tools/setup.sh installs them): a header, a library (-lNAME) or a program
# a failed build names, and the package that brings it.
KIT_PACKAGES = {
    "seccomp.h": "libseccomp-dev", "-lseccomp": "libseccomp-dev", "zstd.h": "libzstd-dev", "-lzstd": "libzstd-dev",
    "check.h": "check", "omp.h": "build-essential", "-lgomp": "build-essential", "stdio.h": "build-essential",
    "cc": "build-essential", "gcc": "build-essential", "g++": "build-essential", "c++": "build-essential",
    "ar": "binutils", "objcopy": "binutils", "nm": "binutils", "as": "binutils", "ld": "binutils",
    "flock": "util-linux", "pkg-config": "pkg-config",
}
MISSING = (r"fatal error: (?P<name>[\w./+-]+): No such file or directory",  # a header
           r"cannot find (?P<name>-l[\w+-]+)",  # a library
           r"(?:^|[\s/:])(?P<name>[\w+.-]+): (?:[Cc]ommand )?not found",  # a program, as sh and make say it
           r"(?:^|\s)(?P<name>[\w+.-]+): No such file or directory$",  # a program, as make says it
           r"failed to execute (?P<name>[\w+.-]+):")  # a program, as nvcc says it


def missing_package(output: str) -> tuple:
    """(what this machine lacks, the command or step that installs it), from the output of a failed build of the
    kit's own parts: ("libzstd-dev (zstd.h)", "sudo apt-get install libzstd-dev"); ("", "") when it names nothing
    known to be installable (then it is a kit bug)."""
    for pattern in MISSING:
        for found in re.finditer(pattern, output, re.M):
            name = found.group("name")
            if name == "nvcc" or name.startswith("cuda"):
                return f"the CUDA toolkit ({name})", "put its bin/ on PATH, or install it (README.md, Set-up)"
            if name in KIT_PACKAGES:
                package = KIT_PACKAGES[name]
                return f"{package} ({name})", f"sudo apt-get install {package}"
    return "", ""


def kit_failure(what: str, output: str, setup: str = "tools/setup.sh grade") -> str:
    """The message of a failed build of the kit's own parts (what: "the kit's reduce harness"), never the student's
    fault: the missing package and the command that installs it where the compiler's output says which (setup: the
    kit's command that installs all grading needs), else a kit bug; then the output, trimmed."""
    lacking, remedy = missing_package(output)
    if lacking:
        if remedy.startswith("sudo apt-get"):
            remedy += f" (or {setup}, which installs all grading needs)"
        head = (f"{what} does not build: this machine lacks {lacking}, a problem of the machine's set-up, not of "
                f"the submission. To install it: {remedy}")
    else:
        head = f"{what} does not build (a kit bug, not the submission's fault)"
    return head + ":\n" + trim_compiler_output(output)


def build_harness(kit, pattern, *, timeout: float = DEFAULT_BUILD_TIMEOUT, harness_build=None,
                  makefile="lab.mk") -> BuildResult:
    """Compiles what the kit's lab programs of pattern share: the harness objects and the checker (and, for
    mk/sim.mk, the simulator). On failure the message is the kit's (kit_failure), never the student's."""
    argv = make_argv(kit, pattern, target="harness", jobs=os.cpu_count() or 1, harness_build=harness_build,
                     makefile=makefile)
    proc = run_process(argv, timeout=timeout, cwd=kit)
    if proc.timed_out:
        return BuildResult(False, message=f"building the {pattern} harness timed out after {timeout:g} s")
    if proc.returncode != 0:
        return BuildResult(False, message=kit_failure(f"the kit's {pattern} harness", proc.output))
    return BuildResult(True)


def student_command(kit, pattern, copy, folder, *, harness_build=None, makefile="lab.mk") -> list:
    """The compiler and flags of the student's file (without -c, -o and the file), as `make student-flags` prints
    them; a lab.mk without that target gives its NVCCFLAGS with the student's include folder instead (and no
    OpenMP). Relative -I folders are made absolute (the kit's). ValueError when make fails (a kit bug)."""
    settings = (f"LAB_SRC={copy}", f"BUILD={folder}")
    argv = make_argv(kit, pattern, *settings, target="student-flags", harness_build=harness_build, makefile=makefile)
    done = subprocess.run(argv, cwd=kit, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 and "student-flags" in done.stderr:  # an older lab.mk
        include = Path(kit).resolve() / "harness" / "include"
        include = include if include.is_dir() else include.parent
        argv = make_argv(kit, pattern, *settings, "--eval=ppl-nvccflags: ; @echo $(NVCC) $(NVCCFLAGS)",
                         target="ppl-nvccflags", harness_build=harness_build, makefile=makefile)
        done = subprocess.run(argv, cwd=kit, capture_output=True, text=True, timeout=120)
        done.stdout = re.sub(r"-fopenmp,?|,-fopenmp", "", done.stdout).replace("-Xcompiler  ", "") + f" -I{include}"
    words = shlex.split(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else []
    if not words:
        raise ValueError(f"make student-flags failed (exit {done.returncode}): {done.stderr.strip()[:500]}")
    words = [re.sub(r"^-I(?!/)(.+)", lambda m: f"-I{Path(kit).resolve() / m.group(1)}", w) for w in words]
    return [shutil.which(words[0]) or words[0], *words[1:]]


def native_arch(command: list) -> list:
    """command with -arch=native replaced by this machine's GPUs' architectures (nvidia-smi), since nvcc cannot
    see the GPU from inside the sandbox; unchanged when none can be read. Each architecture keeps its PTX beside its
    machine code, as -arch=native and -arch=sm_NN do: the simulator's check runs that PTX (mk/cuda.mk)."""
    if "-arch=native" not in command:
        return command
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return command
    caps = sorted({ln.strip().replace(".", "") for ln in done.stdout.splitlines() if re.fullmatch(r"\d+\.\d+",
                                                                                                  ln.strip())})
    if done.returncode != 0 or not caps:
        return command
    arch = [f"-arch=sm_{caps[0]}"] if len(caps) == 1 else [f"-gencode=arch=compute_{c},code={kind}_{c}"
                                                            for c in caps for kind in ("sm", "compute")]
    k = command.index("-arch=native")
    return command[:k] + arch + command[k + 1:]


def include_folders(command: list) -> list:
    """The -I folders of a compile command."""
    found = []
    for k, word in enumerate(command):
        if word == "-I" and k + 1 < len(command):
            found.append(command[k + 1])
        elif word.startswith("-I") and len(word) > 2:
            found.append(word[2:])
    return [Path(f) for f in found]


def sandbox_plan(command: list, sandbox: str) -> str:
    """"" when the compile can run in bubblewrap, else why not."""
    if sandbox == "off":
        return "turned off"
    if "-arch=native" in command:
        return "-arch=native needs the GPU, which the sandbox hides (and nvidia-smi did not say which it is)"
    return bwrap_usable(str(toolkit_root(command[0])))


def compile_student(command: list, copy: Path, out: Path, *, timeout: float, limits: Limits, bwrap: bool,
                    log_path, as_nobody: bool = False):
    """Runs command -c -o out/student.o copy under limits and, with bwrap, in bubblewrap, where the folders it sees
    are the toolkit's, /usr, the command's -I folders and copy's folder (read-only), and out (writable). as_nobody
    (root without bubblewrap): as the user nobody, out made theirs, so that what only root may read (a course's
    hidden data: course/ on Gradescope) cannot reach the object through the assembler's .incbin."""
    nvcc = Path(command[0]).resolve()
    argv = [str(nvcc), *command[1:], "-c", "-o", str(out / "student.o"), str(copy)]
    if as_nobody and not bwrap:
        os.chown(out, NOBODY, NOBODY)
    argv = contain(argv, limits, bwrap=bwrap, toolkit=toolkit_root(nvcc), read_only=[*include_folders(command),
                   copy.parent], writable=[out], workdir=out, as_nobody=as_nobody)
    return run_process(argv, timeout=timeout, cwd=out, log_path=log_path)


def limit_hint(output: str, limits: Limits) -> str:
    """A line saying which limit a compile ran into, from what nvcc printed, or ""."""
    if re.search(r"signal 25\b|File size limit exceeded|File too large", output):
        return f"(the compiler wrote a file larger than {limits.file_size >> 20} MiB, the limit)"
    if re.search(r"signal 24\b|CPU time limit exceeded", output):
        return f"(the compiler ran longer than {limits.cpu_seconds} s of CPU time, the limit)"
    if re.search(r"out of memory|std::bad_alloc|Cannot allocate memory|signal 9\b", output):
        return f"(the compiler needed more than {limits.address_space >> 30} GiB of memory, the limit)"
    return ""


def build_lab(kit, pattern, source, folder, *, timeout: float = DEFAULT_BUILD_TIMEOUT, harness_build=None,
              makefile="lab.mk", sandbox: str = "auto", limits: Limits = Limits(), object_from=None) -> BuildResult:
    """Builds folder/PATTERN_lab (and folder/PATTERN_runner) from a copy of source (the student's file) in the
    emptied folder, as the module's docstring says. sandbox: "auto" (bubblewrap where it works), "require" (no
    build without it: a kit problem) or "off". object_from: the student.o of a build made already from the same
    file (the GPU's), linked as it is instead of compiling source again: the simulator's check runs the very
    object the GPU runs, its machine code and its PTX (grader/sim/sim_check.py).

    Reports a missing source file, a refused source text (with its lines), compile or link errors (trimmed, paths
    relative to the copy), an oversized object and a timeout.
    """
    if sandbox not in SANDBOX_MODES:
        raise ValueError(f"sandbox is one of {SANDBOX_MODES}, not {sandbox!r}")
    source, folder = Path(source), Path(folder).resolve()
    if not source.is_file():
        return BuildResult(False, message=f"missing file: {source}")
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "out").mkdir(parents=True)
    copy = folder / source.name
    shutil.copyfile(source, copy)
    result = BuildResult(False, source=copy)
    try:
        command = native_arch(student_command(kit, pattern, copy, folder, harness_build=harness_build,
                                              makefile=makefile))
    except (ValueError, OSError, subprocess.TimeoutExpired) as e:
        result.message = f"the kit cannot say how to compile {source.name} (a kit bug): {e}"
        return result
    if object_from is not None:
        return _link_built(kit, pattern, command, copy, folder, Path(object_from), result, timeout=timeout,
                           harness_build=harness_build, makefile=makefile, sandbox=sandbox, limits=limits)
    includes = include_folders(command)
    refusals = check_source(copy.read_bytes(), source.name, includes)
    if refusals:
        result.message = (f"{source.name} is refused before compiling:\n" + "\n".join(refusals[:MAX_ERROR_LINES]))
        return result
    why_not, nobody = _containment(command, sandbox, result)
    if why_not and sandbox == "require":
        return result
    proc = compile_student(command, copy, folder / "out", timeout=timeout, limits=limits, bwrap=not why_not,
                           log_path=folder / "compile.log", as_nobody=nobody)
    if proc.timed_out:
        result.message = f"compiling {source.name} timed out after {timeout:g} s"
        return result
    made = folder / "out" / "student.o"
    if proc.returncode != 0 or not made.is_file():
        hint = limit_hint(proc.output, limits)
        if makefile == "sim.mk" and may_need_later_gpu(proc.output):  # the target, and how to pick a later one
            hint = "\n".join(filter(None, [hint, target_note(command="make grade SIM=1")]))
        result.message = (f"{source.name} does not compile:\n" + trim_compiler_output(proc.output, folder)
                          + (f"\n{hint}" if hint else ""))
        return result
    size = made.stat().st_size
    if size > MAX_OBJECT_BYTES:
        result.message = (f"{source.name} is refused: the compiled file is {size >> 20} MiB: a lab's code compiles to "
                          f"under 1 MiB; does it declare a large initialized array?")
        return result
    result.object = made.rename(folder / "student.o")
    return _link(kit, pattern, command, copy, folder, result, timeout=timeout, harness_build=harness_build,
                 makefile=makefile, sandbox=sandbox, limits=limits, bwrap=not why_not, nobody=nobody)


def _containment(command: list, sandbox: str, result: BuildResult) -> tuple:
    """(why bubblewrap cannot hold the build, "" when it can; whether it runs as nobody instead), with the layers
    and missing ones noted in result (and, with sandbox "require" and no bubblewrap, its message)."""
    why_not = sandbox_plan(command, sandbox)
    nobody = bool(why_not) and as_nobody_here()
    result.layers = ["source", *(["uid"] if nobody else []), "limits"] if why_not else ["source", "bwrap", "limits"]
    result.missing = [f"bwrap: {why_not}"] if why_not else []
    if why_not and sandbox == "require":
        result.message = f"the build's sandbox cannot run here (a kit problem): {why_not}"
    return why_not, nobody


def _link_built(kit, pattern, command, copy, folder, made: Path, result: BuildResult, **kw) -> BuildResult:
    """build_lab's link of an object built already (made, another build's student.o), contained as a link of a
    fresh compile is."""
    if not made.is_file():
        result.message = f"the kit lost the object it built from {copy.name} ({made}): a kit bug"
        return result
    why_not, nobody = _containment(command, kw["sandbox"], result)
    if why_not and kw["sandbox"] == "require":
        return result
    shutil.copyfile(made, folder / "student.o")
    result.object = folder / "student.o"
    return _link(kit, pattern, command, copy, folder, result, bwrap=not why_not, nobody=nobody, **kw)


def _link(kit, pattern, command, copy, folder, result: BuildResult, *, timeout, harness_build, makefile, sandbox,
          limits, bwrap: bool, nobody: bool) -> BuildResult:
    """The rest of build_lab once folder/student.o is made: the kit's parts made current, the runner linked, the
    module written."""
    source = copy
    # The kit's parts the link takes (the pattern's device program, the runner's objects, the checker) made current
    # first, outside the sandbox (kit code alone): two patterns' harnesses built side by side both write the shared
    # objects, and the later write leaves the other pattern's device program older than them, which the link's make
    # would relink inside the sandbox, where the kit is read-only (a lab 09 "link failed" on the H200 until this).
    refreshed = build_harness(kit, pattern, timeout=timeout, harness_build=harness_build, makefile=makefile)
    if not refreshed.ok:
        result.message = refreshed.message
        return result
    proc = link_student(kit, pattern, command, copy, folder, timeout=timeout, limits=limits, bwrap=bwrap,
                        as_nobody=nobody, harness_build=harness_build, makefile=makefile)
    if proc.timed_out:
        result.message = f"linking {source.name} timed out after {timeout:g} s"
        return result
    program, runner = folder / f"{pattern}_lab", folder / f"{pattern}_runner"
    if proc.returncode != 0 or not program.is_file():
        result.message = (f"{source.name} does not compile (the link failed):\n"
                          + trim_compiler_output(proc.output, folder))
        return result
    why = write_module(result.object, folder / MODULE_FILE, sandbox=sandbox, limits=limits, timeout=timeout)
    if why:
        result.message = f"{source.name} is refused: its compiled file cannot be read ({why})"
        return result
    result.ok, result.program, result.runner = True, program, runner if runner.is_file() else None
    return result


@functools.lru_cache(maxsize=1)
def gpu_listed() -> bool:
    """Whether nvidia-smi lists a GPU here, as mk/cuda.mk's HAVE_GPU asks (once a process: every lab's link)."""
    if not shutil.which("nvidia-smi"):
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0


# The make variables of mk/*.mk a caller may set in the environment (the tests' shared HARNESS_BUILD, another
# compiler): link_student passes them to the sandboxed make as settings.
LINK_ENVIRONMENT = ("HARNESS_BUILD", "SIM_BUILD", "CHECKER_BUILD", "NVCC", "CC", "CXX", "OPT_FLAGS", "EXTRA_NVCCFLAGS",
                    "EXTRA_CFLAGS")


def link_student(kit, pattern, command: list, copy: Path, folder: Path, *, timeout: float, limits: Limits,
                 bwrap: bool, as_nobody: bool = False, harness_build=None, makefile="lab.mk"):
    """Links folder/PATTERN_runner from folder/student.o and writes the launcher, through make (which finds
    student.o made and only links), contained as the compile is: under limits and, with bwrap, in bubblewrap, where
    the linker sees the toolkit, /usr and the kit's build inputs read-only (mk/, harness/, patterns/, sim/ and the
    prebuilt harness in build/) and writes folder alone; as_nobody (root without bubblewrap): as the user nobody, the
    folder made theirs. The linker reads the student's object, so it runs as anything else that does. The sandbox
    has no GPU: the compile's architecture flags (command's, -arch=native already resolved by native_arch) and the
    GPU's presence are passed on, so make finds the harness built for this GPU, never a build of its own."""
    kit = Path(kit).resolve()
    settings = [f"LAB_SRC={copy}", f"BUILD={folder}", "-o", str(folder / "student.o")]
    # bubblewrap clears the environment: the make variables the kit's make took from it (a shared HARNESS_BUILD, a
    # compiler) go on its command line, so the link's make sees what the harness build saw
    passed = {name: os.environ[name] for name in LINK_ENVIRONMENT if os.environ.get(name)}
    settings += [f"{name}={value}" for name, value in passed.items()]
    if makefile == "lab.mk":
        arch = [w for k, w in enumerate(command) if w.startswith("-arch=") or w.startswith("-gencode")
                or (k and command[k - 1] == "-gencode")]
        settings += [f"ARCH_FLAGS={' '.join(arch)}", f"HAVE_GPU={'yes' if gpu_listed() else ''}"] if arch else []
    argv = make_argv(kit, pattern, *settings, harness_build=harness_build, makefile=makefile)
    if as_nobody and not bwrap:
        os.chown(folder, NOBODY, NOBODY)
    inputs = [kit / name for name in ("mk", "harness", "patterns", "sim", "build") if (kit / name).is_dir()]
    for place in (harness_build, *(passed.get(name) for name in ("HARNESS_BUILD", "SIM_BUILD", "CHECKER_BUILD"))):
        if place and not Path(place).resolve().is_relative_to(kit) and Path(place).resolve().is_dir():
            inputs.append(Path(place).resolve())
    argv = contain(argv, limits, bwrap=bwrap, toolkit=toolkit_root(command[0]), read_only=inputs, writable=[folder],
                   workdir=folder, as_nobody=as_nobody)
    return run_process(argv, timeout=timeout, cwd=folder, log_path=folder / "build.log")


MODULE_FILE = "module.fatbin"


def write_module(student_object: Path, path: Path, *, sandbox: str = "auto", limits: Limits = Limits(),
                 timeout: float = DEFAULT_BUILD_TIMEOUT) -> str:
    """Writes the device code of the student's object (its .nv_fatbin section; empty when it has none) to path,
    beside the lab program, which passes it to the checker (--module, mk/lab.mk's launcher): the device program
    lets the runner register that device code and no other, so the code the static checks read is the code that
    runs (a fatbinary stored as data, or pieced together at run time, is refused: harness/device/runner_link.c).
    The object is read by `python3 -m grader.compile.objfile fatbin` in the build's sandbox
    (build_sandbox.run_kit_python), into a folder of its own. Returns "" or why it could not be read (the student's
    object's failure)."""
    out = path.parent / "module-out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    try:
        proc = run_kit_python("grader.compile.objfile", ["fatbin", student_object, out / path.name],
                              read_only=[student_object], writable=[out], sandbox=sandbox, limits=limits,
                              timeout=timeout, log_path=path.parent / "module.log")
    except ValueError as e:  # --require-sandbox and no bubblewrap: the build refused already
        return str(e)
    made = out / path.name
    if proc.timed_out:
        return f"reading it took longer than {timeout:g} s"
    if proc.returncode != 0 or made.is_symlink() or not made.is_file():
        return (trim_compiler_output(proc.output, path.parent, max_lines=3)
                or limit_hint(proc.output, limits) or f"exit status {proc.returncode}")
    os.replace(made, path)
    shutil.rmtree(out, ignore_errors=True)
    return ""


__all__ = ["BuildResult", "LAYERS", "Limits", "build_harness", "build_lab", "kit_failure", "make_argv",
           "missing_package", "trim_compiler_output"]
