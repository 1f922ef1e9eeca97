"""The registry of the kit's patterns (reduce, scan, compact): what every tool, the grader and the build know about
a pattern, in one place. A lab is a stage of one pattern: grader/labs.toml names each lab's pattern, and the rest
follows from here.

    PATTERNS[name]       the pattern: its student file and function, the harness runs of make check and make sim,
                         the one case make profile, the estimate and the benchmark time (the `bench` case), the
                         simulator's counting run, the benchmark's yardstick
    parse_size(text)     one size in the harness's --n syntax (1025, 2^20, 2^24+3, 2^10-1), or None
    parse_sizes(text)    a --n list (1,33,2^20+1), or None; the C harness reads the same syntax (harness/checker/cli.c)
    format_size(n)       2^K for a power of two, the number otherwise
    lab_dirs(root)       the lab folders (NN-stage) under root, in order

The harness writes, with each case, the arguments that rerun it (its plan line's "reruns", each result line's
"rerun": harness/checker/results.h), so no tool reads case names apart.
"""
import re
from dataclasses import dataclass
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent

EDGE_SIZES = "1,2,31,32,33,1023,1024,1025,2049,65537"  # make check's small and edge sizes: warp and block borders
SCAN_EDGE_SIZES = "1,2,31,32,33,1023,1024,1025,2049,4097,65537"  # the scans' tiles are 2048 elements: 4097 too
MAX_EXPONENT = 40  # 2^K sizes: K at most this, as harness/checker/cli.c's ppl_parse_sizes takes them


@dataclass(frozen=True)
class Pattern:
    """One pattern of the kit: a family of labs sharing a harness (harness/device/NAME_*.cu,
    harness/runner/NAME_runner.cpp, harness/checker/NAME.c) and a student file."""

    name: str  # reduce: the harness family, the lab program NAME_lab
    source: str  # the student's file in every lab of this pattern (reduce.cu)
    call: str  # what the student writes, for messages: reduce()
    check_runs: tuple  # make check's runs, one harness process each: the small and edge sizes on every data kind
    sim_run: tuple  # make sim's default run: the edge sizes, exact data where there is a choice
    bench_case: tuple  # the case the benchmark times (with --n or --bench): make profile, the estimate
    bench_words: str  # that case, for people
    counts_run: tuple  # the simulator's counting run (grader/simulator.py, counts per kernel)
    yardstick: str  # the benchmark's flag for the library yardstick beside the reference (tools/student/bench.py)
    yardstick_words: str


PATTERNS = {
    "reduce": Pattern(
        name="reduce", source="reduce.cu", call="reduce()",
        check_runs=(("--data", "integer", "--n", EDGE_SIZES), ("--data", "uniform", "--n", EDGE_SIZES)),
        sim_run=("--data", "integer", "--n", EDGE_SIZES),
        bench_case=("--data", "uniform"), bench_words="uniform floats",
        counts_run=("--data", "integer", "--n", "65537"),
        yardstick="--cub",
        yardstick_words="the baseline (lab 01's kernel), CUB's DeviceReduce::Sum and a copy of the same bytes"),
    "scan": Pattern(
        name="scan", source="scan.cu", call="scan()",
        check_runs=(("--n", SCAN_EDGE_SIZES),),
        sim_run=("--n", SCAN_EDGE_SIZES),
        bench_case=("--algorithms", "brent-kung", "--kinds", "exclusive"),
        bench_words="int32, exclusive, Brent-Kung",
        counts_run=("--n", "65537"),
        yardstick="--copy", yardstick_words="CUB's DeviceScan::ExclusiveSum and a copy of the same bytes"),
    "compact": Pattern(
        name="compact", source="compact.cu", call="compact()",
        check_runs=(("--n", EDGE_SIZES),),
        sim_run=("--n", EDGE_SIZES),
        bench_case=("--thresholds", "0"), bench_words="int32, keep x > 0",
        counts_run=("--n", "65537"),
        yardstick="--copy", yardstick_words="CUB's DeviceSelect::If and a copy of the same bytes"),
}

_SIZE = re.compile(r"(?:2\^(\d+)(?:([+-])(\d+))?|(\d+))")


def pattern(name: str) -> Pattern:
    """The pattern called name; ValueError naming the patterns there are."""
    try:
        return PATTERNS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not a pattern of the kit (the patterns: {', '.join(PATTERNS)})") from None


def parse_size(text: str) -> int | None:
    """One size in the harness's --n syntax: a whole number, or 2^K, 2^K+D, 2^K-D (K at most 40), at least 1; None
    for anything else. The same syntax as harness/checker/cli.c's ppl_parse_sizes, which the C side keeps."""
    m = _SIZE.fullmatch(str(text).strip())
    if not m:
        return None
    if m[4] is not None:
        value = int(m[4])
    else:
        if int(m[1]) > MAX_EXPONENT:
            return None
        value = 1 << int(m[1])
        if m[2]:
            value = value + int(m[3]) if m[2] == "+" else value - int(m[3])
    return value if value >= 1 else None


def parse_sizes(text: str) -> list | None:
    """A comma-separated --n list (1,33,2^20+1) as numbers; None when any entry is not a size."""
    sizes = [parse_size(part) for part in str(text).split(",")]
    return None if not sizes or None in sizes else sizes


def format_size(n: int) -> str:
    """2^K for a power of two, the number otherwise."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def lab_dirs(root: Path = KIT / "solutions", prefix: str = "") -> list:
    """The lab folders (NN-stage) under root, in order; only those prefix picks (select_labs: 03,05 or 3), none
    when it picks none."""
    found = sorted(p for p in Path(root).glob("[0-9][0-9]-*") if p.is_dir())
    try:
        names = select_labs([p.name for p in found], prefix)
    except ValueError:
        return []
    return [p for p in found if p.name in names]


def select_labs(names, lab_filter: str | None) -> list:
    """The lab names among names that lab_filter picks, in names' order: the one lab selector of every target
    (LAB=03,05). Comma-separated items, each a lab's full name, the start of one (03-seq), or its number (3 or 03:
    the lab 03-...); every name for an empty filter. ValueError naming an item that picks no lab."""
    names = list(names)
    if not lab_filter:
        return names
    chosen = set()
    for item in (part.strip() for part in str(lab_filter).split(",")):
        if not item:
            continue
        start = f"{int(item):02d}-" if item.isdigit() else item
        found = {name for name in names if name == item or name.startswith(start)}
        if not found:
            raise ValueError(f"no lab matches {item} (the labs: {', '.join(names) or 'none'})")
        chosen |= found
    return [name for name in names if name in chosen]
