#!/usr/bin/env python3
"""`make bench`: every reference solution against CUB and the copy bandwidth (and the reductions against the
baseline kernel), measured in one run.

For each size and each reference solution, one harness process times the solution and its yardsticks,
interleaved: reduce_lab --bench N --cub (baseline kernel, cub::DeviceReduce::Sum, a copy of the same bytes),
scan_lab --bench N --copy (cub::DeviceScan::ExclusiveSum, a copy), compact_lab --bench N --copy
(cub::DeviceSelect::If, a copy). The table shows ratios taken inside that one process:

  x baseline   baseline time / solution time (reductions: the speedup the grader scores)
  x CUB        CUB time / solution time (1.00 = as fast as CUB; for scan and compaction, what the grader scores)
  % copy       copy time / solution time: the fraction of the measured copy bandwidth the solution moves its
               bytes at

Writes every result line to build/bench/ladder.jsonl and the table to build/bench/ladder.md.
Exit status 77 when this machine has no CUDA device.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kitlabs import KIT, lab_dirs, lab_settings  # noqa: E402

NO_DEVICE = 77


def size_label(n: int) -> str:
    """2^K for a power of two, the number otherwise."""
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


YARDSTICK_FLAG = {"reduce": "--cub", "scan": "--copy", "compact": "--copy"}


def build(lab_dir: Path, out: Path) -> tuple:
    """Build one solution's harness program; returns (pattern, program path)."""
    settings = lab_settings(lab_dir)
    pattern = settings["PATTERN"]
    make = ["make", "-s", "-f", "mk/lab.mk", f"KIT={KIT}", f"PATTERN={pattern}"]
    subprocess.run(make + ["harness", "-j4"], cwd=KIT, check=True)
    subprocess.run(make + [f"LAB_SRC={lab_dir / settings['LAB_SRC']}", f"BUILD={out}"], cwd=KIT, check=True)
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
            proc = subprocess.run([str(program), "--bench", size, YARDSTICK_FLAG[pattern], "--quiet",
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2^20,2^24,2^26,2^28", help="comma-separated sizes (elements)")
    parser.add_argument("--lab", default="", help="only labs whose name starts with this")
    parser.add_argument("--out", type=Path, default=KIT / "build" / "bench")
    args = parser.parse_args(argv)
    labs = lab_dirs(KIT / "solutions", args.lab)
    jsonl = args.out / "ladder.jsonl"
    try:
        programs, rows = ladder(labs, args.sizes.split(","), args.out)
    except BenchError as e:
        if e.status == NO_DEVICE:
            print("make bench needs an NVIDIA GPU: this machine has no CUDA device.", file=sys.stderr)
        else:
            print(e, file=sys.stderr)
        return e.status
    device = rows[0][1]["device"] if rows else "?"
    table = [f"Reference ladder on {device} (sm {rows[0][1]['sm'] if rows else '?'}); ratios from one process each.",
             "", "| lab | n | x baseline | x CUB | % copy | solution ms | spread |", "|---|---|---|---|---|---|---|"]
    for name, r in rows:
        baseline = f"{r['speedup']:.2f}" if programs[name][0] == "reduce" else "-"
        table.append(f"| {name} | {size_label(r['n'])} "
                     f"| {baseline} | {r['cub_ms'] / r['student_ms']:.2f} "
                     f"| {100 * r['copy_ms'] / r['student_ms']:.0f} | {r['student_ms']:.4f} "
                     f"| {100 * r['spread']:.1f}% |")
    text = "\n".join(table) + "\n"
    (args.out / "ladder.md").write_text(text)
    print(text)
    print(f"(all figures: {jsonl})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
