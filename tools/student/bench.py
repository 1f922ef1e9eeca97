"""`make bench`: your kernel on the reference ladder (`make bench` in a lab folder, or `make bench LAB=03` at the top),
or the whole reference ladder (`make bench` at the top, for the course staff).

    tools/student/bench.py --lab 03 [--submission labs|DIR] [--sizes 2^24,2^26,2^28] [--no-ladder]
    tools/student/bench.py [--lab PREFIX] [--sizes 2^20,2^24,2^26,2^28]        the reference ladder (no --submission, or
                                                                       --submission solutions)

Your kernel (--lab with --submission): builds the lab's file from the submission as the grader does
(grader/compile/build.py: the kit's harness and the one file, the compile sandboxed where bubblewrap works) and the
lab's reference solution. At each size it runs yours and then the reference, each in one harness process that times the
kernel interleaved with the same yardsticks: the baseline kernel (lab 01's; reductions only), CUB's device-wide
primitive (cub::DeviceReduce::Sum, DeviceScan::ExclusiveSum, DeviceSelect::If) and a device-to-device copy of the same
bytes. Every figure printed is a ratio of times taken inside one process, so a change of the GPU's clock between
processes cancels; no time is printed alone:

  x baseline   baseline time / your time (reductions: what the grader scores)
  x reference  your speedup over the grader's yardstick / the reference's, each from its own process (1.00 = as
               fast as the reference solution)
  x CUB        CUB time / your time (scan and compaction: what the grader scores)
  % copy       copy time / your time: the fraction of the measured copy bandwidth at which the kernel moves its bytes

Then, at the size the grader times (labs.toml's `bench`, 2^26), the other labs' reference solutions are timed too
(not with --no-ladder), and the ladder is drawn with your kernel on it and the grader's thresholds for this GPU
beside it (grader/report/charts.py, matplotlib): OUT/ladder-LAB.svg, with every result line in OUT/bench-LAB.jsonl and
the table in OUT/bench-LAB.md; OUT is build/bench/yours-labs (build/bench/yours-NAME-HASH for another submission
folder). Without solutions/ (the student release) the reference figures come from handouts/figures/ladder.json, measured
on the GPU it names, and the output says so.

The reference ladder (no --submission): every reference solution at every size against CUB and the copy (and the
reductions against the baseline), the table in build/bench/ladder.md, every result line in build/bench/ladder.jsonl
(`make figures LADDER=build/bench/ladder.md` redraws the handouts' chart from them) and the chart with the grader's
thresholds for this GPU in build/bench/ladder.svg.

Exit status: 0 every benchmark ran and passed; 1 one failed (a wrong answer, a crash, a timeout: the table says
which); 2 a file does not build, or bad usage; 77 no CUDA device here: then it says what it would have done and which
simulator command does the nearest thing.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.config import lab_of
from grader.patterns import KIT, PATTERNS, format_size, lab_dirs


NO_DEVICE = 77
EXIT_FAIL, EXIT_BUILD = 1, 2
LADDER_SIZES = "2^20,2^24,2^26,2^28"
YOURS_SIZES = "2^24,2^26,2^28"
RUN_TIMEOUT = 300.0  # seconds per benchmark process: a slow kernel at 2^28 takes a few seconds, a hung one forever
HANDOUT_LADDER = KIT / "handouts" / "figures" / "ladder.json"


def build(lab_dir: Path, out: Path) -> tuple:
    """Build one solution's harness program; returns (pattern, program path)."""
    lab = lab_of(lab_dir)
    pattern = lab.pattern
    make = ["make", "-s", "-f", "mk/lab.mk", f"KIT={KIT}", f"PATTERN={pattern}"]
    subprocess.run(make + ["harness", "-j4"], cwd=KIT, check=True)
    subprocess.run(make + [f"LAB_SRC={lab_dir / lab.source}", f"BUILD={out}"], cwd=KIT, check=True)
    return pattern, out / f"{pattern}_lab"


class BenchError(Exception):
    """A benchmark could not be taken; status is the exit status to give (NO_DEVICE when there is no GPU)."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


def ladder(labs, sizes, out: Path) -> tuple:
    """Builds each lab folder's solution into out/LAB and times it at each size (in that order: every lab at the
    first size, then at the next); returns ({lab: (pattern, program)}, [(lab, bench line), ...]) and leaves every
    result line in out/ladder.jsonl. BenchError when a benchmark fails, with status NO_DEVICE when there is no GPU."""
    out.mkdir(parents=True, exist_ok=True)
    jsonl = out / "ladder.jsonl"
    jsonl.unlink(missing_ok=True)
    programs = {lab.name: build(lab, out / lab.name) for lab in labs}
    rows = []
    for size in sizes:
        for name, (pattern, program) in programs.items():
            before = jsonl.stat().st_size if jsonl.exists() else 0
            proc = subprocess.run([str(program), "--bench", size, PATTERNS[pattern].yardstick, "--quiet",
                                   "--result", str(jsonl)],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if proc.returncode == NO_DEVICE:
                raise BenchError("this machine has no CUDA device", NO_DEVICE)
            lines = []
            if jsonl.exists():
                with open(jsonl) as f:
                    f.seek(before)
                    lines = [json.loads(line) for line in f if line.strip()]
            bench = next((r for r in lines if r.get("kind") == "bench"), None)
            if proc.returncode != 0 or bench is None:
                raise BenchError(f"{proc.stdout}\n{name} at n={size}: the benchmark failed (exit {proc.returncode})")
            rows.append((name, bench))
    return programs, rows


# ---- figures from bench lines -------------------------------------------------------------------------------------

def scored(line: dict) -> float:
    """The speedup the grader scores: over the baseline kernel for the reductions, the fraction of CUB's speed for
    scan and compaction (in both, the bench line's yardstick time / the kernel's time)."""
    return float(line["speedup"])


def x_cub(line: dict) -> float:
    return float(line["cub_ms"]) / float(line["student_ms"])


def pct_copy(line: dict) -> float:
    return 100 * float(line["copy_ms"]) / float(line["student_ms"])


@dataclass
class Timing:
    """One harness process: a kernel (yours or the reference) of a lab timed at one size against its yardsticks.
    line is its bench result line when it wrote one; status and message are the run's (grader/run/run.py's Outcome)."""

    lab: str
    pattern: str
    kernel: str  # "yours" or "reference"
    size: str
    status: str
    message: str = ""
    line: dict | None = None

    @property
    def ok(self) -> bool:
        return self.status == "pass" and self.line is not None and self.line.get("status") == "pass"

    def record(self) -> dict:
        """The bench line with the lab and the kernel, for OUT/bench-LAB.jsonl."""
        return {"lab": self.lab, "kernel": self.kernel, "size": self.size, "status": self.status,
                **({"message": self.message} if not self.ok else {}), **(self.line or {})}


def cell(text) -> str:
    """Text for a Markdown table cell."""
    return str(text).replace("|", "/").replace("\n", " ")


def ladder_table(programs: dict, rows: list) -> str:
    """The reference ladder's table (tools/author/figures.py reads it back: keep the columns)."""
    device = rows[0][1]["device"] if rows else "?"
    table = [f"Reference ladder on {device} (sm {rows[0][1]['sm'] if rows else '?'}); ratios from one process each.",
             "", "| lab | n | x baseline | x CUB | % copy | solution ms | spread |", "|---|---|---|---|---|---|---|"]
    for name, r in rows:
        baseline = f"{r['speedup']:.2f}" if programs[name][0] == "reduce" else "-"
        table.append(f"| {name} | {format_size(r['n'])} "
                     f"| {baseline} | {x_cub(r):.2f} "
                     f"| {pct_copy(r):.0f} | {r['student_ms']:.4f} "
                     f"| {100 * r['spread']:.1f}% |")
    return "\n".join(table) + "\n"


def yours_table(timings: list, references: dict) -> str:
    """Your kernel beside the reference, size by size. references: {size: Timing or a committed row (dict)}."""
    out = ["| n | kernel | x baseline | x reference | x CUB | % copy | spread of the ratio |",
           "|---|---|---|---|---|---|---|"]
    for t in timings:
        if not t.ok:
            what = "FAIL" if t.status in ("pass", "fail") else t.status.upper()
            out.append(f"| {t.size} | {t.kernel} | {cell(what + ': ' + (t.message or 'no benchmark result'))} "
                       f"| | | | |")
            continue
        r = t.line
        base = f"{scored(r):.2f}" if t.pattern == "reduce" else "-"
        ref = references.get(t.size)
        versus = "-"
        if isinstance(ref, Timing) and ref.ok:
            versus = f"{scored(r) / scored(ref.line):.2f}"
        elif isinstance(ref, dict):
            versus = f"{scored(r) / ref['scored']:.2f}*"
        spread = r.get("speedup_spread", r.get("spread"))
        out.append(f"| {t.size} | {t.kernel} | {base} | {versus} | {x_cub(r):.2f} | {pct_copy(r):.0f} "
                   f"| {100 * float(spread):.1f}% |")
    return "\n".join(out) + "\n"


# ---- your kernel --------------------------------------------------------------------------------------------------

def submission_tag(submission: Path) -> str:
    """The folder name of a submission's bench output: `labs` for the kit's labs/, else its name and a hash of its
    full path (two folders of the same name never share builds or figures)."""
    submission = Path(submission).resolve()
    if submission == (KIT / "labs").resolve():
        return "labs"
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", submission.name) or "submission"
    return f"{name}-{hashlib.sha1(str(submission).encode()).hexdigest()[:8]}"


def shown(path) -> str:
    """path relative to the kit when inside it."""
    try:
        return str(Path(path).resolve().relative_to(KIT))
    except ValueError:
        return str(path)


def make_args(lab, submission: Path) -> str:
    """`LAB=03` and, for a submission other than labs/, `SUBMISSION=DIR`, for the commands suggested."""
    args = f"LAB={lab.name[:2]}"
    if Path(submission).resolve() != (KIT / "labs").resolve():
        args += f" SUBMISSION={shlex.quote(shown(submission))}"
    return args


def no_device_text(lab, submission: Path, sizes: list, source: Path) -> str:
    """What `make bench` would have done on a GPU, and the simulator command nearest to it: as typed in the lab's
    folder (mk/lab.mk sets PPL_LAB_FOLDER) or at the kit's root."""
    from grader.run.no_gpu import in_lab_folder
    sim = "make sim" if in_lab_folder() else f"make sim {make_args(lab, submission)}"
    yardsticks = PATTERNS[lab.pattern].yardstick_words
    return (f"make bench needs an NVIDIA GPU: this machine has none, so nothing was timed ({shown(source)} builds).\n"
            f"On a GPU it would time your kernel beside the reference solution at n = {', '.join(sizes)}, each in one "
            f"harness process against {yardsticks}, print the ratios (x baseline, x reference, x CUB, % of the "
            f"copy bandwidth) and draw the ladder with your kernel on it.\n"
            f"Nearest here, on the kit's CPU simulator:\n"
            f"  {sim}\n"
            f"It counts, per kernel and source line, warp instructions, SIMT efficiency, divergent branches, bank "
            f"conflicts and memory sectors: what makes the kernel fast or slow. The simulator measures no time; "
            f"make sim also prints an estimate on a named GPU from those counts (labelled as an estimate, never "
            f"points).")


def committed_reference(lab_name: str, size: str, path: Path = HANDOUT_LADDER) -> dict | None:
    """The reference's figures at size from the handouts' committed ladder (for a kit without solutions/):
    {"scored", "device"}, or None."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    for row in data.get("rows", []):
        if row.get("lab") == lab_name and row.get("n") == size:
            value = row.get("x_baseline") if row.get("x_baseline") is not None else row.get("x_cub")
            if value:
                return {"scored": float(value), "device": str(data.get("device", "?"))}
    return None


class YoursBench:
    """Benchmarks one submission's labs beside their references. The hooks are for tests:
    build_lab(kit, pattern, source, folder) -> grader.compile.build.BuildResult (the student's file);
    build_reference(lab_dir, out) -> (pattern, program) (raises on failure);
    run(program, args, timeout=, workdir=, cwd=, source=) -> grader.run.run.Outcome;
    check(object, pattern) -> grader.compile.static_check.Verdict."""

    def __init__(self, submission: Path, out: Path, *, kit: Path = KIT, log=print, build_lab=None,
                 build_harness=None, build_reference=build, run=None, check=None):
        from grader.compile import build as build_mod
        from grader.compile import static_check
        from grader.run.run import run_harness
        self.submission, self.out, self.kit, self.log = Path(submission), Path(out), Path(kit), log
        self.build_lab = build_lab or build_mod.build_lab
        self.build_harness = build_harness or build_mod.build_harness
        self.build_reference, self.run = build_reference, run or run_harness
        self.check = check or static_check.check_object
        self.tool_error = static_check.ToolError
        self.references = {}  # lab name -> reference program, built once

    def time(self, lab, kernel: str, program, size: str) -> Timing:
        workdir = self.out / "runs" / lab.name / f"{kernel}-{size.replace('^', '_')}"
        timeout = max(RUN_TIMEOUT, lab.performance.timeout or 0) if lab.performance else RUN_TIMEOUT
        outcome = self.run(program, ["--bench", size, PATTERNS[lab.pattern].yardstick], timeout=timeout,
                           workdir=workdir, cwd=self.kit, source=lab.source)
        return Timing(lab.name, lab.pattern, kernel, size, outcome.status, outcome.message, outcome.bench_line())

    def prebuild(self, labs) -> None:
        """Builds the reference solutions of labs side by side (each harness once first, so that no two builds make
        the same objects); raises BenchError when one does not build (a kit problem)."""
        todo = [lab for lab in labs if lab.name not in self.references]
        for lab in todo:
            if not (self.kit / "solutions" / lab.name).is_dir():
                self.references[lab.name] = None
        todo = [lab for lab in todo if lab.name not in self.references]
        if not todo:
            return
        for pattern in dict.fromkeys(lab.pattern for lab in todo):
            built = self.build_harness(self.kit, pattern)
            if not built.ok:
                raise BenchError(built.message, EXIT_BUILD)
        self.log(f"  building the reference solution{'s' if len(todo) > 1 else ''} of "
                 f"{', '.join(lab.name for lab in todo)}")
        with concurrent.futures.ThreadPoolExecutor(max(1, min(len(todo), os.cpu_count() or 1))) as pool:
            jobs = {lab.name: pool.submit(self.build_reference, self.kit / "solutions" / lab.name,
                                          self.kit / "build" / "bench" / lab.name) for lab in todo}
            for name, job in jobs.items():
                try:
                    self.references[name] = job.result()[1]
                except (subprocess.CalledProcessError, OSError) as e:
                    raise BenchError(f"the reference solution of {name} does not build (a kit problem): {e}",
                                     EXIT_BUILD) from None

    def reference_program(self, lab):
        """The reference solution's program (built once), or None where the kit has no solutions/. Raises
        BenchError when it does not build (a kit problem)."""
        self.prebuild([lab])
        return self.references[lab.name]

    def build_yours(self, lab):
        """Your lab's program, or an exit status (EXIT_BUILD, EXIT_FAIL for forbidden code) after saying why."""
        source = self.submission / lab.name / lab.source
        built = self.build_harness(self.kit, lab.pattern)
        if not built.ok:
            self.log(built.message)
            return EXIT_BUILD
        self.log(f"make bench: lab {lab.name}: building {shown(source)} as the grader does")
        built = self.build_lab(self.kit, lab.pattern, source, self.out / "build" / lab.name)
        if not built.ok:
            self.log(built.message)
            self.log(f"\n{shown(source)} does not build; fix the first error above (make check "
                     f"{make_args(lab, self.submission)} says more), then run make bench again.")
            return EXIT_BUILD
        try:
            verdict = self.check(built.object, lab.pattern)
        except self.tool_error as e:
            self.log(f"  (the grader's static checks could not run here: {e})")
        else:
            if not verdict.ok:
                self.log(f"FORBIDDEN: {lab.source} uses what the labs may not, so the grader gives this lab 0 "
                         f"points; it is not timed:")
                for finding in verdict.findings:
                    self.log(f"  {finding.message}")
                return EXIT_FAIL
        return built.program

    def bench_lab(self, lab, sizes: list, config, rungs: bool) -> int:
        """Times one lab (yours and the reference at each size, then the ladder's other rungs) and reports it."""
        program = self.build_yours(lab)
        if isinstance(program, int):
            return program
        timings, references, stopped = [], {}, None
        for size in sizes:
            if stopped is None:
                yours = self.time(lab, "yours", program, size)
            else:  # a kernel that hung or crashed would again, at a larger size: not run again
                yours = Timing(lab.name, lab.pattern, "yours", size, "not run", f"it stopped at {stopped} already")
            if yours.status == "no-device":
                self.log(no_device_text(lab, self.submission, sizes, self.submission / lab.name / lab.source))
                return NO_DEVICE
            if yours.status in ("timeout", "crash") and stopped is None:
                stopped = f"{size} ({yours.status})"
            timings.append(yours)
            if not self.references:  # a GPU is there: the references this run needs, built side by side
                self.prebuild([other for other in config.labs if other.name == lab.name or
                               (rungs and other.performance is not None)])
            reference = self.reference_program(lab)
            if reference is not None:
                ref = self.time(lab, "reference", reference, size)
                timings.append(ref)
                references[size] = ref
            elif committed_reference(lab.name, size):
                references[size] = committed_reference(lab.name, size)
        chart_size = lab.performance.bench if lab.performance and lab.performance.bench in sizes else sizes[-1]
        rung_timings = self.rungs(lab, chart_size, config) if rungs else []
        return self.report(lab, timings, references, rung_timings, chart_size, config)

    def rungs(self, lab, size: str, config) -> list:
        """The other labs' references at size (the ladder's rungs), in labs.toml's order."""
        found = []
        for other in config.labs:
            if other.name == lab.name or other.performance is None:
                continue
            program = self.reference_program(other)
            if program is not None:
                self.log(f"  timing the reference of {other.name} at {size} for the ladder")
                found.append(self.time(other, "reference", program, size))
        return found

    def report(self, lab, timings, references, rung_timings, chart_size, config) -> int:
        """Prints the table and the summary, writes the files and the chart; the exit status."""
        self.out.mkdir(parents=True, exist_ok=True)
        with open(self.out / f"bench-{lab.name}.jsonl", "w") as f:
            for t in timings + rung_timings:
                f.write(json.dumps(t.record()) + "\n")
        done = [t for t in timings + rung_timings if t.line]
        device = str(done[0].line.get("device", "?")) if done else "?"
        sm = str(done[0].line.get("sm", "?")) if done else "?"
        source = shown(self.submission / lab.name / lab.source)
        head = (f"make bench: lab {lab.name} on {device} (sm {sm}): yours ({source}) beside the reference solution. "
                f"Each row is one harness process timing the kernel interleaved with "
                f"{PATTERNS[lab.pattern].yardstick_words};"
                f" every figure is a ratio taken inside it.")
        committed = [r for r in references.values() if isinstance(r, dict)]
        notes = []
        if committed:
            notes.append(f"* x reference: this kit has no solutions/ (the student release), so the reference is the "
                         f"handouts' measurement on {committed[0]['device']} (handouts/figures/ladder.json), not "
                         f"this run's.")
        table = yours_table(timings, references)
        summary = self.summary(lab, timings, references, chart_size, config, device)
        svg = self.chart(lab, timings, references, rung_timings, chart_size, config, device)
        text = "\n".join([head, "", table.rstrip(), *notes, "", *summary, *svg]) + "\n"
        (self.out / f"bench-{lab.name}.md").write_text(text)
        self.log(text)
        self.log(f"(every result line: {shown(self.out / f'bench-{lab.name}.jsonl')})")
        bad_refs = [t for t in timings + rung_timings if t.kernel == "reference" and not t.ok]
        for t in bad_refs:
            self.log(f"the reference solution of {t.lab} failed at {t.size} ({t.status}: {t.message}): the GPU or "
                     f"the kit is broken, not your kernel")
        yours_ok = all(t.ok for t in timings if t.kernel == "yours")
        return 0 if yours_ok and not bad_refs else EXIT_FAIL

    def summary(self, lab, timings, references, size, config, device) -> list:
        """What the grader would make of your kernel at its size."""
        perf = lab.performance
        if perf is None:
            return []
        unit = "x of CUB" if perf.yardstick == "cub" else "x baseline"
        lower, full, calibrated = perf.thresholds_for(device)
        yours = next((t for t in timings if t.kernel == "yours" and t.size == size), None)
        lines = []
        if yours is not None and yours.ok:
            line = f"At {size}, the size the grader times: yours {scored(yours.line):.2f}{unit}"
            ref = references.get(size)
            if isinstance(ref, Timing) and ref.ok:
                line += (f", {scored(yours.line) / scored(ref.line):.2f}x the reference "
                         f"({scored(ref.line):.2f}{unit} in this run)")
            lines.append(line + ".")
        where = (f"on {calibrated}" if calibrated else
                 f"here (no thresholds are calibrated for {device}, so the defaults apply)")
        lines.append(f"The grader's thresholds {where}: no performance points at or below {lower:.2f}{unit}, all of "
                     f"them at {full:.2f}{unit}; make grade {make_args(lab, self.submission)} scores it (crediting "
                     f"a margin for timing noise).")
        return lines

    def chart(self, lab, timings, references, rung_timings, size, config, device) -> list:
        """Draws OUT/ladder-LAB.svg; the lines saying where it is, or why it is not."""
        from grader.report import charts
        columns = []
        for other in config.labs:
            if other.performance is None:
                continue
            column = charts.Column(other.name, other.performance.yardstick)
            ref = references.get(size) if other.name == lab.name else next(
                (t for t in rung_timings if t.lab == other.name), None)
            if isinstance(ref, Timing) and ref.ok:
                column.references["measured in this run"] = scored(ref.line)
            elif isinstance(ref, dict):
                column.references[f"{ref['device']} (handouts)"] = ref["scored"]
            if other.name == lab.name:
                yours = next((t for t in timings if t.kernel == "yours" and t.size == size), None)
                if yours is not None and yours.ok:
                    column.yours = scored(yours.line)
                else:
                    column.why_not = f"yours: {yours.status if yours else 'not run'}"
                column.lower, column.full, _ = other.performance.thresholds_for(device)
            if column.references or other.name == lab.name:
                columns.append(column)
        path = self.out / f"ladder-{lab.name}.svg"
        try:
            svg = charts.speedup_chart(columns, title=f"Lab {lab.name}: your kernel on the reference ladder",
                                       subtitle=f"{device}, n = {size}; make bench, every ratio from one process")
        except charts.ChartError as e:
            return [f"The ladder chart is not drawn: {e}."]
        path.write_text(svg)
        return [f"The ladder with your kernel on it: {shown(path)}"]


def bench_yours(labs, submission: Path, sizes: list, out: Path, *, rungs: bool = True, config=None, **hooks) -> int:
    """`make bench LAB=NN`: each of labs (grader.config Labs) from submission; the exit status."""
    if config is None:
        from grader.config import load_config
        config = load_config()
    bench = YoursBench(submission, out, **hooks)
    status = 0
    for k, lab in enumerate(labs):
        if k:
            bench.log("")
        try:
            code = bench.bench_lab(lab, sizes, config, rungs)
        except BenchError as e:
            bench.log(str(e))
            code = e.status
        if code == NO_DEVICE:
            return NO_DEVICE
        status = max(status, code)
    return status


# ---- the reference ladder -----------------------------------------------------------------------------------------

def ladder_chart(programs: dict, rows: list, out: Path) -> str:
    """build/bench/ladder.svg: every reference at the grader's size (or the largest measured), with the grader's
    thresholds for this GPU; the line saying where it is, or why it is not."""
    from grader.report import charts
    from grader.config import ConfigError, load_config
    try:
        config = load_config()
    except ConfigError as e:
        return f"(the ladder chart is not drawn: {e})"
    sizes = [format_size(r["n"]) for _, r in rows]
    bench_sizes = {lab.performance.bench for lab in config.labs if lab.performance}
    size = next((s for s in sizes if s in bench_sizes), sizes[-1] if sizes else "")
    device = str(rows[0][1].get("device", "?")) if rows else "?"
    columns = []
    for lab in config.labs:
        row = next((r for name, r in rows if name == lab.name and format_size(r["n"]) == size), None)
        if lab.performance is None or row is None:
            continue
        lower, full, _ = lab.performance.thresholds_for(device)
        columns.append(charts.Column(lab.name, lab.performance.yardstick, lower=lower, full=full,
                                     references={"measured in this run": scored(row)}))
    if not columns:
        return "(the ladder chart is not drawn: no lab measured)"
    try:
        svg = charts.speedup_chart(columns, title=f"The reference ladder on {device}",
                                   subtitle=f"n = {size}; make bench, every ratio from one process")
    except charts.ChartError as e:
        return f"(the ladder chart is not drawn: {e})"
    (out / "ladder.svg").write_text(svg)
    return f"The ladder chart: {shown(out / 'ladder.svg')}"


def reference_ladder(prefix: str, sizes: list, out: Path) -> int:
    labs = lab_dirs(KIT / "solutions", prefix)
    if not labs and not (KIT / "solutions").is_dir():
        print("make bench without LAB= times the reference solutions (the whole ladder), which this kit does not have "
              "(a student release). Time your own kernel on the ladder: make bench in a lab's folder, or "
              "make bench LAB=03", file=sys.stderr)
        return EXIT_BUILD
    if not labs:
        print(f"make bench: no reference solution in solutions/ matches {prefix!r}", file=sys.stderr)
        return EXIT_BUILD
    try:
        programs, rows = ladder(labs, sizes, out)
    except BenchError as e:
        if e.status == NO_DEVICE:
            print("make bench needs an NVIDIA GPU: this machine has no CUDA device, so nothing was timed. On a GPU "
                  "it times every reference solution against CUB and a copy (the reductions also against the "
                  "baseline) and draws the ladder.\nNearest here: make sim-compare, the simulator's counts of every "
                  "reference solution (or make sim LAB=03 for one lab).", file=sys.stderr)
        else:
            print(e, file=sys.stderr)
        return e.status
    text = ladder_table(programs, rows)
    (out / "ladder.md").write_text(text)
    print(text)
    print(f"(all figures: {shown(out / 'ladder.jsonl')})")
    print(ladder_chart(programs, rows, out))
    print("Your own kernel beside its reference: make bench LAB=03 (or make bench in its lab folder).")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", help=f"comma-separated sizes (elements); default {YOURS_SIZES} for your kernel, "
                                        f"{LADDER_SIZES} for the reference ladder")
    parser.add_argument("--lab", default="", help="the lab, by prefix (03, 03-sequential)")
    parser.add_argument("--submission", help="a folder shaped like labs/ whose kernel to time (labs: your work); "
                                             "without it, or with solutions, the reference ladder")
    parser.add_argument("--no-ladder", action="store_true", help="time your lab alone, not the other labs' "
                                                                 "references for the ladder")
    parser.add_argument("--out", type=Path, help="where the figures go (default build/bench, or build/bench/yours-"
                                                 "TAG for your kernel)")
    args = parser.parse_args(argv)
    submission = Path(args.submission) if args.submission else None
    if submission is not None and not submission.is_absolute():
        submission = (Path.cwd() / submission).resolve()
    if submission is None or submission.resolve() == (KIT / "solutions").resolve():
        sizes = (args.sizes or LADDER_SIZES).split(",")
        return reference_ladder(args.lab, sizes, args.out or KIT / "build" / "bench")
    if not submission.is_dir():
        print(f"make bench: SUBMISSION={args.submission}: no such folder", file=sys.stderr)
        return EXIT_BUILD
    from grader.config import ConfigError, load_config
    try:
        config = load_config()
    except ConfigError as e:
        print(f"make bench: {e}", file=sys.stderr)
        return EXIT_BUILD
    if not args.lab:
        print(f"make bench SUBMISSION=... needs a lab: make bench LAB=03 (the labs: "
              f"{', '.join(lab.name for lab in config.labs)})", file=sys.stderr)
        return EXIT_BUILD
    try:
        labs = config.select(args.lab)
    except ConfigError as e:
        print(f"make bench: {e}", file=sys.stderr)
        return EXIT_BUILD
    sizes = (args.sizes or YOURS_SIZES).split(",")
    out = args.out or KIT / "build" / "bench" / f"yours-{submission_tag(submission)}"
    return bench_yours(labs, submission, sizes, out, rungs=not args.no_ladder, config=config)


if __name__ == "__main__":
    sys.exit(main())
