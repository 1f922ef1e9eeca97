"""A performance estimate without a GPU: a roofline model of a named GPU over the SIMT simulator's counts.

`make sim` and `make grade SIM=1` print it; it is an estimate, never points. What it says, for one lab:

    estimated on H100: ~0.15 ms at 2^26, ~7.0x over the baseline (an estimate from simulator counts, not a measurement)

The model (the roofline model, Williams, Waterman and Patterson, "Roofline: an insightful visual performance model
for multicore architectures", CACM 52(4), 2009; as an instruction roofline for GPUs, counting warp instructions
against memory transactions: Ding and Williams, "An Instruction Roofline Model for GPUs", PMBS 2019; the ceilings
are those PMPP 4th ed. teaches, chapter 5 (memory bandwidth, occupancy) and chapter 10 (the reduction ladder)).
Each kernel is as slow as its tightest ceiling, and each launch in a chain costs a fixed time:

    T = sum over kernels k of ( max(T_issue, T_dram, T_l2, T_shared, T_atomic) + launches_k * launch_us )

    T_issue  = warp_instructions / (S * schedulers_per_sm * clock * issue_efficiency)
    T_dram   = 32 bytes * dram_sectors / (dram_gbps * dram_efficiency * S / sms)
    T_l2     = 32 bytes * global_sectors / (l2_gbps * S / sms)
    T_shared = shared_wavefronts / (S * clock * shared_bytes_per_clock / 128)
    T_atomic = atomics_one_address / (clock * atomics_per_clock)

with S = min(sms, blocks per launch), the SMs a launch can keep busy. Inputs and units: the simulator's counts per
kernel (sim/README.md: warp instructions, 32-byte global sectors, "dram_sectors" = the sectors a launch touches first,
read and written, when the simulator reports them (else every global sector counts as DRAM traffic), shared
wavefronts, atomics and of them the global ones, launches, blocks), each GPU's public specifications in
grader/gpus.toml (SMs, clock in MHz, schedulers, GB/s, bytes per clock) and four global constants there, each measured
once on the lent H200 and never fitted per lab: issue_efficiency (from the baseline kernel's time), dram_efficiency (a
1 GiB copy), launch_us (CUB's time at 2^20) and atomics_per_clock (a published worst case). gpus.toml says where each
number comes from.
Atomics: only the global ones meet atomics_per_clock, and only those on one address wait for one another (one per
clock at one address; different addresses go to different L2 slices): atomics_one_address is, over a kernel's launches,
each launch's largest count of global atomics on one address. Shared-memory atomics run natively in each SM's shared
memory (since Maxwell) and are counted in its wavefronts like any shared access, so T_shared holds them. A report
without "atomics_one_address" counts every global atomic as on one address, one without "global_atomics" (an older
simulator) every atomic.

The size. The benchmark runs 2^26 elements; the simulator runs about 10-30 million warp instructions a second, so a
lab runs at two smaller sizes n1 = n2/4 and n2 (n2 the largest power of two whose run stays within
BUDGET_INSTRUCTIONS, probed at PROBE_N first, at most MAX_N) and each count is extrapolated to N along the line
through them: count(N) = count(n2) + (count(n2) - count(n1)) * (N - n2) / (n2 - n1). A count proportional to n
scales by N/n2; a fixed part (per block of a fixed grid, per launch) stays fixed. Two counts follow other rules:
  - blocks of a grid that stopped growing between n1 and n2 (a grid capped at the GPU's size, lab 05's) stay as
    at n2, and so does every count that was in proportion to the blocks at n1 and n2 (threads, a block's barriers
    and atomics). The simulator runs the lab with the GPU's shape (PPL_SIM_DEVICE: SMs, threads and blocks per SM), so a
    grid sized from cudaGetDeviceProperties or the occupancy API is that GPU's;
  - launches of a kernel launched once per level of a tree (the reduction's tree of blocks, the scan's tile sums)
    are the levels of that tree at N: its elements per block E come from n2 and the blocks launched, and the
    levels, ceil(log_E N) plus the same offset as at n1 and n2, are used only when they also give the launches at
    n1 and n2; any other kernel keeps the launches of n2.

The yardstick. Labs timed against the baseline kernel (labs 01-05) get a speedup: the baseline (the harness's own
reduce_baseline, linked into a one-line lab file in build/sim/estimate/) is estimated the same way, and the
speedup is baseline time / lab time, as the grader's `speedup` on a GPU. The simulator does not run CUB (a plain
scan stands in for it), so labs timed against CUB get a time and no speedup.
"""
import fcntl
import hashlib
import json
import math
import os
import re
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from grader.patterns import KIT, parse_size, pattern as pattern_named
from grader.sim.sim_target import sim_env

GPUS_FILE = Path(__file__).resolve().parents[1] / "gpus.toml"
DEFAULT_GPU = "H100"
PROBE_N = 1 << 16  # the first run: instructions per element
BUDGET_INSTRUCTIONS = 8_000_000  # warp instructions of the larger run (about a second here)
MIN_N = 1 << 18  # n2 is at least this (whatever the budget: a slow kernel takes longer to estimate) ...
HARD_INSTRUCTIONS = 25_000_000  # ... unless its run would pass this (the grader stops a launch at 30 million)
MAX_N = 1 << 22  # and at most this (time: above it the harness checks a scan's output with a kernel of its own)
SECTOR_BYTES = 32
SEED = "20261122"  # fixed data: the same estimate every time
ESTIMATE_NOTE = "an estimate from simulator counts, not a measurement"
# The harness's own kernels that run outside the timed call (its checksums of large outputs, the SM clock stamps of
# a benchmark): kernels defined in these files are left out of the estimate. (Kernels the lab's code calls, such as
# lab 07's kit_exclusive_scan, count: they are part of its time.)
CHECK_SOURCES = ("harness/device/check_i32.cu", "harness/device/device.cu")
GPU_KEYS = {"name": str, "sms": int, "clock_mhz": int, "schedulers_per_sm": int, "dram_gbps": int, "l2_gbps": int,
            "l2_mb": int, "shared_bytes_per_clock": int, "max_threads_per_sm": int, "max_blocks_per_sm": int,
            "shared_bytes_per_sm": int}
MODEL_KEYS = {"issue_efficiency": float, "dram_efficiency": float, "launch_us": float, "atomics_per_clock": float,
              "calibration_gpu": str, "calibration_n": str, "calibration_baseline_ms": float}


class EstimateError(Exception):
    """The estimate could not be made: gpus.toml is wrong, a run failed, an unknown GPU. The message says what."""


@dataclass(frozen=True)
class Gpu:
    """One [gpus.KEY] table of gpus.toml (units there)."""

    key: str
    name: str
    sms: int
    clock_mhz: int
    schedulers_per_sm: int
    dram_gbps: int
    l2_gbps: int
    l2_mb: int
    shared_bytes_per_clock: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    shared_bytes_per_sm: int

    def device_env(self) -> dict:
        """The environment that gives the simulator's device this GPU's shape (sim/README.md, PPL_SIM_DEVICE)."""
        return {"PPL_SIM_DEVICE": f"{self.sms},{self.max_threads_per_sm},{self.max_blocks_per_sm},"
                                  f"{self.shared_bytes_per_sm}"}


@dataclass(frozen=True)
class Model:
    """gpus.toml's [model]: the global constants (units and sources there)."""

    issue_efficiency: float
    dram_efficiency: float
    launch_us: float
    atomics_per_clock: float
    calibration_gpu: str
    calibration_n: str
    calibration_baseline_ms: float


def _checked(table, keys: dict, where: str) -> dict:
    if not isinstance(table, dict):
        raise EstimateError(f"{where}: expected a table")
    unknown = sorted(set(table) - set(keys))
    missing = sorted(set(keys) - set(table))
    if unknown or missing:
        raise EstimateError(f"{where}: " + "; ".join(
            ([f"unknown keys {', '.join(unknown)}"] if unknown else []) +
            ([f"missing keys {', '.join(missing)}"] if missing else [])))
    out = {}
    for key, kind in keys.items():
        value = table[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool) or (kind is not str and value <= 0):
            raise EstimateError(f"{where}.{key} = {value!r}: expected a {'positive ' if kind is not str else ''}"
                                f"{kind.__name__}")
        out[key] = value
    return out


def load_specs(path=GPUS_FILE) -> tuple:
    """(gpus by key, Model) from gpus.toml; EstimateError naming the file and key for anything malformed."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise EstimateError(f"{path}: {e}") from None
    if set(data) != {"model", "gpus"} or not isinstance(data.get("gpus"), dict) or not data["gpus"]:
        raise EstimateError(f"{path}: expected exactly a [model] table and [gpus.KEY] tables")
    model = Model(**_checked(data["model"], MODEL_KEYS, f"{path.name} [model]"))
    gpus = {key: Gpu(key=key, **_checked(table, GPU_KEYS, f"{path.name} [gpus.{key}]"))
            for key, table in data["gpus"].items()}
    return gpus, model


def find_gpu(gpus: dict, wanted: str) -> Gpu:
    """The GPU whose key or reported name is wanted (any case); EstimateError listing the known ones otherwise."""
    for gpu in gpus.values():
        if wanted.lower() in (gpu.key.lower(), gpu.name.lower()):
            return gpu
    raise EstimateError(f"no GPU {wanted!r} in grader/gpus.toml: choose one of {', '.join(sorted(gpus))} "
                        f"(GPU=H100 for make, --gpu H100 for the tools)")


# ---- counts ----

@dataclass
class Kernel:
    """One kernel's counts over all its launches (the simulator's report, sim/README.md); dram_sectors is None when
    the simulator did not count them; global_atomics (the atomics' lanes that went to global memory) is None when
    the simulator did not tell them from shared ones (every atomic then counts as global); atomics_one_address (over
    the launches, each launch's largest count of global atomics on one address) is None from a simulator that did not
    count addresses (every global atomic then counts as on one address)."""

    name: str
    launches: float = 0.0
    blocks: float = 0.0
    threads: float = 0.0
    warp_instructions: float = 0.0
    global_sectors: float = 0.0
    dram_sectors: float | None = None
    shared_wavefronts: float = 0.0
    atomics: float = 0.0
    global_atomics: float | None = None
    atomics_one_address: float | None = None
    barriers: float = 0.0

    LINEAR = ("warp_instructions", "global_sectors", "dram_sectors", "shared_wavefronts", "atomics", "global_atomics",
              "atomics_one_address", "barriers", "threads")
    OPTIONAL = ("dram_sectors", "global_atomics", "atomics_one_address")  # None where the simulator did not count

    @classmethod
    def from_report(cls, k: dict) -> "Kernel":
        def number(key):
            v = k.get(key)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else None
        values = {f.name: number(f.name) or 0.0 for f in fields(cls) if f.name not in ("name", *cls.OPTIONAL)}
        return cls(name=str(k.get("name") or "?"), **{key: number(key) for key in cls.OPTIONAL}, **values)


def serialized_atomics(k: Kernel) -> float:
    """The atomics that wait for one another: those on the address with the most (atomics to one address serialize
    in the L2 slice that holds it, atomics to different addresses do not: a histogram's merge into 256 bins waits for
    one bin's); from an older simulator's report, every global atomic (or every atomic) as if on one address."""
    if k.atomics_one_address is not None:
        return k.atomics_one_address
    return k.atomics if k.global_atomics is None else k.global_atomics


def identifier(name: str) -> str:
    """A kernel's name as written in its source: "checksum_kernel" for the mangled "_Z15checksum_kernelPKjmmPy"."""
    m = re.match(r"_Z(\d+)(\w+)", name)
    return m.group(2)[:int(m.group(1))] if m else name


def check_kernels(kit=KIT) -> set:
    """The names of the harness's own checking kernels (CHECK_SOURCES), which the estimate leaves out."""
    names = set()
    for source in CHECK_SOURCES:
        try:
            text = (Path(kit) / source).read_text(encoding="utf-8")
        except OSError:
            continue
        names.update(re.findall(r"__global__\s+void\s+(\w+)\s*\(", text))
    return names


def kernels_of(report_kernels, kit=KIT) -> dict:
    """{name: Kernel} of a report's "kernels" list: the kernels launched, the harness's checks left out."""
    out, skip = {}, check_kernels(kit)
    for k in report_kernels or []:
        if isinstance(k, dict):
            kernel = Kernel.from_report(k)
            if kernel.launches > 0 and identifier(kernel.name) not in skip:
                out[kernel.name] = kernel
    return out


def tree_levels(n: float, per_block: float) -> int:
    """Launches of a tree of blocks over n elements, per_block elements a block: until one value is left."""
    levels, count = 0, n
    while count > 1:
        count = math.ceil(count / per_block)
        levels += 1
    return max(levels, 1)


def tree_launches(k1: Kernel, n1: int, k2: Kernel, n2: int, n: int) -> float:
    """k's launches at n when its launches at n1 and n2 are the levels of one tree of blocks (plus a fixed offset);
    otherwise its launches at n2."""
    if k2.launches <= 1 or k2.blocks < k2.launches:
        return k2.launches
    per_block = n2 / k2.blocks + 1  # blocks = n/E + n/E^2 + ... = about n / (E - 1)
    power = 2 ** round(math.log2(per_block))
    if abs(power - per_block) <= 0.01 * per_block:
        per_block = power
    if per_block < 2:
        return k2.launches
    offset = k2.launches - tree_levels(n2, per_block)
    if k1.launches - tree_levels(n1, per_block) != offset or offset > 0:
        return k2.launches
    return max(tree_levels(n, per_block) + offset, 1)


def extrapolate(small: dict, n1: int, large: dict, n2: int, n: int) -> dict:
    """{name: Kernel} at n from the runs at n1 < n2 (the module docstring's rules)."""
    out = {}
    for name, k2 in large.items():
        k1 = small.get(name)
        if k1 is None:  # a kernel only the larger size launches: proportional to n
            out[name] = replace(k2, **{a: getattr(k2, a) * n / n2 for a in (*Kernel.LINEAR, "blocks")
                                       if getattr(k2, a) is not None})
            continue
        values = {}
        for attr in (*Kernel.LINEAR, "blocks"):
            c1, c2 = getattr(k1, attr), getattr(k2, attr)
            if c1 is None or c2 is None:
                values[attr] = None
                continue
            values[attr] = max(c2 + (c2 - c1) * (n - n2) / (n2 - n1), c2)
        capped = k1.launches == k2.launches and k2.blocks < 0.9 * k1.blocks * n2 / n1
        if capped:  # the grid stopped growing: its blocks stay, and so do its counts per block (threads, the
            values["blocks"] = k2.blocks  # barriers and atomics of one block's tree): those in proportion to blocks
            for attr in Kernel.LINEAR:
                c1, c2 = getattr(k1, attr), getattr(k2, attr)
                if c1 is not None and c2 is not None and c1 * k2.blocks == c2 * k1.blocks:
                    values[attr] = c2
        values["launches"] = tree_launches(k1, n1, k2, n2, n)
        out[name] = replace(k2, **values)
    return out


# ---- the model ----

@dataclass
class KernelTime:
    """A kernel's estimated time (ms), its ceilings (ms, by name) and the one that bounds it."""

    name: str
    ms: float
    bound: str
    ceilings: dict


@dataclass
class Estimate:
    """A program's estimated time (ms) at n on gpu, per kernel."""

    gpu: str
    n: int
    ms: float
    kernels: list = field(default_factory=list)

    @property
    def bound(self) -> str:
        """The ceiling of the kernel that takes the most time."""
        return max(self.kernels, key=lambda k: k.ms).bound if self.kernels else "none"


def kernel_time(k: Kernel, gpu: Gpu, model: Model) -> KernelTime:
    """k's time on gpu: its tightest ceiling plus its launches (the module docstring's formula)."""
    clock = gpu.clock_mhz * 1e6
    busy = min(gpu.sms, max(1.0, k.blocks / max(k.launches, 1.0)))  # SMs a launch keeps busy
    share = busy / gpu.sms
    dram = k.dram_sectors if k.dram_sectors is not None else k.global_sectors
    seconds = {
        "issue": k.warp_instructions / (busy * gpu.schedulers_per_sm * clock * model.issue_efficiency),
        "DRAM": SECTOR_BYTES * dram / (gpu.dram_gbps * 1e9 * model.dram_efficiency * share),
        "L2": SECTOR_BYTES * k.global_sectors / (gpu.l2_gbps * 1e9 * share),
        "shared memory": k.shared_wavefronts / (busy * clock * gpu.shared_bytes_per_clock / 128),
        "atomics": serialized_atomics(k) / (clock * model.atomics_per_clock),
    }
    bound = max(seconds, key=seconds.get)
    ms = 1e3 * seconds[bound] + k.launches * model.launch_us * 1e-3
    return KernelTime(k.name, ms, bound, {name: 1e3 * s for name, s in seconds.items()})


def estimate_kernels(kernels: dict, gpu: Gpu, model: Model, n: int) -> Estimate:
    """The Estimate of kernels (counts at n) on gpu."""
    times = [kernel_time(k, gpu, model) for k in kernels.values()]
    return Estimate(gpu.key, n, sum(t.ms for t in times), times)


# ---- running the simulator ----

def bench_args(pattern: str, n: int) -> list:
    """The harness arguments of a correctness run shaped like the benchmark (its data and variant: the pattern's
    bench_case in grader/patterns.py) at n."""
    return [*pattern_named(pattern).bench_case, "--n", str(n), "--seed", SEED]


def local_runner(program, *, cwd=KIT, timeout: float = 300.0):
    """A run(args, env) -> report kernels list for `make sim`: the lab program in one process (--in-process), the
    report through PPL_SIM_REPORT. EstimateError when the run fails."""
    def run(args, env):
        with tempfile.TemporaryDirectory(prefix="ppl-estimate-") as tmp:
            report = Path(tmp) / "report.json"
            full = {**sim_env(report=report), **env}
            try:
                proc = subprocess.run([str(program), *args, "--in-process", "--quiet"], cwd=cwd, env=full,
                                      capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise EstimateError(f"the run {' '.join(args)} took more than {timeout:g} s") from None
            if proc.returncode != 0:
                said = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
                raise EstimateError(f"the run {' '.join(args)} failed (exit status {proc.returncode}): "
                                    + " / ".join(said))
            try:
                return json.loads(report.read_text(encoding="utf-8")).get("kernels") or []
            except (OSError, ValueError) as e:
                raise EstimateError(f"the run {' '.join(args)} left no report: {e}") from None
    return run


def choose_sizes(per_element: float, bench_n: int) -> tuple:
    """(n1, n2): n2 the largest power of two in [MIN_N, min(MAX_N, bench_n)] whose run stays within
    BUDGET_INSTRUCTIONS at per_element warp instructions per element (below MIN_N, down to 2 * PROBE_N, only to stay
    within HARD_INSTRUCTIONS); n1 = n2 / 4."""
    top = max(min(MAX_N, bench_n), 4)
    n2 = 1 << int(math.floor(math.log2(top)))
    while n2 > MIN_N and per_element * n2 > BUDGET_INSTRUCTIONS:
        n2 //= 2
    while n2 > 2 * PROBE_N and per_element * n2 > HARD_INSTRUCTIONS:
        n2 //= 2
    return max(n2 // 4, 1), n2


def simulate_at(run, pattern: str, bench_n: int, gpu: Gpu, kit=KIT) -> tuple:
    """(kernels extrapolated to bench_n, what was run: [(n, warp instructions)]) for a program run through run."""
    env = gpu.device_env()
    probe = kernels_of(run(bench_args(pattern, PROBE_N), env), kit)
    if not probe:
        raise EstimateError(f"no kernel ran at n = {PROBE_N}")
    per_element = sum(k.warp_instructions for k in probe.values()) / PROBE_N
    n1, n2 = choose_sizes(per_element, bench_n)
    if n2 >= bench_n:  # the benchmark's size itself: no extrapolation
        exact = kernels_of(run(bench_args(pattern, bench_n), env), kit)
        return exact, [(bench_n, sum(k.warp_instructions for k in exact.values()))]
    small = probe if n1 == PROBE_N else kernels_of(run(bench_args(pattern, n1), env), kit)
    large = kernels_of(run(bench_args(pattern, n2), env), kit)
    runs = [(n, sum(k.warp_instructions for k in ks.values())) for n, ks in ((n1, small), (n2, large))]
    return extrapolate(small, n1, large, n2, bench_n), runs


# ---- the yardstick ----

def baseline_source(kit=KIT) -> str:
    """The lab file that makes the harness's own baseline (patterns/reduce/baseline.cu, which it includes by
    its path: the baseline lives in the device program, which no lab links) a lab's reduce(), so that the simulator
    can count it as it counts a lab. Not a student's file: built by the kit alone, never graded."""
    path = Path(kit).resolve() / "patterns" / "reduce" / "baseline.cu"
    return ("/* Generated by grader/sim/estimate.py: the harness's own baseline as a lab's reduce(). "
            "Not a student's file. */\n"
            f'#include "{path}"\n\n'
            "void reduce(float *d_in, float *d_out, size_t n, float *d_work) "
            "{ reduce_baseline(d_in, d_out, n, d_work); }\n")


def baseline_folder(pattern: str, kit=KIT, root=None) -> Path:
    """ROOT/baseline-PATTERN (ROOT: build/sim/estimate, or the grader's own build folder), made if missing;
    EstimateError when it cannot be."""
    folder = Path(root or Path(kit) / "build" / "sim" / "estimate").resolve() / f"baseline-{pattern}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise EstimateError(f"cannot make {folder} for the baseline: {e}") from None
    return folder


def baseline_program(pattern: str, kit=KIT, root=None) -> Path:
    """The simulator's build of the harness's baseline as a lab program (baseline_folder), made when missing or
    stale; EstimateError when there is no baseline for pattern or the build fails."""
    if pattern != "reduce":
        raise EstimateError(f"the {pattern} labs are timed against CUB, which the simulator does not run")
    from grader.compile.build import make_argv  # the kit's make command line (mk/sim.mk)
    kit = Path(kit).resolve()
    folder = baseline_folder(pattern, kit, root)
    source = folder / "reduce.cu"
    try:
        text = baseline_source(kit)
        if not source.is_file() or source.read_text(encoding="utf-8") != text:
            source.write_text(text, encoding="utf-8")
    except OSError as e:
        raise EstimateError(f"cannot write the baseline's lab file: {e}") from None
    argv = make_argv(kit, pattern, f"LAB_SRC={source}", f"BUILD={folder}", jobs=os.cpu_count() or 1,
                     makefile="sim.mk")
    proc = subprocess.run(argv, cwd=kit, capture_output=True, text=True)
    program = folder / f"{pattern}_lab"
    if proc.returncode != 0 or not program.is_file():
        raise EstimateError(f"the baseline does not build for the simulator: {(proc.stderr or proc.stdout)[-500:]}")
    return program


def cached_baseline(pattern: str, bench_n: int, gpu: Gpu, *, kit=KIT, timeout: float = 300.0, root=None) -> dict:
    """The baseline's kernels extrapolated to bench_n on gpu's shape, simulated once and kept beside its program
    (keyed by the program's content, the shape and bench_n); one process at a time builds and simulates it (a lock
    file: grade-class grades several students at once)."""
    if pattern != "reduce":
        raise EstimateError(f"the {pattern} labs are timed against CUB, which the simulator does not run")
    folder = baseline_folder(pattern, kit, root)
    try:
        lock = open(folder / "lock", "a")
    except OSError as e:
        raise EstimateError(f"cannot open {folder / 'lock'}: {e}") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        program = baseline_program(pattern, kit, root)
        digest = hashlib.sha256()
        for part in (program, program.with_name(f"{pattern}_runner")):
            if part.is_file():
                digest.update(part.read_bytes())
        key = f"{digest.hexdigest()[:16]}-{gpu.device_env()['PPL_SIM_DEVICE']}-{bench_n}"
        cache = folder / "counts.json"
        try:
            saved = json.loads(cache.read_text(encoding="utf-8"))
            if saved.get("key") == key:
                return {k["name"]: Kernel(**k) for k in saved["kernels"]}
        except (OSError, ValueError, KeyError, TypeError):
            pass
        kernels, _ = simulate_at(local_runner(program, cwd=kit, timeout=timeout), pattern, bench_n, gpu, kit)
        try:
            cache.write_text(json.dumps({"key": key, "kernels": [vars(k) for k in kernels.values()]}) + "\n",
                             encoding="utf-8")
        except OSError:
            pass  # no cache: the next estimate simulates the baseline again
        return kernels


# ---- one lab ----

@dataclass
class LabEstimate:
    """A lab's estimate: its time, and the yardstick's time and the speedup when the simulator can run the
    yardstick (speedup None for CUB); runs: the sizes simulated and their warp instructions."""

    gpu: str
    n: int
    n_text: str
    student: Estimate
    yardstick: str
    baseline: Estimate | None = None
    runs: list = field(default_factory=list)

    @property
    def speedup(self) -> float | None:
        return self.baseline.ms / self.student.ms if self.baseline and self.student.ms > 0 else None

    def line(self) -> str:
        """The one line make sim and make grade SIM=1 print."""
        ms = self.student.ms
        text = f"estimated on {self.gpu}: ~{ms:.2g} ms at {self.n_text}" if ms < 0.1 else \
            f"estimated on {self.gpu}: ~{ms:.2f} ms at {self.n_text}"
        if self.speedup is not None:
            return f"{text}, ~{self.speedup:.1f}x over the baseline ({ESTIMATE_NOTE})"
        return (f"{text} ({ESTIMATE_NOTE}; no speedup: this lab's yardstick is CUB, which the simulator does not "
                f"run)")

    def details(self) -> list:
        """Lines under the estimate: per kernel of the lab, its estimated time and what bounds it, each ceiling."""
        lines = []
        for k in sorted(self.student.kernels, key=lambda k: -k.ms):
            ceilings = ", ".join(f"{name} {ms:.3g}" for name, ms in k.ceilings.items() if ms > 0)
            lines.append(f"  {identifier(k.name)}: ~{k.ms:.3g} ms, bound by {k.bound} (ceilings in ms: {ceilings})")
        return lines

    def to_json(self) -> dict:
        """The estimate as the grader keeps it (results.json): never points."""
        return {"gpu": self.gpu, "n": self.n, "student_ms": round(self.student.ms, 5), "yardstick": self.yardstick,
                "yardstick_ms": round(self.baseline.ms, 5) if self.baseline else None,
                "speedup": round(self.speedup, 3) if self.speedup is not None else None,
                "bound": self.student.bound, "note": ESTIMATE_NOTE}


def parse_n(text: str) -> int:
    """A benchmark size as labs.toml writes it (2^26, 1048576: the harness's --n syntax); EstimateError otherwise."""
    n = parse_size(str(text))
    if not n:
        raise EstimateError(f"benchmark size {text!r}: expected a whole number or 2^K")
    return n


def estimate_lab(run, pattern: str, bench: str, yardstick: str, gpu_key: str = DEFAULT_GPU, *, kit=KIT,
                 specs=None, timeout: float = 300.0, baseline_root=None) -> LabEstimate:
    """The estimate of one lab: run(args, env) -> report kernels runs its program on the simulator (local_runner,
    or the grader's sandboxed run); bench is labs.toml's size ("2^26"), yardstick its "baseline" or "cub";
    baseline_root: where the baseline is built (baseline_folder; the grader's own build folder when grading)."""
    gpus, model = specs or load_specs()
    gpu = find_gpu(gpus, gpu_key)
    n = parse_n(bench)
    kernels, runs = simulate_at(run, pattern, n, gpu, kit)
    lab = LabEstimate(gpu.key, n, bench, estimate_kernels(kernels, gpu, model, n), yardstick, runs=runs)
    if yardstick == "baseline":
        counts = cached_baseline(pattern, n, gpu, kit=kit, timeout=timeout, root=baseline_root)
        lab.baseline = estimate_kernels(counts, gpu, model, n)
    return lab


def estimate_for(run, lab, gpu_key: str = DEFAULT_GPU, *, kit=KIT, timeout: float = 300.0,
                 baseline_root=None) -> tuple:
    """(LabEstimate or None, the text to print) for a lab of grader/config.py (its pattern and performance: bench
    size and yardstick): the estimate's line and its details, or "no performance estimate on GPU: why" when it
    cannot be made."""
    try:
        perf = lab.performance
        est = estimate_lab(run, lab.pattern, perf.bench, perf.yardstick, gpu_key, kit=kit, timeout=timeout,
                           baseline_root=baseline_root)
        return est, "\n".join([est.line(), *est.details()])
    except EstimateError as e:
        return None, f"no performance estimate on {gpu_key}: {e}"


def issue_efficiency_from(baseline_kernels: dict, gpu: Gpu, model: Model, measured_ms: float) -> float:
    """The issue_efficiency that makes the baseline's estimate (issue-bound) equal measured_ms: how gpus.toml's
    constant was measured (tests recompute it)."""
    instructions = sum(k.warp_instructions for k in baseline_kernels.values())
    launches = sum(k.launches for k in baseline_kernels.values())
    issue_s = (measured_ms - launches * model.launch_us * 1e-3) * 1e-3
    return instructions / (gpu.sms * gpu.schedulers_per_sm * gpu.clock_mhz * 1e6 * issue_s)
