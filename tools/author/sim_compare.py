"""`make sim-compare`: the kit's SIMT simulator's counts beside Nsight Compute's, for every reference solution.

    python3 -m tools.author.sim_compare [--labs 01,03] [--n 2^20] [--json FILE] [--markdown FILE] [--ncu-csv-dir DIR]
                                 [--simulator-only]

For each lab's reference solution (solutions/NN-...), one call of reduce()/scan()/compact() at one size n, on the
same data as `make profile` (tools/nsight.py): reductions on uniform floats, scans exclusive with Brent-Kung,
compaction with threshold 0. That call runs twice:

  simulator        the program built by mk/sim.mk runs on the CPU with PPL_SIM_REPORT=FILE; the counts of the
                   lab's kernels are read from that JSON report (sim/README.md, "What is counted")
  Nsight Compute   where `nvidia-smi -L` lists a GPU: the program built by mk/lab.mk runs under ncu (tools/nsight.py's
                   runner and CSV reader), a few counters per launch of the lab's kernels

and a table per lab puts the two side by side, summed over the launches of the call: metric | simulator |
Nsight Compute | ratio (Nsight Compute / simulator), followed by why the columns may differ (WHY). Only the
lab's own kernels count (those its .cu file defines), on both sides: the harness's (the trusted scan of lab 07, which
is CUB on the GPU and a plain scan on the simulator) are left out of both.

Without a GPU, or without ncu, the Nsight Compute column is "-" and the output says why; nothing is estimated. A
metric this ncu does not know is "-" too, with a note. --json writes everything (per kernel as well), --markdown the
tables for a note; --ncu-csv-dir keeps ncu's raw CSV of each lab.

Exit status: 0 every lab simulated (and profiled, where there is a GPU); 1 a lab failed to run or to profile; 2 a
lab does not build, or bad usage.
"""
import argparse
import concurrent.futures
import csv
import json
import math
import os
import re
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.compile import build as build_mod
from grader.config import lab_of, load_config
from grader.patterns import KIT, PATTERNS, lab_dirs, parse_size
from grader.patterns import select_labs as pick_labs
from grader.run.process import run_process
from grader.sim.simulator import build_harness_sim, build_lab_sim
from grader.sim.sim_target import sim_env
from tools.author.sim_table import (BLOCKS, LAUNCHES, METRICS, ROWS, THREADS, markdown_report, table_rows, text_table,
                                    totals, why_text)
from tools.student import nsight


EXIT_OK, EXIT_FAIL, EXIT_BUILD = 0, 1, 2
DEFAULT_N = "2^20"
SIM_TIMEOUT = 300.0
NCU_TIMEOUT = 180.0
NO_GPU = "no NVIDIA GPU here: Nsight Compute column not measured"

# ---- kernel names ----

def kernel_base_name(name: str) -> str:
    """A kernel's plain name from the simulator's (mangled: `_Z13reduce_kernelPfS_m`, `_ZN2ns6kernelILi8EEEvPi`) or
    Nsight Compute's (demangled: `reduce_kernel(const float *, float *, unsigned long)`, or already short)."""
    name = name.strip()
    m = re.match(r"_ZL?(N)?", name)
    if m:
        rest, base = name[m.end():], None
        while True:  # <length><identifier>, repeated inside N...E (namespaces), up to template arguments
            rest = rest[1:] if rest.startswith("L") else rest
            part = re.match(r"(\d+)", rest)
            if not part:
                break
            length, start = int(part[1]), len(part[1])
            base, rest = rest[start:start + length], rest[start + length:]
            if not m[1]:
                break
        if base:
            return base
    return nsight.kernel_base_name(name)


def match_kernels(sim_names, ncu_names) -> list:
    """[(base name, [simulator names], [Nsight Compute names])], in the order first seen (simulator first); a kernel
    seen on one side only has an empty list on the other."""
    table = {}
    for side, names in ((1, sim_names), (2, ncu_names)):
        for name in names:
            entry = table.setdefault(kernel_base_name(name), [[], []])
            if name not in entry[side - 1]:
                entry[side - 1].append(name)
    return [(base, sim, ncu) for base, (sim, ncu) in table.items()]


# ---- the simulator's side ----

def sim_kernel_counts(report: dict, kernels) -> dict:
    """{base name: counts summed over the report's kernels of that name} for the kernels named (all if None), and
    {name: [report names]} beside: (counts, names)."""
    counts, names = {}, {}
    for k in report.get("kernels", []):
        base = kernel_base_name(k.get("name", ""))
        if kernels is not None and base not in kernels:
            continue
        total = counts.setdefault(base, {})
        names.setdefault(base, []).append(k.get("name", ""))
        for key, value in k.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and key != "simt_efficiency":
                total[key] = total.get(key, 0) + value
    return counts, names


# ---- Nsight Compute's side ----

def _shape(text: str) -> int | None:
    """"(16384, 1, 1)" -> 16384; None if it is not such a triple."""
    numbers = re.findall(r"\d+", text or "")
    if len(numbers) != 3:
        return None
    return math.prod(int(x) for x in numbers)


def launch_shapes(text: str) -> dict:
    """{launch ID: (blocks, threads)} from the "Grid Size" and "Block Size" columns of ncu's CSV."""
    lines = text.splitlines()
    start = next((k for k, ln in enumerate(lines) if ln.startswith('"ID",')), None)
    if start is None:
        return {}
    shapes = {}
    for row in csv.DictReader([ln for ln in lines[start:] if ln.startswith('"')]):
        if row.get("ID") is None or row["ID"] in shapes:
            continue
        grid, block = _shape(row.get("Grid Size")), _shape(row.get("Block Size"))
        if grid is not None and block is not None:
            shapes[row["ID"]] = (grid, grid * block)
    return shapes


def ncu_kernel_counts(launches: list, shapes: dict, kernels, metrics) -> dict:
    """{base name: {metric: sum over its launches, or None when a launch lacks it}} for the kernels named (all if
    None), with LAUNCHES, and BLOCKS and THREADS where the CSV gave every launch's shape. metrics: those measured."""
    counts = {}
    for ln in launches:
        if kernels is not None and ln.kernel not in kernels:
            continue
        total = counts.setdefault(ln.kernel, {LAUNCHES: 0, BLOCKS: 0, THREADS: 0})
        total[LAUNCHES] += 1
        shape = shapes.get(ln.id)
        for key, value in ((BLOCKS, shape and shape[0]), (THREADS, shape and shape[1])):
            total[key] = None if value is None or total[key] is None else total[key] + value
        for name in metrics:
            value = ln.metrics.get(name)
            if name not in total:
                total[name] = value
            elif value is None or total[name] is None:
                total[name] = None
            else:
                total[name] += value
    return counts


# ---- the labs ----

@dataclass
class Lab:
    name: str
    pattern: str
    source: Path
    kernels: list
    notes: list = field(default_factory=list)
    sim: dict | None = None  # base name -> counts
    sim_names: dict = field(default_factory=dict)
    ncu: dict | None = None  # base name -> counts
    ncu_names: dict = field(default_factory=dict)
    sim_program: Path | None = None
    gpu_program: Path | None = None
    sim_seconds: float | None = None
    failed: int = 0  # the exit status this lab asks for


def select_labs(kit: Path, wanted: str | None) -> list:
    """The reference solutions named by wanted ("01,03", prefixes; all when None). ValueError naming an unknown one."""
    solutions = lab_dirs(Path(kit) / "solutions")
    if not wanted:
        chosen = solutions
    else:
        chosen = []
        for prefix in [w.strip() for w in wanted.split(",") if w.strip()]:
            try:
                names = pick_labs([d.name for d in solutions], prefix)
            except ValueError:
                names = []
            found = [d for d in solutions if d.name in names]
            if len(found) != 1:
                raise ValueError(f"LABS={prefix} matches {'no lab' if not found else 'several labs'} of solutions/ "
                                 f"({', '.join(d.name for d in solutions) or 'none'})")
            chosen += [d for d in found if d not in chosen]
    labs, config = [], load_config()
    for d in chosen:
        lab = lab_of(d, config)
        source = d / lab.source
        labs.append(Lab(d.name, lab.pattern, source, nsight.kernels_in(source.read_text(errors="replace"))))
    return labs


def call_args(pattern: str, n: str) -> list:
    """The harness arguments of the one call both sides run (make profile's case, its seed, quiet)."""
    return nsight.profile_args(pattern, n) + ["--seed", nsight.SEED, "--quiet"]


def simulate(kit: Path, lab: Lab, n: str, folder: Path, run=run_process, timeout: float = SIM_TIMEOUT) -> None:
    """Runs the call on the simulator (lab.sim_program) and fills lab.sim from its JSON report."""
    report_path = folder / "sim-report.json"
    report_path.unlink(missing_ok=True)
    start = time.monotonic()
    proc = run([str(lab.sim_program), *call_args(lab.pattern, n), "--in-process"], timeout=timeout, cwd=kit,
               env=sim_env(report=report_path), log_path=folder / "sim-output.log")
    lab.sim_seconds = time.monotonic() - start
    if proc.timed_out:
        lab.notes.append(f"the simulator did not finish within {timeout:g} s: simulator column not measured")
        lab.failed = EXIT_FAIL
        return
    if proc.returncode != 0:
        lab.notes.append(f"the simulated run exited {proc.returncode} (its output ends: "
                         f"{nsight._tail(proc.output, 5)!r})")
        lab.failed = EXIT_FAIL
    try:
        report = json.loads(report_path.read_text())
    except (OSError, ValueError) as e:
        lab.notes.append(f"no simulator report ({e}): simulator column not measured")
        lab.failed = EXIT_FAIL
        return
    lab.sim, lab.sim_names = sim_kernel_counts(report, set(lab.kernels) if lab.kernels else None)
    findings = report.get("findings") or []
    if findings:
        lab.notes.append(f"the simulator reported {len(findings)} finding(s) (races, uninitialized reads): "
                         + "; ".join(f"{f.get('kind')} at {f.get('where')}" for f in findings[:3]))


def gpu_present(run=subprocess.run) -> str | None:
    """The first GPU `nvidia-smi -L` lists ("GPU 0: NVIDIA H200 (UUID: ...)"), or None."""
    try:
        proc = run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    found = re.search(r"^GPU \d+: (.*?)(?: \(UUID.*)?$", proc.stdout, re.M)
    return found[1].strip() if found else None


def ncu_version(ncu: str, run=run_process) -> str | None:
    proc = run([ncu, "--version"], timeout=60.0)
    lines = [ln.strip() for ln in proc.output.splitlines() if ln.strip()]
    return lines[-1] if proc.returncode == 0 and lines else None


class Capture:
    """A run_process that keeps the output of its last call (nsight.profile_program parses only the metrics; the
    launch shapes and the raw CSV are read from the same output)."""

    def __init__(self, run):
        self.run, self.output = run, ""

    def __call__(self, argv, **kwargs):
        proc = self.run(argv, **kwargs)
        self.output = proc.output
        return proc


def measure_ncu(kit: Path, lab: Lab, n: str, ncu: str, metrics: list, run=run_process, csv_dir: Path | None = None,
                timeout: float = NCU_TIMEOUT) -> list:
    """Profiles the call with ncu and fills lab.ncu; returns the metrics that worked (for the next lab)."""
    notes = []
    capture = Capture(run)
    try:
        launches, metrics = nsight.profile_program(ncu, lab.gpu_program, call_args(lab.pattern, n), lab.kernels,
                                                    cwd=kit, metrics=metrics, notes=notes, run=capture,
                                                    timeout=timeout)
    except nsight.ProfileError as e:
        lab.notes += notes + [f"Nsight Compute column not measured: {e}"]
        lab.failed = max(lab.failed, EXIT_FAIL)
        return metrics
    lab.notes += notes
    if csv_dir is not None:
        csv_dir.mkdir(parents=True, exist_ok=True)
        (csv_dir / f"{lab.name}.csv").write_text(capture.output)
    wanted = set(lab.kernels) if lab.kernels else None
    lab.ncu = ncu_kernel_counts(launches, launch_shapes(capture.output), wanted, metrics)
    lab.ncu_names = {}
    for ln in launches:
        if wanted is None or ln.kernel in wanted:
            lab.ncu_names.setdefault(ln.kernel, [])
    if not lab.ncu:
        lab.notes.append(f"ncu profiled no launch of {', '.join(lab.kernels) or 'the lab'}'s kernels: Nsight Compute "
                         "column empty")
    missing = [m for m in METRICS if m not in metrics]
    if missing:
        lab.notes.append(f"not measured by this ncu, shown as -: {', '.join(missing)}")
    return metrics


def lab_report(lab: Lab) -> dict:
    sim_total, ncu_total = totals(lab.sim), totals(lab.ncu)
    kernels = []
    for base, sim_names, _ in match_kernels(
            [n for names in lab.sim_names.values() for n in names], list((lab.ncu or {}).keys())):
        sim_counts = (lab.sim or {}).get(base)
        ncu_counts = (lab.ncu or {}).get(base)
        kernels.append({"kernel": base, "simulator_names": sim_names,
                        "simulator": sim_counts, "ncu": ncu_counts,
                        "rows": table_rows(sim_counts, ncu_counts)})
        if lab.sim is not None and lab.ncu is not None and (sim_counts is None) != (ncu_counts is None):
            side = "the simulator" if sim_counts is not None else "Nsight Compute"
            lab.notes.append(f"{base} was seen by {side} only")
    return {"lab": lab.name, "pattern": lab.pattern, "call": PATTERNS[lab.pattern].call,
            "what": PATTERNS[lab.pattern].bench_words,
            "source": str(lab.source.relative_to(KIT)) if lab.source.is_relative_to(KIT) else str(lab.source),
            "kernels": kernels, "simulator_seconds": lab.sim_seconds,
            "rows": table_rows(sim_total, ncu_total), "notes": list(lab.notes)}


# ---- main ----

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--labs", help="comma-separated labs of solutions/ (prefixes: 01,03); default every one")
    p.add_argument("--n", default=DEFAULT_N, help="elements in the call (default %(default)s)")
    p.add_argument("--json", help="write everything as JSON to this file")
    p.add_argument("--markdown", help="write the tables as Markdown to this file")
    p.add_argument("--ncu-csv-dir", help="keep ncu's raw CSV output, one LAB.csv per lab, in this folder")
    p.add_argument("--simulator-only", action="store_true", help="do not look for a GPU: the simulator column only")
    p.add_argument("--build-dir", help="where the programs are built (default build/sim-compare)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="labs built and simulated at once")
    return p.parse_args(argv)


def _build_and_simulate(kit, lab, n, root, want_gpu, run):
    """One lab's CPU work: its simulator build and run, and its GPU build (when wanted)."""
    folder = root / "sim" / lab.name
    built = build_lab_sim(kit, lab.pattern, lab.source, folder)
    if not built.ok:
        lab.notes.append(f"does not build for the simulator: {built.message}")
        lab.failed = EXIT_BUILD
    else:
        lab.sim_program = built.program
        simulate(kit, lab, n, folder, run=run)
    if want_gpu:
        built = build_mod.build_lab(kit, lab.pattern, lab.source, root / "gpu" / lab.name)
        if built.ok:
            lab.gpu_program = built.program
        else:
            lab.notes.append(f"does not build for the GPU: {built.message}")
            lab.failed = EXIT_BUILD


def _build_harnesses(kit, patterns, want_gpu) -> list:
    """Each pattern's harness objects for the simulator (and the GPU), one make at a time per makefile (the patterns
    share objects); the simulator's library too, before labs are built side by side. Messages of failures."""
    def sim_side():
        errors = []
        lib = kit / "build" / "sim" / "lib" / "libpplsim.a"
        proc = run_process(build_mod.make_argv(kit, patterns[0], target=str(lib), makefile="sim.mk",
                                               jobs=os.cpu_count() or 1), timeout=600.0, cwd=kit)
        if proc.returncode != 0:
            errors.append("the simulator's library does not build:\n" + nsight._tail(proc.output))
        for pattern in patterns:
            result = build_harness_sim(kit, pattern)
            if not result.ok:
                errors.append(result.message)
        return errors

    def gpu_side():
        return [r.message for r in (build_mod.build_harness(kit, p) for p in patterns) if not r.ok]

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(sim_side)] + ([pool.submit(gpu_side)] if want_gpu else [])
        return [m for f in futures for m in f.result()]


def main(argv=None, *, kit: Path = KIT, out=None, run=run_process, gpu_probe=gpu_present,
         ncu_finder=nsight.find_ncu) -> int:
    """As from the command line; returns the exit status. Keyword arguments are hooks for tests: run
    (grader.run.process.run_process: the simulated runs and ncu), gpu_probe (the GPU's name or None) and ncu_finder."""
    out = out or sys.stdout
    args = parse_args(argv)
    kit = Path(kit)
    try:
        labs = select_labs(kit, args.labs)
    except ValueError as e:
        print(f"make sim-compare: {e}", file=sys.stderr)
        return EXIT_BUILD
    if not labs:
        print("make sim-compare: no reference solutions in this kit (solutions/)", file=sys.stderr)
        return EXIT_BUILD
    root = Path(args.build_dir) if args.build_dir else kit / "build" / "sim-compare"

    gpu = {"measured": False, "name": None, "ncu": None, "ncu_version": None, "reason": None}
    gpu_name = None if args.simulator_only else gpu_probe()
    ncu = None
    if args.simulator_only:
        gpu["reason"] = "--simulator-only: Nsight Compute column not measured"
    elif gpu_name is None:
        gpu["reason"] = NO_GPU
    else:
        ncu = ncu_finder()
        gpu["name"] = gpu_name
        if ncu is None:
            gpu["reason"] = "Nsight Compute column not measured: " + nsight.NCU_MISSING
        else:
            gpu.update(measured=True, ncu=str(ncu), ncu_version=ncu_version(ncu, run=run))
    want_gpu = ncu is not None

    start = time.monotonic()
    patterns = list(dict.fromkeys(lab.pattern for lab in labs))
    print(f"building {len(labs)} reference solution(s) for the simulator"
          f"{' and the GPU' if want_gpu else ''} in {nsight.shown(root)} ...", file=out, flush=True)
    errors = _build_harnesses(kit, patterns, want_gpu)
    if errors:
        print("\n".join(errors), file=out)
        return EXIT_BUILD
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for f in [pool.submit(_build_and_simulate, kit, lab, args.n, root, want_gpu, run) for lab in labs]:
            f.result()
    print(f"built and simulated in {time.monotonic() - start:.1f} s", file=out, flush=True)

    metrics = list(METRICS)
    for lab in labs:
        if want_gpu and lab.gpu_program is not None:
            print(f"profiling {lab.name} with ncu ...", file=out, flush=True)
            metrics = measure_ncu(kit, lab, args.n, ncu, metrics, run=run,
                                  csv_dir=Path(args.ncu_csv_dir) if args.ncu_csv_dir else None)
            if lab.ncu is None and any("performance counters" in note for note in lab.notes):
                want_gpu = False  # the next labs would fail the same way
                gpu.update(measured=False, reason="Nsight Compute column not measured: " + nsight.NCU_PERMISSION)

    report = {"n": args.n, "size": parse_size(args.n), "gpu": gpu, "labs": [lab_report(lab) for lab in labs],
              "why": {row.key: row.why for row in ROWS}, "seconds": round(time.monotonic() - start, 1)}
    print(file=out)
    if not gpu["measured"] or gpu["reason"]:
        print(f"note: {gpu['reason']}", file=out)
    for lab in report["labs"]:
        kernels = ", ".join(k["kernel"] for k in lab["kernels"]) or "none"
        took = f"; simulated in {lab['simulator_seconds']:.1f} s" if lab["simulator_seconds"] is not None else ""
        print(f"\n{lab['lab']}: one {lab['call']} call, n = {args.n} ({lab['what']}); kernels: {kernels}{took}",
              file=out)
        print(text_table(lab["rows"]), file=out)
        for note in lab["notes"]:
            print(textwrap.fill(f"note: {note}", width=112, subsequent_indent="      "), file=out)
    print("\n" + why_text(), file=out)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(markdown_report(report))
    return max([lab.failed for lab in labs] + [EXIT_OK])


if __name__ == "__main__":
    sys.exit(main())
