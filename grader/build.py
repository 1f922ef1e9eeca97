"""Building a lab program from the kit's trusted harness plus only the student's one file, with mk/lab.mk (or, with
makefile="sim.mk", mk/sim.mk: the same program for the kit's CPU simulator, grader/simulator.py).

build_harness() compiles the harness objects once per pattern; build_lab() copies the student's file into a fresh
folder, compiles it to student.o (which grader/static_check.py inspects) and links it with them. Both return a
BuildResult whose message, on failure, is the compiler's output cut to its first errors.
"""
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from grader.run import run_process

MAX_ERROR_LINES = 30
DEFAULT_BUILD_TIMEOUT = 300.0


@dataclass
class BuildResult:
    """ok and the program's path, or not ok and why (missing file, compile errors, timeout). object: the student's
    compiled file (student.o) whenever it was made, even when the link failed, for the static checks."""

    ok: bool
    program: Path | None = None
    message: str = ""
    object: Path | None = None


def make_argv(kit, pattern, *settings, target=None, jobs=1, harness_build=None, makefile="lab.mk") -> list:
    """The `make -f KIT/mk/lab.mk ...` command line (makefile: another of mk/); SM from the environment is passed on
    when set."""
    kit = Path(kit).resolve()
    argv = ["make", "-s", f"-j{jobs}", "-f", str(kit / "mk" / makefile), f"KIT={kit}", f"PATTERN={pattern}",
            *settings]
    if harness_build:
        argv.append(f"HARNESS_BUILD={Path(harness_build).resolve()}")
    if os.environ.get("SM"):
        argv.append(f"SM={os.environ['SM']}")
    if target:
        argv.append(target)
    return argv


def trim_compiler_output(text: str, folder=None, max_lines: int = MAX_ERROR_LINES) -> str:
    """make's output without its own lines, paths inside folder shown relative, cut to max_lines from the first error."""
    if folder:
        text = text.replace(str(folder).rstrip("/") + "/", "")
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not re.match(r"make(\[\d+\])?: ", ln)]
    if len(lines) > max_lines:
        first = next((k for k, ln in enumerate(lines) if re.search(r"error|undefined reference", ln, re.I)), 0)
        rest = len(lines) - first - max_lines
        lines = lines[first:first + max_lines] + ([f"... ({rest} more lines)"] if rest > 0 else [])
    return "\n".join(lines)


def build_harness(kit, pattern, *, timeout: float = DEFAULT_BUILD_TIMEOUT, harness_build=None,
                  makefile="lab.mk") -> BuildResult:
    """Compiles the harness objects of pattern (the kit's own sources); on failure the message is the kit's fault."""
    argv = make_argv(kit, pattern, target="harness", jobs=os.cpu_count() or 1, harness_build=harness_build,
                     makefile=makefile)
    proc = run_process(argv, timeout=timeout, cwd=kit)
    if proc.timed_out:
        return BuildResult(False, message=f"building the {pattern} harness timed out after {timeout:g} s")
    if proc.returncode != 0:
        return BuildResult(False, message=f"the {pattern} harness does not build (a kit bug):\n"
                                          + trim_compiler_output(proc.output))
    return BuildResult(True)


def build_lab(kit, pattern, source, folder, *, timeout: float = DEFAULT_BUILD_TIMEOUT,
              harness_build=None, makefile="lab.mk") -> BuildResult:
    """Builds folder/PATTERN_lab from a copy of source (the student's file) in the emptied folder.

    Reports a missing source file, compile or link errors (trimmed, paths relative to the copy) and a timeout.
    """
    source, folder = Path(source), Path(folder).resolve()
    if not source.is_file():
        return BuildResult(False, message=f"missing file: {source}")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    copy = folder / source.name
    shutil.copyfile(source, copy)
    argv = make_argv(kit, pattern, f"LAB_SRC={copy}", f"BUILD={folder}", harness_build=harness_build,
                     makefile=makefile)
    proc = run_process(argv, timeout=timeout, cwd=folder, log_path=folder / "build.log")
    if proc.timed_out:
        return BuildResult(False, message=f"compiling {source.name} timed out after {timeout:g} s")
    program, obj = folder / f"{pattern}_lab", folder / "student.o"
    obj = obj if obj.is_file() else None
    if proc.returncode != 0 or not program.is_file():
        return BuildResult(False, message=f"{source.name} does not compile:\n" + trim_compiler_output(proc.output, folder),
                           object=obj)
    return BuildResult(True, program=program, object=obj)
