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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2^20,2^24,2^26,2^28", help="comma-separated sizes (elements)")
    parser.add_argument("--lab", default="", help="only labs whose name starts with this")
    parser.add_argument("--out", type=Path, default=KIT / "build" / "bench")
    args = parser.parse_args(argv)
    labs = lab_dirs(KIT / "solutions", args.lab)
    args.out.mkdir(parents=True, exist_ok=True)
    jsonl = args.out / "ladder.jsonl"
    jsonl.unlink(missing_ok=True)
    programs = {lab.name: build(lab, args.out / lab.name) for lab in labs}
    rows = []
    for size in args.sizes.split(","):
        for name, (pattern, program) in programs.items():
            before = jsonl.stat().st_size if jsonl.exists() else 0
            proc = subprocess.run([str(program), "--bench", size, YARDSTICK_FLAG[pattern], "--quiet",
                                   "--result", str(jsonl)],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if proc.returncode == NO_DEVICE:
                print("make bench needs an NVIDIA GPU: this machine has no CUDA device.", file=sys.stderr)
                return NO_DEVICE
            with open(jsonl) as f:
                f.seek(before)
                lines = [json.loads(line) for line in f if line.strip()]
            bench = next((r for r in lines if r.get("kind") == "bench"), None)
            if proc.returncode != 0 or bench is None:
                print(proc.stdout, file=sys.stderr)
                print(f"{name} at n={size}: the benchmark failed (exit {proc.returncode})", file=sys.stderr)
                return 1
            rows.append((name, bench))
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
