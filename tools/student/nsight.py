"""`make profile LAB=03`: Nsight Compute's view of your lab's kernels beside the previous stage's reference.

    python3 -m tools.student.nsight --lab 03 [--submission labs|solutions|DIR] [--n 2^24]

Builds the lab as the grader does (and the reference solution it is compared with), checks that it runs, then
profiles one call of reduce()/scan()/compact() of each with Nsight Compute (`ncu`) at one size: reductions on
uniform floats, scans exclusive with Brent-Kung, compaction with threshold 0. A few metrics per kernel launch are
collected and summed or averaged over the launches of that one call, then printed side by side, each with a line
saying what it means:

  time and DRAM traffic     gpu__time_duration.sum, dram__bytes_read.sum (bandwidth = bytes / time)
  shared-memory banks       l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum
  issued work              smsp__inst_executed.sum (warp instructions issued: the idle lanes of a divergent
                            warp still cost its issue slots)
  SIMT efficiency           smsp__thread_inst_executed_pred_on_per_inst_executed.ratio (threads per warp
                            instruction not predicated off: a divergent `if` the compiler turns into predicated
                            code still idles lanes)
  global load coalescing    l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / l1tex__t_requests_..._op_ld.sum

The comparison: the reference solution of the previous lab of the same pattern (lab 03 against lab 02's, lab 08
against lab 06's); a lab that starts its pattern (01, 06, 07) is compared with its own reference solution (for lab
01 that is the baseline kernel the grader times against).

ncu is looked for in $NCU, on PATH, in /usr/local/cuda/bin and in /opt/nvidia/nsight-compute/*/. Clocks are left as
the card runs them (--clock-control none). Exit status: 0 profiled; 1 the lab hangs or profiling failed; 2 the lab
does not compile, ncu is missing or cannot read the GPU's counters, or bad usage; 77 no CUDA device here (it says
what it would have done and which simulator commands come nearest, grader/run/no_gpu.py; through make, 77 reads "Error
77" and make itself exits 2).
"""
import argparse
import csv
import glob
import math
import os
import re
import shutil
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from grader.compile import build as build_mod
from grader.run import no_gpu
from grader.run.no_gpu import shown
from grader.config import ConfigError, lab_of, load_config
from grader.patterns import KIT, PATTERNS, lab_dirs, parse_size, select_labs
from grader.run.process import run_process
from grader.run.run import run_harness

EXIT_OK, EXIT_FAIL, EXIT_TOOL, EXIT_NO_DEVICE = 0, 1, 2, 77
DEFAULT_N = "2^24"
SEED = "1"  # the same input for both columns
RUN_TIMEOUT = 60.0
NCU_TIMEOUT = 300.0
MAX_LAUNCHES = 64  # a safety bound: one call launches a handful of kernels



def profile_args(pattern: str, n: str) -> list:
    """The one case a pattern's harness runs under the profiler: the benchmark's case (grader/patterns.py) at n."""
    return ["--n", n, *PATTERNS[pattern].bench_case]


TIME = "gpu__time_duration.sum"
DRAM_BYTES = "dram__bytes_read.sum"
DRAM_RATE = "dram__bytes_read.sum.per_second"
BANK_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
BANK_ST = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
THREADS_PER_INST = "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio"
INST = "smsp__inst_executed.sum"
GLOBAL_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
# Left out after a run on an H200 (2026-11-22) gave figures that contradict the kernels: wavefronts per shared load
# (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / smsp__inst_executed_op_shared_ld.sum came out at 0.12,
# below the 1 every load needs) and smsp__sass_average_branch_targets_threads_uniform.pct (0 % for lab 03's
# convergent tree, 100 % for lab 02's divergent one).
METRICS = [TIME, DRAM_BYTES, DRAM_RATE, BANK_LD, BANK_ST, THREADS_PER_INST, INST, GLOBAL_SECTORS, GLOBAL_REQUESTS]


# ---- finding ncu ----

def find_ncu(env=None, which=shutil.which, globber=glob.glob) -> str | None:
    """The ncu to use: $NCU, then ncu on PATH, /usr/local/cuda/bin/ncu, the newest /opt/nvidia/nsight-compute/*/ncu,
    /usr/local/cuda-*/bin/ncu and the toolkits' nsight-compute-* folders. None when there is none."""
    env = os.environ if env is None else env
    if env.get("NCU"):
        return env["NCU"] if os.access(env["NCU"], os.X_OK) else None
    found = which("ncu")
    if found:
        return found
    def version_key(path):
        return [int(x) for x in re.findall(r"\d+", path)]
    for pattern in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda-*/bin/ncu",
                    "/usr/local/cuda*/nsight-compute*/ncu", "/usr/local/NVIDIA-Nsight-Compute*/ncu"):
        candidates = sorted((p for p in globber(pattern) if os.access(p, os.X_OK)), key=version_key, reverse=True)
        if candidates:
            return candidates[0]
    return None


NCU_MISSING = ("make profile needs Nsight Compute (ncu), and it is not installed here: not on PATH, not in "
               "/usr/local/cuda/bin, not in /opt/nvidia/nsight-compute/*/. It comes with the CUDA toolkit (package "
               "nsight-compute) or from developer.nvidia.com/nsight-compute; or point NCU=/path/to/ncu at it.")
NCU_PERMISSION = ("ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM): profile as root, or let "
                  "every user profile (the nvidia driver option NVreg_RestrictProfilingToAdminUsers=0; see "
                  "developer.nvidia.com/ERR_NVGPUCTRPERM).")


# ---- reading ncu's CSV ----

SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30,
         "Ti": 2.0 ** 40}
TIME_UNITS = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0, "ns": 1e-9, "us": 1e-6,
              "ms": 1e-3, "s": 1.0}


def _unit_scale(unit: str) -> float:
    """The factor that takes a value in one unit word to the base unit: "Mbyte" 1e6, "usecond" 1e-6, "Ksector" 1e3,
    "%" 1, "" 1. Unknown words count as base units."""
    unit = unit.strip()
    if unit in TIME_UNITS:
        return TIME_UNITS[unit]
    m = re.fullmatch(r"(Ki|Mi|Gi|Ti|K|M|G|T)([a-z][a-z_]*)", unit)
    if m:
        return SCALE[m[1]]
    return 1.0


def to_base_units(value: float, unit: str) -> float:
    """value in base units (bytes, seconds, bytes per second, counts): "Gbyte/second" scales by 1e9, "usecond" by
    1e-6. ncu prints base units with --print-units base; this is for an ncu that scaled them anyway."""
    if "/" in unit:
        num, den = unit.split("/", 1)
        return value * _unit_scale(num) / _unit_scale(den)
    return value * _unit_scale(unit)


def parse_value(text: str) -> float | None:
    """A metric value: "1,234,567" (thousands separators), "12.5", "n/a" (the metric does not apply: None)."""
    text = text.strip().replace(",", "")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def kernel_base_name(name: str) -> str:
    """"void reduce_kernel<256>(const float *, float *, unsigned long)" -> "reduce_kernel"."""
    name = re.sub(r"\(.*$", "", name.strip(), flags=re.S)
    name = re.sub(r"<.*$", "", name, flags=re.S).strip()
    name = name.split()[-1] if name.split() else name
    return name.split("::")[-1]


@dataclass
class Launch:
    """One profiled kernel launch: its ID in ncu's report, kernel name (base) and metric values in base units."""

    id: str
    kernel: str
    metrics: dict = field(default_factory=dict)


def parse_ncu_csv(text: str) -> list:
    """The launches in ncu's `--csv` output (the details page: one row per launch and metric, with columns "ID",
    ..., "Kernel Name", ..., "Metric Name", "Metric Unit", "Metric Value"), in report order. Lines before the header
    (the program's own output, ==PROF== lines) and after the rows are ignored."""
    lines = text.splitlines()
    start = next((k for k, ln in enumerate(lines) if ln.startswith('"ID",')), None)
    if start is None:
        return []
    rows = [ln for ln in lines[start:] if ln.startswith('"')]
    reader = csv.DictReader(rows)
    launches = {}
    for row in reader:
        if not row.get("Metric Name") or row.get("ID") is None:
            continue
        launch = launches.setdefault(row["ID"], Launch(row["ID"], kernel_base_name(row.get("Kernel Name") or "")))
        value = parse_value(row.get("Metric Value") or "")
        if value is not None:
            value = to_base_units(value, row.get("Metric Unit") or "")
        launch.metrics[row["Metric Name"]] = value
    return list(launches.values())


# ---- one call's figures from its launches ----

def _sum(launches, name):
    values = [ln.metrics.get(name) for ln in launches]
    values = [v for v in values if v is not None]
    return sum(values) if values else None


def _weighted(launches, name, weight):
    """The average of name over the launches, weighted by the metric weight where every launch has it."""
    pairs = [(ln.metrics.get(name), ln.metrics.get(weight)) for ln in launches]
    pairs = [(v, w) for v, w in pairs if v is not None]
    if not pairs:
        return None
    if all(w is not None for _, w in pairs) and sum(w for _, w in pairs) > 0:
        return sum(v * w for v, w in pairs) / sum(w for _, w in pairs)
    return sum(v for v, _ in pairs) / len(pairs)


def _ratio(a, b):
    if a is None or b is None:
        return None
    return a / b if b > 0 else math.nan  # nan: nothing to divide (no such requests at all)


def summarize(launches: list) -> dict:
    """The figures of one call, over all its launches: sums of counts and times, ratios of sums, and the per-launch
    ratios averaged with the right weights (threads per instruction by instructions)."""
    seconds = _sum(launches, TIME)
    dram = _sum(launches, DRAM_BYTES)
    if dram is not None and seconds:
        bandwidth = dram / seconds
    else:
        bandwidth = _weighted(launches, DRAM_RATE, TIME)
    return {
        "time": seconds,
        "dram_bytes": dram,
        "bandwidth": bandwidth,
        "bank_ld": _sum(launches, BANK_LD),
        "bank_st": _sum(launches, BANK_ST),
        "warp_insts": _sum(launches, INST),
        "threads_per_inst": _weighted(launches, THREADS_PER_INST, INST),
        "sectors_per_request": _ratio(_sum(launches, GLOBAL_SECTORS), _sum(launches, GLOBAL_REQUESTS)),
    }


def kernel_counts(launches: list) -> str:
    """"reduce_kernel x3" or "count_kernel x1, scatter_kernel x1"."""
    counts = {}
    for ln in launches:
        counts[ln.kernel] = counts.get(ln.kernel, 0) + 1
    return ", ".join(f"{k} x{c}" for k, c in counts.items()) or "no launches"


# ---- the table ----

def _count(v):
    return f"{v:,.0f}"


def _fixed(digits, suffix=""):
    return lambda v: f"{v:.{digits}f}{suffix}"


ROWS = [  # key, label, format, explanation
    ("time", "GPU time, all launches", lambda v: f"{v * 1e3:.3f} ms",
     "the kernels' summed duration in one call, under the profiler (make grade times it properly)"),
    ("bandwidth", "DRAM read bandwidth", lambda v: f"{v / 1e9:,.0f} GB/s",
     "bytes read from DRAM per second of kernel time: a memory-bound kernel should come near the copy bandwidth "
     "that make bench measures (lab 05 does)"),
    ("dram_bytes", "DRAM bytes read", lambda v: f"{v / 1e6:,.1f} MB",
     "the least is the input itself, once ({input_mb} MB here); more means data read twice"),
    ("bank_ld", "bank conflicts, shared loads", _count,
     "extra shared-memory passes Nsight Compute puts down to bank conflicts (lanes of a warp asking one of the 32 "
     "banks for different words). It also counts some passes that are not conflicts, so compare the columns rather "
     "than read one alone; the handout of lab 03 works out which accesses truly conflict"),
    ("bank_st", "bank conflicts, shared stores", _count, "the same for stores to shared memory"),
    ("warp_insts", "warp instructions issued", _count,
     "instructions the warps issued, each costing an issue slot however few of its 32 lanes work: lab 02 runs every "
     "step of the tree in every warp, lab 03 leaves whole warps out of the later steps, so it issues fewer"),
    ("threads_per_inst", "working threads per warp inst.", _fixed(1, " of 32"),
     "lanes not predicated off, averaged over every instruction issued (SIMT efficiency). Read it with the row "
     "above: a kernel that stops issuing for idle warps can average fewer lanes (lab 03's last five steps run in "
     "one partly idle warp) while doing much less work in all"),
    ("sectors_per_request", "sectors per global load", _fixed(2),
     "32-byte sectors fetched per warp-wide global load: 4 is ideal for 4-byte loads (128 contiguous bytes), 16 "
     "for float4/int4 loads (labs 05, 06); more means scattered, uncoalesced addresses"),
]


EXPLANATION_WIDTH = 112


def format_cell(key: str, value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and math.isnan(value):
        return "none"  # e.g. wavefronts per shared load of a kernel with no shared loads
    fmt = next(f for k, _, f, _ in ROWS if k == key)
    return fmt(value)


def side_by_side(columns: list, *, input_bytes: float | None = None, width: int = 16) -> str:
    """The table: one row per metric, one column per (heading, summary dict), each row followed by its explanation.
    Metrics no column has are left out."""
    label_width = max(len(label) for _, label, _, _ in ROWS) + 2
    head = " " * label_width + "".join(f"{h:>{width}}" for h, _ in columns)
    out = [head]
    for key, label, _, explanation in ROWS:
        cells = [format_cell(key, summary.get(key)) for _, summary in columns]
        if all(c == "-" for c in cells):
            continue
        out.append(f"{label:<{label_width}}" + "".join(f"{c:>{width}}" for c in cells))
        text = explanation.replace("{input_mb}", f"{input_bytes / 1e6:,.1f}" if input_bytes else "n x 4 bytes")
        out.append(textwrap.fill(text, width=EXPLANATION_WIDTH, initial_indent="    ", subsequent_indent="    "))
    return "\n".join(out)


# ---- running ncu ----

def ncu_argv(ncu: str, metrics: list, program, args: list, kernels: list | None) -> list:
    """The ncu command line: CSV, base units, the metrics, clocks as the card runs them, every process, only the
    named kernels (when known), at most MAX_LAUNCHES launches."""
    argv = [ncu, "--csv", "--print-units", "base", "--metrics", ",".join(metrics), "--clock-control", "none",
            "--target-processes", "all", "--launch-count", str(MAX_LAUNCHES)]
    if kernels:
        argv += ["-k", "regex:^(" + "|".join(re.escape(k) for k in kernels) + ")$"]
    return argv + [str(program), *args]


def kernels_in(source_text: str) -> list:
    """The names of the __global__ functions a lab file defines (comments stripped first)."""
    text = re.sub(r"/\*.*?\*/", " ", source_text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    names = re.findall(r"__global__\s+(?:void\s+)?(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:void\s+)?([A-Za-z_]\w*)\s*\(",
                       text)
    return list(dict.fromkeys(n for n in names if n not in ("void", "__launch_bounds__")))


def unknown_metrics(output: str, metrics: list) -> list:
    """The metrics an ncu error message names (an ncu that does not know them)."""
    errors = "\n".join(ln for ln in output.splitlines() if "ERROR" in ln or "rror" in ln)
    full = [m for m in metrics if re.search(re.escape(m) + r"(?![A-Za-z0-9_.])", errors)]
    if full:
        return full
    # else the base names (dram__bytes_read), each not followed by more of a longer name
    return [m for m in metrics if re.search(re.escape(m.split(".")[0]) + r"(?![A-Za-z0-9_])", errors)]


def query_known(ncu: str, metrics: list, run=run_process) -> list | None:
    """The metrics whose base name `ncu --query-metrics` lists for this GPU; None if the listing cannot be read."""
    proc = run([ncu, "--query-metrics"], timeout=120.0)
    if proc.returncode != 0:
        return None
    names = set(re.findall(r"^\s*([a-z0-9]+__[a-z0-9_]+)", proc.output, re.M))
    if len(names) < 20:
        return None
    return [m for m in metrics if m.split(".")[0] in names]


class ProfileError(Exception):
    """Profiling could not be done; status is the exit status to give."""

    def __init__(self, message, status=EXIT_FAIL):
        super().__init__(message)
        self.status = status


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join([ln for ln in text.splitlines() if ln.strip()][-lines:])


def profile_program(ncu: str, program, args: list, kernels: list, *, cwd, metrics: list, notes: list,
                    run=run_process, timeout: float = NCU_TIMEOUT) -> tuple:
    """Runs the program under ncu and returns (its launches of the named kernels, the metrics that worked). Metrics
    this ncu does not know are dropped (with a note in notes) and the run is tried again; when no launch of the
    named kernels was profiled, every kernel is."""
    metrics = list(metrics)
    for attempt in range(3):
        proc = run(ncu_argv(ncu, metrics, program, args, kernels), timeout=timeout, cwd=cwd)
        if proc.timed_out:
            raise ProfileError(f"ncu did not finish within {timeout:g} s")
        if "ERR_NVGPUCTRPERM" in proc.output:
            raise ProfileError(NCU_PERMISSION, EXIT_TOOL)
        launches = parse_ncu_csv(proc.output)
        if launches:
            if kernels:
                wanted = [ln for ln in launches if ln.kernel in kernels]
                launches = wanted or launches
            return launches, metrics
        if kernels and "No kernels were profiled" in proc.output:
            notes.append(f"no launch of {', '.join(kernels)} was seen under ncu; every kernel was profiled instead")
            kernels = []
            continue
        bad = unknown_metrics(proc.output, metrics)
        if not bad and attempt == 0:
            known = query_known(ncu, metrics, run=run)
            bad = [m for m in metrics if known is not None and m not in known]
        if bad and len(bad) < len(metrics):
            notes.append(f"this ncu does not know {', '.join(bad)}: left out")
            metrics = [m for m in metrics if m not in bad]
            continue
        break
    raise ProfileError(f"ncu gave no measurements (exit status {proc.returncode}); its output ends:\n"
                       + _tail(proc.output))


# ---- labs ----

def kit_labs(kit: Path) -> list:
    return lab_dirs(kit / "labs") or lab_dirs(kit / "solutions")


def reference_lab(lab_name: str, kit: Path) -> tuple:
    """(the solutions/ folder to compare lab_name with, why): the previous lab of the same pattern, or the lab's
    own reference solution when it is the first of its pattern. (None, why) when solutions/ lacks it."""
    solutions = lab_dirs(kit / "solutions")
    by_name = {d.name: d for d in solutions}
    if lab_name not in by_name:
        return None, "no reference solutions in this kit (solutions/): only your kernel is profiled"
    config = load_config()
    pattern = lab_of(by_name[lab_name], config).pattern
    before = [d for d in solutions if d.name < lab_name and lab_of(d, config).pattern == pattern]
    if before:
        return before[-1], f"the previous stage's reference (solutions/{before[-1].name})"
    if lab_name.startswith("01"):
        return by_name[lab_name], "lab 01's own reference: the baseline kernel the grader times you against"
    return by_name[lab_name], (f"lab {lab_name[:2]}'s own reference (no earlier {pattern} lab to compare with)")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lab", help="the lab: its number or name (03, 03-sequential); exactly one")
    p.add_argument("--submission", default="labs", help="a folder shaped like labs/ (default: labs)")
    p.add_argument("--n", default=DEFAULT_N, help="elements in the profiled call (default %(default)s)")
    p.add_argument("--build-dir", help="where the programs are built (default: build/profile)")
    return p.parse_args(argv)


def main(argv=None, *, kit: Path = KIT, out=None, build=build_mod.build_lab, build_harness=build_mod.build_harness,
         run_check=run_harness, run=run_process, ncu_finder=find_ncu) -> int:
    """Runs the profile as from the command line and returns its exit status. The keyword arguments are hooks for
    tests: build and build_harness (grader.compile.build), run_check (grader.run.run.run_harness, the plain run before
    profiling), run (grader.run.process.run_process, for ncu) and ncu_finder (find_ncu)."""
    out = out or sys.stdout
    args = parse_args(argv)
    kit = Path(kit)
    labs = kit_labs(kit)
    names = ", ".join(d.name for d in labs)
    if not args.lab:
        print(f"make profile needs a lab: make profile LAB=03 (the labs: {names})", file=sys.stderr)
        return EXIT_TOOL
    try:
        chosen = [d for d in labs if d.name in select_labs([d.name for d in labs], args.lab)]
    except ValueError:
        chosen = []
    if len(chosen) != 1:
        print(f"make profile: LAB={args.lab} matches {'no lab' if not chosen else 'several labs'}; name one of "
              f"{names}", file=sys.stderr)
        return EXIT_TOOL
    lab = chosen[0]
    submission = Path(args.submission)
    try:
        facts = lab_of(lab)
    except ConfigError as e:
        print(f"make profile: {e}", file=sys.stderr)
        return EXIT_TOOL
    pattern, source_name = facts.pattern, facts.source
    source = submission / lab.name / source_name
    case_args = profile_args(pattern, args.n) + ["--seed", SEED, "--quiet"]
    call, words = PATTERNS[pattern].call, PATTERNS[pattern].bench_words
    build_root = Path(args.build_dir) if args.build_dir else kit / "build" / "profile"
    ref_dir, ref_why = reference_lab(lab.name, kit)

    harness = build_harness(kit, pattern)
    if not harness.ok:
        print(harness.message, file=out)
        return EXIT_TOOL
    built = build(kit, pattern, source, build_root / "yours" / lab.name)
    if not built.ok:
        print(built.message, file=out)
        print(f"\n{source_name} does not build: make check LAB={lab.name[:2]} shows the errors too.", file=out)
        return EXIT_TOOL
    ref_built = None
    if ref_dir is not None:
        ref_built = build(kit, pattern, ref_dir / source_name, build_root / "reference" / ref_dir.name)
        if not ref_built.ok:
            print(ref_built.message, file=out)
            print(f"\nthe reference solution {ref_dir.name} does not build: a kit problem", file=out)
            return EXIT_TOOL

    # a plain run first: is there a GPU, and does the kernel finish (a hang under ncu would take ages)?
    outcome = run_check(built.program, profile_args(pattern, args.n) + ["--seed", SEED],
                        timeout=RUN_TIMEOUT, workdir=build_root / "yours" / lab.name / "run", cwd=kit,
                        source=source_name)
    if outcome.status == "no-device":
        print(f"{source_name} builds.\n{no_gpu.message('profile', lab.name, submission)}", file=out)
        return EXIT_NO_DEVICE
    if outcome.status in ("timeout", "crash", "cuda-error", "harness-error"):
        print(f"your {call} does not finish cleanly at n = {args.n}: {outcome.message}\n"
              f"Fix that first: make check LAB={lab.name[:2]}", file=out)
        return EXIT_FAIL
    notes = []
    if not outcome.passed:
        notes.append(f"your {call} gives a wrong result at this size ({outcome.message}); the metrics "
                     f"still show how it runs")

    ncu = ncu_finder()
    if not ncu:
        print(NCU_MISSING, file=out)
        return EXIT_TOOL

    columns, counts = [], []
    metrics = list(METRICS)
    try:
        jobs = [("yours", built.program, kernels_in(source.read_text(errors="replace")))]
        if ref_built is not None:
            jobs.append((f"lab {ref_dir.name[:2]} ref", ref_built.program,
                         kernels_in((ref_dir / source_name).read_text(errors="replace"))))
        for heading, program, kernels in jobs:
            print(f"profiling {heading}: {shown(program)} ...", file=out, flush=True)
            launches, metrics = profile_program(ncu, program, case_args, kernels, cwd=kit, metrics=metrics,
                                                notes=notes, run=run)
            columns.append((heading, summarize(launches)))
            counts.append((heading, kernel_counts(launches)))
    except ProfileError as e:
        print(f"make profile: {e}", file=out)
        return e.status

    n = parse_size(args.n)
    print(f"\nlab {lab.name}: one {call} call, n = {args.n} ({words}), profiled with "
          f"{shown(ncu)}", file=out)
    label_width = max(len(heading) for heading, _ in counts) + 1
    print(f"  {'yours:':<{label_width}} {shown(source)}: {counts[0][1]}", file=out)
    if ref_built is not None:
        print(f"  {counts[1][0] + ':':<{label_width}} {ref_why}: {counts[1][1]}", file=out)
    else:
        print(f"  ({ref_why})", file=out)
    print(file=out)
    print(side_by_side(columns, input_bytes=4.0 * n if n else None), file=out)
    for note in notes:
        print(f"note: {note}", file=out)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
