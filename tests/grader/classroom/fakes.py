"""Fake grading steps for grader/classroom/'s tests: module-level functions (they cross into worker processes),
whose behaviour the student's file decides by the markers it holds.

A lab file holding NO BUILD does not compile; NO TOOLS makes the static checks fail to run; FORBIDDEN is caught
by the static checks; HANG never ends; CRASH dies of SIGSEGV; WRONG fails every case; SLOW passes at a speedup of 2
(half the points of SMALL_TOML's performance); anything else passes at a speedup of 100. GPU LOG adds a line with
the run's CUDA_VISIBLE_DEVICES to the file $CLASS_TEST_GPU_LOG. Each build appends "student/lab" to OUT/builds.log,
so a test can count what was rebuilt.
"""
import os
import signal
import time
from pathlib import Path

from grader.compile.build import BuildResult
from grader.compile.static_check import Finding, ToolError, Verdict
from tests.grader.fakes import PASS, fake_program

BODIES = {
    "HANG": "time.sleep(1000)",
    "CRASH": "os.kill(os.getpid(), signal.SIGSEGV)",
    "WRONG": "[emit(c, 'fail', message='wrong sum') for c in CASES]\nsys.exit(1)",
    "SLOW": "if '--bench' in ARGS: bench(2.0)\nall_pass()",
}


def build(kit, pattern, source, folder, timeout=None, harness_build=None):
    """A build: a fake harness program chosen by the file's markers, and student.o holding the file's text."""
    source, folder = Path(source), Path(folder)
    if not source.is_file():
        return BuildResult(False, message=f"missing file: {source}")
    with open(folder.parents[3] / "builds.log", "a") as log:  # OUT/students/ID/build/LAB
        log.write(f"{folder.parents[1].name}/{folder.name}\n")
    folder.mkdir(parents=True, exist_ok=True)
    text = source.read_text()
    (folder / "student.o").write_text(text)
    if "NO BUILD" in text:
        return BuildResult(False, message=f"{source.name} does not compile:\n{source.name}(3): error: NO BUILD",
                           object=folder / "student.o")
    body = next((b for marker, b in BODIES.items() if marker in text), PASS)
    if "GPU LOG" in text:  # the run says which GPU its worker was pinned to
        body = ("with open(os.environ['CLASS_TEST_GPU_LOG'], 'a') as f:\n"
                "    f.write(os.environ.get('CUDA_VISIBLE_DEVICES', 'unset') + '\\n')\n" + body)
    return BuildResult(True, program=fake_program(folder, body, name=f"{pattern}_lab"), object=folder / "student.o")


def check(obj, pattern):
    """The static checks: FORBIDDEN in the file is a finding; NO TOOLS, the checks cannot run at all."""
    text = Path(obj).read_text()
    if "NO TOOLS" in text:
        raise ToolError("nm is not installed")
    if "FORBIDDEN" in text:
        return Verdict([Finding("host-copy", "calls cudaMemcpy: the lab's code may not copy data to the host")])
    return Verdict()


def harness_ok(kit, pattern, timeout=None, harness_build=None):
    return BuildResult(True)


def harness_broken(kit, pattern, timeout=None, harness_build=None):
    return BuildResult(False, message=f"the {pattern} harness does not build (a kit bug):\nharness.cu: error")


def no_device_run(program, args, *, timeout, workdir, cwd=None, source="the lab's file"):
    """A run on a machine without a GPU: the harness exits 77 (made by the real run hook, from a fake program)."""
    from grader.run.run import run_harness
    from tests.grader.fakes import fake_program as make
    program = make(Path(workdir).parent.parent, "sys.exit(77)", name="nodevice_lab")
    return run_harness(program, args, timeout=timeout, workdir=workdir, cwd=cwd, source=source)


def build_raising_for_bob(kit, pattern, source, folder, timeout=None, harness_build=None):
    """A build that fails in the grader itself (an exception) for the student named bob."""
    if Path(folder).parents[1].name == "bob":
        raise RuntimeError("a bug in the grader")
    return build(kit, pattern, source, folder, timeout=timeout, harness_build=harness_build)


def kill_worker_build(kit, pattern, source, folder, timeout=None, harness_build=None):
    """A build whose worker process dies (as one killed for memory would), once per student: the second try works."""
    marker = Path(folder).parents[1] / "killed-once"
    if "DIE" in Path(source).read_text() and not marker.exists():
        marker.write_text("")
        os.kill(os.getpid(), signal.SIGKILL)
    return build(kit, pattern, source, folder, timeout=timeout, harness_build=harness_build)


def slow_build(kit, pattern, source, folder, timeout=None, harness_build=None):
    """A build that takes 0.2 s (how long the CPU side's builds took must reach the student's results.json)."""
    time.sleep(0.2)
    return build(kit, pattern, source, folder, timeout=timeout, harness_build=harness_build)


def stopping_build(kit, pattern, source, folder, timeout=None, harness_build=None):
    """A build whose worker process is stopped (SIGSTOP, as a student's program could do without the sandbox) when
    the file says STOP."""
    if "STOP" in Path(source).read_text():
        os.kill(os.getpid(), signal.SIGSTOP)
    return build(kit, pattern, source, folder, timeout=timeout, harness_build=harness_build)
