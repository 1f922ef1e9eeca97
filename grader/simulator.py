"""Grading correctness without a GPU, on the kit's SIMT simulator (sim/): `grade.py --simulator`, `make grade SIM=1`.

The lab programs are the same (the kit's harness and the student's one file), built by mk/sim.mk so that their
kernels run on the CPU (grader/build.py with makefile="sim.mk"). SimGrader is the Grader with three changes:

- a correctness group runs only when every size it asks for is at most SIM_MAX_N elements (the datasets, the edge
  sizes, exact data); a group of larger sizes scores 0 as "needs a GPU", saying so;
- the performance test needs a GPU too: 0 points, and in its place the simulator's counts (warp instructions, SIMT
  efficiency, divergence, bank conflicts, memory sectors) of one small run, for the student to read;
- the sanitizers row (compute-sanitizer on a GPU) is scored from the simulator's own hazard checks of the runs
  (races on shared memory, uninitialized reads, barriers not every thread reaches);
- a run's failure carries the simulator's own diagnostic (the kernel, the PTX instruction, file:line, block and
  thread of an out-of-bounds access, a barrier deadlock, the instruction limit of a kernel that never ends), and a
  kernel the simulator cannot run is reported as the simulator's limitation, not the student's fault.

Points earned on the simulator are those of the groups it can run; the report says that the rest needs a GPU.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

from grader import build as build_mod
from grader.run import run_harness, run_process
from grader.score import TestResult

try:  # compute-sanitizer's test, where this copy of the grader has it
    from grader.sanitize import NAME as SANITIZERS_NAME
except ImportError:
    SANITIZERS_NAME = "compute-sanitizer"

KIT = Path(__file__).resolve().parent.parent
SIM_MAKEFILE = KIT / "mk" / "sim.mk"
SIM_MAX_N = 1 << 21  # the largest size a group may ask for to run on the simulator (the edge sizes go to 2^20+1)
SIM_MIN_TIMEOUT = 600.0  # seconds per run at least: the simulator is some thousand times slower than a GPU
SIM_PREFIX = "ppl-sim: "  # every line the simulator's runtime prints starts so (sim/runtime_internal.h)
# Warp instructions one launch may run before the simulator stops it as hung (PPL_SIM_MAX_INSTRUCTIONS, unless set):
# the reference solutions need under 3 million at the largest size the simulator grades, and a kernel that loops
# forever reaches 30 million in about 10 s.
SIM_MAX_INSTRUCTIONS = 30_000_000
BUDGET_WORDS = "instruction budget exhausted"  # the core's message when a launch reaches the limit
MAX_FINDING_LINES = 3
NEEDS_GPU = "needs GPU"  # the table status of a test the simulator does not run
COUNTS_ARGS = {"reduce": ["--data", "integer", "--n", "65537"], "scan": ["--n", "65537"], "compact": ["--n", "65537"]}
MAX_COUNT_LINES = 40


def sim_env(counts: bool = False, report=None, budget: bool = False) -> dict:
    """The environment of a simulated run: this one, plus PPL_SIM_COUNTS=1 (the counts table on stderr at exit) and
    PPL_SIM_REPORT=report (the counts and findings as JSON) when asked, and with budget the grader's instruction
    limit (SIM_MAX_INSTRUCTIONS) unless PPL_SIM_MAX_INSTRUCTIONS is set already."""
    env = dict(os.environ)
    if counts:
        env["PPL_SIM_COUNTS"] = "1"
    if report:
        env["PPL_SIM_REPORT"] = str(report)
    if budget:
        env.setdefault("PPL_SIM_MAX_INSTRUCTIONS", str(SIM_MAX_INSTRUCTIONS))
    return env


def build_harness_sim(kit, pattern, **kwargs):
    """build.build_harness with mk/sim.mk (the harness objects in build/sim/harness, and the simulator's library)."""
    return build_mod.build_harness(kit, pattern, makefile="sim.mk", **kwargs)


def build_lab_sim(kit, pattern, source, folder, **kwargs):
    """build.build_lab with mk/sim.mk: the same program, its kernels run by the simulator."""
    return build_mod.build_lab(kit, pattern, source, folder, makefile="sim.mk", **kwargs)


MANGLED = re.compile(r"\b_Z[A-Za-z0-9_]+")


def demangle(text: str) -> str:
    """text with the C++ names the simulator reports (mangled, as in the PTX: "_Z13reduce_kernelPKfPfm") shown as
    the student wrote them ("reduce_kernel(float const*, float*, unsigned long)"), through binutils' c++filt; text
    unchanged when c++filt is missing or fails."""
    names = sorted(set(MANGLED.findall(text)))
    tool = shutil.which("c++filt")
    if not names or not tool:
        return text
    try:
        proc = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return text
    plain = proc.stdout.splitlines()
    if proc.returncode != 0 or len(plain) != len(names):
        return text
    table = dict(zip(names, plain))
    return MANGLED.sub(lambda m: table.get(m.group(0), m.group(0)), text)


def simulator_lines(output: str) -> list:
    """The lines the simulator printed (its diagnostics and findings), in order, with kernel names demangled."""
    lines = [ln.strip() for ln in output.splitlines() if ln.startswith(SIM_PREFIX)]
    return demangle("\n".join(lines)).split("\n") if lines else []


def diagnostic(lines: list) -> str:
    """What the simulator said, for a run's message: every kernel failure, and the first findings (hazards) without
    their PTX lines."""
    said, findings = [], 0
    for ln in lines:
        text = ln[len(SIM_PREFIX):]
        if " failed: " in text:
            said.append(text)
        elif text.lstrip().startswith("["):
            findings += 1
            if findings <= MAX_FINDING_LINES:
                said.append(text.strip())
    if findings > MAX_FINDING_LINES:
        said.append(f"... and {findings - MAX_FINDING_LINES} more findings (make sim LAB=NN shows them all)")
    return "\n".join(said)


def run_harness_sim(program, args, *, timeout: float, workdir, cwd=None, source: str = "the lab's file"):
    """run.run_harness on the simulator, with the grader's instruction limit, its report in workdir/sim-report.json.

    A run that did not pass gets the simulator's diagnostic in its message. A launch that reached the instruction
    limit is a timeout (the kernel would hang on a GPU: the lab's later tests are not run). A kernel the simulator
    cannot run becomes a kit problem (harness-error) that says so, not a fault of source.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    wanted = sim_env(report=workdir / "sim-report.json", budget=True)
    saved = {k: os.environ.get(k) for k in ("PPL_SIM_REPORT", "PPL_SIM_MAX_INSTRUCTIONS")}
    os.environ.update({k: wanted[k] for k in saved})  # run_harness passes its own environment on
    try:
        outcome = run_harness(program, args, timeout=max(timeout, SIM_MIN_TIMEOUT), workdir=workdir, cwd=cwd,
                              source=source)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    log = workdir / "output.log"
    lines = simulator_lines(log.read_text(errors="replace")) if log.is_file() else []
    cannot = [ln for ln in lines if "cannot simulate" in ln]
    if cannot:
        outcome.status = "harness-error"
        outcome.message = (f"the kit's simulator cannot run this (a limitation of the simulator, not necessarily a "
                           f"fault of {source}; run it on a GPU): " + cannot[0][len(SIM_PREFIX):])
    elif not outcome.passed and any(BUDGET_WORDS in ln for ln in lines):
        outcome.status = "timeout"
        outcome.message = (f"a kernel ran {wanted['PPL_SIM_MAX_INSTRUCTIONS']} warp instructions in one launch, the "
                           f"simulator's limit: it probably loops forever (on a GPU it would hang)\n"
                           f"the simulator says: {diagnostic(lines)}")
    elif not outcome.passed and lines:
        said = diagnostic(lines)
        if said and said not in outcome.message:
            outcome.message = f"{outcome.message}\nthe simulator says: {said}".strip()
    return outcome


def parse_size(text: str) -> int | None:
    """A size in the harness's --n syntax (1025, 2^20, 2^24+3, 2^10-1); None when it is not one."""
    m = re.fullmatch(r"\s*(\d+)(?:\^(\d+))?\s*(?:([+-])\s*(\d+))?\s*", text)
    if not m:
        return None
    value = int(m.group(1)) ** int(m.group(2)) if m.group(2) else int(m.group(1))
    if m.group(3):
        value += int(m.group(4)) if m.group(3) == "+" else -int(m.group(4))
    return value


def largest_size(runs) -> int:
    """The largest --n size among the argument lists runs (0 when none gives --n: datasets)."""
    largest = 0
    for args in runs:
        for k, arg in enumerate(args[:-1]):
            if arg == "--n":
                for part in args[k + 1].split(","):
                    size = parse_size(part)
                    largest = max(largest, size if size is not None else SIM_MAX_N + 1)
    return largest


def needs_gpu(lab: str, name: str, points: float, why: str, detail: str = "") -> TestResult:
    """A test the simulator does not run: 0 points, status NEEDS_GPU, and why."""
    return TestResult(lab, name, points, 0.0, NEEDS_GPU, why, detail)


def sim_full_marks(report) -> bool:
    """Every test the simulator ran, outside the bonus labs, got its full points (grade.py's exit status 0)."""
    return all(r.full for r in report.results if not r.bonus and r.status != NEEDS_GPU)


def counts_text(program, pattern: str, workdir, cwd, timeout: float) -> str:
    """The simulator's counts table of one small run of program (COUNTS_ARGS), cut to MAX_COUNT_LINES lines."""
    args = COUNTS_ARGS.get(pattern, ["--n", "65537"])
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    # --in-process: the counts are printed at exit, which the harness's runner process skips (it ends with _exit)
    proc = run_process([str(program), *args, "--quiet", "--in-process"], timeout=max(timeout, SIM_MIN_TIMEOUT),
                       cwd=cwd, log_path=workdir / "output.log", env=sim_env(counts=True, budget=True))
    if proc.timed_out or proc.returncode != 0:
        return ""
    # each kernel's totals, without its table of source lines (make sim shows those)
    lines = []
    for ln in proc.output.splitlines():
        if ln.startswith("== ") or (ln.startswith("   ") and not ln.startswith("    ") and ":" not in ln.split()[0]
                                    and not ln.lstrip().startswith(("source line", "(no line)"))):
            lines.append(ln.rstrip())
    if len(lines) > MAX_COUNT_LINES:
        lines = lines[:MAX_COUNT_LINES] + [f"... ({len(lines) - MAX_COUNT_LINES} more lines)"]
    header = (f"The simulator's counts for {' '.join(args)} (per source line: make sim LAB=NN; sim/README.md "
              f"explains them):")
    return demangle("\n".join([header, *lines])) if lines else ""


def findings_of(logs) -> list:
    """The distinct findings (hazard lines: "[kind] kernel K, file:line ... (N times): what") in the runs' logs."""
    seen = {}
    for log in logs:
        for ln in simulator_lines(Path(log).read_text(errors="replace")):
            text = ln[len(SIM_PREFIX):].strip()
            if text.startswith("["):
                seen.setdefault(re.sub(r" \(\d+ times?\)", "", text), text)
    return list(seen.values())


def score_hazards(lab: str, points: float, source: str, logs) -> TestResult:
    """The sanitizers row on the simulator: compute-sanitizer needs a GPU, but the simulator checks the same hazards
    (races on shared memory, uninitialized reads, barriers not every thread reaches) in every run. A finding in
    source fails the row, as compute-sanitizer's would; one in the kit's own kernels is reported as a kit bug."""
    logs = list(logs)
    findings = findings_of(logs)
    mine = [f for f in findings if f" {source}:" in f]
    kits = [f for f in findings if f not in mine]
    note = ("\nIn the kit's own kernels (a kit bug; tell the instructors):\n" + "\n".join(kits)) if kits else ""
    if not mine:
        return TestResult(lab, SANITIZERS_NAME, points, points, "pass",
                          f"the simulator found no races, uninitialized reads or barrier hazards in {source} "
                          f"({len(logs)} runs; compute-sanitizer itself needs a GPU)", note.strip())
    more = f" (and {len(mine) - 1} more below)" if len(mine) > 1 else ""
    return TestResult(lab, SANITIZERS_NAME, points, 0.0, "FAIL", f"the simulator found: {mine[0]}{more}",
                      "\n".join([f"the simulator's hazard checks found, in {source}:", *mine[:10]]) + note)


def make_sim_grader(base):
    """The simulator's Grader: a subclass of base (grade.Grader) with the changes the module docstring lists."""

    class SimGrader(base):
        simulator = True

        def __init__(self, config, submission, **kwargs):
            kwargs.setdefault("build", build_lab_sim)
            kwargs.setdefault("build_harness", build_harness_sim)
            kwargs.setdefault("run", run_harness_sim)
            if kwargs.get("build_dir", "build/grade") == "build/grade":
                kwargs["build_dir"] = "build/grade-sim"
            super().__init__(config, submission, **kwargs)
            self.timeout = max(self.timeout, SIM_MIN_TIMEOUT)
            self.sim_failed = set()  # labs with a group that ran on the simulator and did not pass

        def grade(self, labs):
            report = super().grade(labs)
            report.notes.append(
                f"Graded on the kit's CPU simulator (--simulator), not a GPU: only the correctness groups of sizes up "
                f"to {SIM_MAX_N} elements ran, and the simulator's hazard checks stand for compute-sanitizer; larger "
                f"sizes and performance need a GPU and score 0 here. Grade on a GPU for the full marks.")
            return report

        def grade_group(self, lab, index, group, program):
            result = self._grade_group(lab, index, group, program)
            if result.status != NEEDS_GPU and not result.full:
                self.sim_failed.add(lab.name)
            return result

        def _grade_group(self, lab, index, group, program):
            try:
                runs = self.group_runs(group, lab.args)
            except ValueError:
                runs = []  # the base class reports it
            largest = largest_size(runs)
            if largest > SIM_MAX_N:
                return needs_gpu(lab.name, group.name, group.points,
                                 f"sizes up to {largest} elements are too large for the simulator (at most "
                                 f"{SIM_MAX_N})")
            return super().grade_group(lab, index, group, program)

        def grade_sanitizers(self, lab, program):
            """compute-sanitizer's row, scored from the simulator's own hazard checks of the runs made so far."""
            return score_hazards(lab.name, lab.sanitizers.points, lab.source,
                                 sorted((self.build_dir / lab.name / "runs").glob("*/output.log")))

        def grade_performance(self, lab, program, correct, report):
            perf = lab.performance  # correct is False here: the groups that need a GPU scored 0
            detail = ""
            if lab.name not in self.sim_failed:
                detail = counts_text(program, lab.pattern, self.build_dir / lab.name / "runs" / "counts", self.kit,
                                     self.timeout)
            why = "speed is measured on a GPU; the simulator counts instructions instead"
            return needs_gpu(lab.name, "performance", perf.points,
                             why + (" (below)" if detail else ""), detail)

    return SimGrader
