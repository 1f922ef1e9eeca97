"""The back end a grading runs on, given to grade.Grader by its caller (grade.py's main, the class grader, the
simulator's check): how a lab is built (which mk file, which harness folder), how its cases run, which of its groups
can run there, and how its sanitizers row and its performance are scored. Grader holds the pipeline (build, static
checks, correctness groups, sanitizers, performance, report) and asks its Platform at each of these points.

    GpuPlatform            the GPU (mk/lab.mk): every group, compute-sanitizer beside the correctness runs, a benchmark
    sim.simulator.SimPlatform   the kit's CPU simulator (mk/sim.mk, `python3 -m grader --simulator`)
    sim.sim_check.CheckPlatform the simulator's check of each lab beside a GPU grading

A Platform serves one Grader: the simulator's keeps that grading's state (runs started ahead, labs that failed).
"""
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.compile import build as build_mod
from grader.config import SANITIZERS
from grader.run import gpuinfo
from grader.run.process import ours
from grader.run.run import ListEnds, Outcome, run_harness, run_harness_runs
from grader.sanitize.score import score_sanitizers
from grader.score.score import hung_labs, not_run, score_performance


@dataclass
class BenchTail:
    """A lab's benchmark as the last argument list of its correctness program (GpuPlatform.bench_tail): the timed runs
    in the CUDA context, runner and device program the correctness runs had, instead of a program of their own (on
    the lent H200 a benchmark program took 0.67-0.73 s, about 0.25 s of it making its context, which the driver makes
    one at a time, and 0.1-0.3 s ending it). The list is let through (open, asked by the program's feed of lists)
    only once every list before it ended with status 0 and ready() says the rest of the lab passed (its static
    checks, its sanitizers row): the benchmark runs when and only when a program of its own would have run, and the
    performance row is scored from its outcome as before (GpuPlatform.grade_performance). ready may wait."""

    args: list
    timeout: float
    ready: object  # () -> bool
    snapshot: object  # () -> nvidia-smi's view, taken just before the list is let through
    stage: object  # the Grader's stage(lab, name) context manager
    lab: str
    ends: ListEnds = field(default_factory=ListEnds)
    before: dict | None = None
    own: set = field(default_factory=set)  # pids in before that are this grader's descendants (its own program)
    opened: float | None = None  # time.monotonic() when the list was let through
    correct_until: float | None = None  # when the last correctness list ended
    outcome: Outcome | None = None

    def open(self, k: int) -> bool:
        """Whether list k (this one) may go to the program: lists 0..k-1 ended with status 0 and ready()."""
        for j in range(k):
            if self.ends.wait(j) != 0:
                return False
        self.correct_until = self.ends.seconds_at.get(k - 1)
        try:
            if not self.ready():
                return False
        except Exception:  # the sanitizers' row could not be had: no benchmark here (grade_performance decides)
            return False
        with self.stage(self.lab, "GPU queries"):
            self.before = self.snapshot()
        self.own = {app.get("pid") for app in self.before.get("apps") or [] if ours(app.get("pid"))}
        self.opened = time.monotonic()
        return True

    def seconds(self) -> float:
        """The benchmark list's wall seconds: from its letting through to its run-end line."""
        end = self.ends.seconds_at.get(max(self.ends.seconds_at, default=-1))
        return round(end - self.opened, 3) if end is not None and self.opened is not None else 0.0


class Platform:
    """What every back end shares: the correctness groups run through the Grader's own engine (run_groups,
    run_group, run_case), which a back end may wrap; the rest each back end says for itself (GpuPlatform's methods).

    build_dir: where labs are built unless the caller says; simulator_check_off: why the simulator's check of each
    lab never runs beside a grading on this platform ("": it may); sanitizers_apart: whether the sanitizers row's
    runs are programs of their own, which may go beside the correctness runs."""

    build_dir = "build/grade"
    simulator_check_off = ""
    sanitizers_apart = True

    def build_folder(self, build_dir):
        """Where the labs are built, from the caller's build_dir (None: the platform's own)."""
        return build_dir if build_dir is not None else self.build_dir

    def harness_folder(self, kit, harness_build):
        """Where the harness objects are built (None: mk/*.mk's own default, HARNESS_BUILD where it is set)."""
        return harness_build

    def attach(self, grader) -> None:
        """Called once the Grader is made, to take the parts of it this platform changes."""

    def grade_groups(self, grader, lab, program) -> list:
        return grader.run_groups(lab, program)

    def grade_group(self, grader, lab, index: int, group, program):
        return grader.run_group(lab, index, group, program)

    def run_case(self, grader, lab, tag: str, program, args, timeout):
        return grader.run_case(lab, tag, program, args, timeout)

    def graded(self, grader, report) -> None:
        """The platform's last words on a finished report (its notes)."""

    def bench_tail(self, grader, lab, ready):
        """The lab's benchmark as its correctness program's last list (BenchTail), or None: it runs apart or not."""
        return None

    def cpu_seconds(self, limits) -> float | None:
        """The CPU seconds each process of a lab program may use (the checker's --cpu-seconds: RLIMIT_CPU of its
        runner and device program), or None for no such limit (a GPU's runs have their calls' time limits)."""
        return None


class GpuPlatform(Platform):
    """The GPU: the kit's build (mk/lab.mk), every correctness group, compute-sanitizer, a benchmark."""

    def hooks(self) -> dict:
        """The build, build_harness and run a Grader uses where its caller gives none."""
        return {"build": build_mod.build_lab, "build_harness": build_mod.build_harness, "run": run_harness}

    def host_memory_mib(self, limits) -> int:
        """The host memory a run's process may take (labs.toml [limits])."""
        return limits.for_run(False)

    def reference_seconds(self, grader, lab, group):
        """The reference solution's slowest run of group on this machine's GPU (labs.toml's calibration), or None."""
        return lab.reference_run_seconds(grader.device_name, group.name)

    def gpu_pids(self, grader) -> set | None:
        """The pids of the compute processes on the GPUs now (nvidia-smi), or None where it cannot say."""
        snap = grader.gpu_apps()
        grader.device_name = gpuinfo.device_name(snap, os.environ.get("CUDA_VISIBLE_DEVICES"),
                                                 os.environ.get("CUDA_DEVICE_ORDER")) or ""
        if "error" in snap and not snap.get("apps"):
            return None
        return {app.get("pid") for app in snap.get("apps", [])}

    def device_name(self, grader) -> str:
        """The GPU the labs ran on, for a report whose benchmarks did not say ("" where none)."""
        return gpuinfo.device_name(grader.gpu_snapshot(), os.environ.get("CUDA_VISIBLE_DEVICES"),
                                   os.environ.get("CUDA_DEVICE_ORDER"))

    def grade_sanitizers(self, grader, lab, program, cancel=None):
        """Runs the lab's program under compute-sanitizer on the small inputs of labs.toml (grader/sanitize/) and
        scores what it finds in the student's file; what it finds in the kit is reported as a kit bug. cancel: a
        threading.Event that stops the runs (see run_sanitizers)."""
        spec = lab.sanitizers
        skipped = grader._skip(lab, SANITIZERS, spec.points)
        if skipped:
            return skipped
        runs = [grader._args([*args, *lab.args, "--seed", str(grader.seed)]) for args in spec.runs]
        copy = Path(program).parent / lab.source  # grader/compile/build.py builds from a copy beside the program
        with grader.stage(lab.name, SANITIZERS):
            outcome = grader.sanitize(program, runs, tools=spec.tools, timeout=max(spec.timeout or 0, grader.timeout),
                                      workdir=grader.build_dir / lab.name / "runs" / "sanitize", cwd=grader.kit,
                                      source=lab.source, source_path=copy, kit=grader.kit, cancel=cancel,
                                      log=lambda message: grader.log(f"{lab.name}: {message}"))
        if outcome.no_device:
            grader.no_device = True
        result = score_sanitizers(lab.name, spec, outcome, lab.source, kit=grader.kit, source_path=copy)
        grader.log(f"{lab.name}: {SANITIZERS}: {result.summary}")
        return result

    def bench_tail(self, grader, lab, ready):
        """The benchmark as the correctness program's last list where nothing else may use the GPU meanwhile (no
        class lock: one grading on it, or one student a GPU) and the grader runs the kit's own --runs-fd programs;
        ready: () -> whether the lab's static checks and sanitizers row passed (may wait for the sanitizers)."""
        perf = lab.performance
        if (perf is None or grader.gpu_lock is not None or grader.run_many is not run_harness_runs or
                grader._skip(lab, "performance", perf.points)):
            return None
        return BenchTail(*self._bench_run(grader, lab), ready, grader.gpu_snapshot, grader.stage, lab.name)

    @staticmethod
    def _bench_run(grader, lab) -> tuple:
        """(the benchmark's arguments, its time limit in seconds), as the correctness program's last list or alone."""
        perf = lab.performance
        return ["--bench", perf.bench, "--seed", str(grader.seed)], max(perf.timeout or 0, grader.timeout)

    def grade_performance(self, grader, lab, program, correct: bool, report):
        """Scores the benchmark if every correctness group passed: the correctness program's last list where it ran
        there (bench_tail), else a run of its own now."""
        perf = lab.performance
        tail = grader.bench_tails.pop(lab.name, None)
        skipped = grader._skip(lab, "performance", perf.points)
        if skipped:
            return skipped
        if not correct:
            return not_run(lab.name, "performance", perf.points, "not run: every correctness test must pass first")
        own = ()
        if tail is not None and tail.outcome is not None and tail.opened is not None:
            before, outcome = tail.before, grader._seen(lab, tail.outcome)
            grader.add_stage(lab.name, "benchmark", tail.seconds())
            with grader.stage(lab.name, "GPU queries"):
                after = grader.gpu_snapshot()
            own = tail.own  # the correctness program's device process, on the GPU before its last list
        else:
            before, outcome, after = self._bench_apart(grader, lab, program)
        return self._score_bench(grader, lab, outcome, before, after, report, own)

    def _bench_apart(self, grader, lab, program) -> tuple:
        """(before, outcome, after) of the benchmark as a program of its own, the GPU queries around it."""
        args, timeout = self._bench_run(grader, lab)
        with grader._gpu("exclusive"):  # in a class run, no other student's runs beside the timed one
            with grader.stage(lab.name, "GPU queries"):
                before = grader.gpu_snapshot()
            with grader.stage(lab.name, "benchmark"):
                outcome = grader._run(lab, "bench", program, args, timeout)
            with grader.stage(lab.name, "GPU queries"):
                after = grader.gpu_snapshot()
        return before, outcome, after

    def _score_bench(self, grader, lab, outcome, before, after, report, own=()):
        """The performance row from the benchmark's outcome and nvidia-smi's views around it (own: pids in them that
        are the benchmark's own program)."""
        perf = lab.performance
        result = score_performance(lab.name, perf, outcome, grader.config.calibration.get("gpu", ""))
        if outcome.status != "no-device":  # the GPU, its clocks and the other processes on it (grader/run/gpuinfo.py)
            result.data["environment"] = env = gpuinfo.environment(before, after, outcome.bench_line(), own)
            for warning in env["warnings"]:
                result.detail = "\n".join(part for part in (result.detail, f"warning: {warning}") if part)
                report.notes.append(f"{lab.name}: warning: {warning}")
        device = (outcome.bench_line() or {}).get("device")
        if device:
            report.device = str(device)
            if perf.calibrated(str(device)) is None:  # the row's detail says it too; this is under the table
                unit = "x of CUB" if perf.yardstick == "cub" else "x baseline"
                report.notes.append(f"{lab.name}: its performance thresholds are not calibrated on {device}, so "
                                    f"labs.toml's defaults apply (full marks at {perf.full:g}{unit}, none at "
                                    f"{perf.lower:g}{unit}); `make calibrate LAB={lab.name[:2]}` on this GPU sets "
                                    "them (docs/AUTHORING.md, \"Calibrating thresholds\")")
        grader.log(f"{lab.name}: performance: {result.summary}")
        return result

    def full_marks(self, report) -> bool:
        """Whether a grading on this platform earned exit status 0 (grade.py's main)."""
        return report.full_marks and not hung_labs(report)
