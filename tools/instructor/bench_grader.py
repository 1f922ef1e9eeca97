"""`make bench-grader`: where the time of one grading goes, lab by lab, each stage as a ratio to the floor of a
grading measured in the same run.

    python3 -m tools.instructor.bench_grader [--lab 03,05] [--submission solutions] [--out build/bench-grader]

The floor (each part the median of --repeats processes, timed from outside as the grader times its own):
  build     nvcc compiling an empty kernel with the student's flags (`make -f mk/lab.mk student-flags`)
  context   a process that creates a CUDA context and exits (tools/instructor/grading_floor.cu)
  copy      the host-to-device copy of labs.toml's largest input (4-byte elements, pageable memory, as the checker's)
Then it grades the submission once, as `make grade` does (python3 -m grader, results in OUT/results.json), and reads
the seconds of each stage from results.json's extra_data.stage_seconds (grader/grade.py, Grader.stage). The
correctness runs and compute-sanitizer's run side by side, and the next lab builds while this one runs, so a lab's
stages add up to more than its total; "simulator check" is the simulator's own check of the lab
(grader/sim/sim_check.py), beside the GPU work, and the whole grading's line says how long the grading waited for those
checks at its end. The table goes to stdout and OUT/bench-grader.md.

Exit status: 0 the grading ran, 1 it did not (the table says why), 2 bad usage, 77 no CUDA device here.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from grader.compile import build as build_mod
from grader.config import ConfigError, load_config
from grader.patterns import KIT

NO_DEVICE = 77
ELEMENT_BYTES = 4  # every pattern's elements are 32-bit words (float or int)
STAGES = ("build", "static checks", "correctness", "sanitizers", "benchmark", "GPU queries", "simulator check")
EMPTY_KERNEL = "__global__ void empty_kernel() {}\n"


def largest_input_bytes(config, labs) -> int:
    """The bytes of the largest input any correctness run of labs reads (its --n sizes times ELEMENT_BYTES)."""
    from grader.sim.simulator import largest_size
    return max([1, *(largest_size(group.runs or ()) for lab in labs for group in lab.groups)]) * ELEMENT_BYTES


def timed(argv, **kwargs) -> tuple:
    """(seconds, CompletedProcess) of one process, its output captured."""
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    return time.monotonic() - start, done


def measure_floors(out: Path, pattern: str, largest: int, repeats: int) -> dict:
    """Seconds of the floor's parts (build, context, copy), each the median of repeats; raises SystemExit(77) where
    there is no CUDA device and RuntimeError when a part fails."""
    out.mkdir(parents=True, exist_ok=True)
    empty = out / "empty.cu"
    empty.write_text(EMPTY_KERNEL)
    command = build_mod.native_arch(build_mod.student_command(KIT, pattern, empty, out))
    floor_program = out / "grading_floor"
    made = subprocess.run([*command, "-o", str(floor_program), str(KIT / "tools" / "instructor" / "grading_floor.cu")],
                          capture_output=True, text=True)
    if made.returncode != 0:
        raise RuntimeError(f"grading_floor.cu does not build: {made.stderr.strip()[-500:]}")
    samples = {"build": [], "context": [], "copy": []}
    for _ in range(repeats):
        seconds, done = timed([*command, "-c", "-o", str(out / "empty.o"), str(empty)])
        if done.returncode != 0:
            raise RuntimeError(f"an empty kernel does not build: {done.stderr.strip()[-500:]}")
        samples["build"].append(seconds)
        seconds, done = timed([str(floor_program), "context"])
        if done.returncode == NO_DEVICE:
            print(f"bench-grader: no CUDA device here ({done.stderr.strip()}): the floor and a grading's stages need "
                  f"a GPU. Without one, `make grade SIM=1` grades correctness on the CPU simulator.", file=sys.stderr)
            raise SystemExit(NO_DEVICE)
        if done.returncode != 0:
            raise RuntimeError(f"grading_floor context failed: {done.stderr.strip()}")
        samples["context"].append(seconds)
        _, done = timed([str(floor_program), "copy", str(largest)])
        if done.returncode != 0 or not done.stdout.startswith("copy_ms "):
            raise RuntimeError(f"grading_floor copy {largest} failed: {done.stderr.strip()}")
        samples["copy"].append(float(done.stdout.split()[1]) / 1000)
    return {part: statistics.median(values) for part, values in samples.items()}


def grade(submission: str, lab: str | None, out: Path) -> tuple:
    """(wall seconds, results.json's data or None, the grader's exit status) of one grading, as make grade runs it."""
    results = out / "results.json"
    results.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "grader", "--submission", submission, "--results", str(results), "--quiet",
            "--build-dir", str(out / "grade")]
    seconds, done = timed([*argv, *(["--lab", lab] if lab else [])], cwd=KIT)
    data = json.loads(results.read_text()) if results.is_file() else None
    if data is None:
        print(done.stdout[-2000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
    return seconds, data, done.returncode


def table(floors: dict, stages: dict, total_seconds: float, largest: int) -> str:
    """The markdown table: the floor's parts, then a row per lab: seconds and, for each stage, x floor."""
    floor = sum(floors.values())
    lines = [f"Floor of one grading: {floor:.2f} s = empty nvcc build {floors['build']:.2f} s + CUDA context "
             f"{floors['context']:.2f} s + copy of the largest input ({largest / 2**30:.2f} GiB) "
             f"{floors['copy']:.2f} s",
             "",
             "| lab | seconds | total | " + " | ".join(STAGES) + " |",
             "|---|---|---|" + "---|" * len(STAGES)]
    for lab, spent in stages.items():
        if lab == "kit":
            continue
        cells = [f"{spent[s] / floor:.2f}x" if s in spent else "-" for s in STAGES]
        lines.append(f"| {lab} | {spent.get('total', 0):.1f} | {spent.get('total', 0) / floor:.2f}x | "
                     + " | ".join(cells) + " |")
    kit = stages.get("kit", {})
    harness = kit.get("harness builds", sum(kit.values()))  # the patterns' builds run side by side: their wall time
    labs = sum(spent.get("total", 0) for lab, spent in stages.items() if lab != "kit")
    # the simulator's checks run beside the labs (their own seconds above); what the grading waited for them after
    # the last lab's GPU work is apart
    waited = sum(spent.get("simulator check (waiting)", 0) for lab, spent in stages.items() if lab != "kit")
    lines += ["", f"Whole grading: {total_seconds:.1f} s ({total_seconds / floor:.1f}x floor): the labs "
                  f"{labs:.1f} s, the kit's harness builds {harness:.1f} s"
                  + (f", waiting for the simulator's checks {waited:.1f} s" if waited else "")
                  + f", the rest (start-up, report) {total_seconds - labs - harness - waited:.1f} s."]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", help="some labs: 03 or 03,05 (default: every lab)")
    parser.add_argument("--submission", default="solutions", help="the submission graded (default: solutions)")
    parser.add_argument("--out", default=str(KIT / "build" / "bench-grader"), help="where its files go")
    parser.add_argument("--repeats", type=int, default=3, help="processes per floor part (default 3)")
    args = parser.parse_args(argv)
    try:
        config = load_config()
        labs = config.select(args.lab)
    except ConfigError as e:
        parser.error(str(e))
    if not labs:
        parser.error(f"--lab {args.lab}: no such lab in grader/labs.toml")
    out = Path(args.out)
    largest = largest_input_bytes(config, labs)
    try:
        floors = measure_floors(out / "floor", labs[0].pattern, largest, args.repeats)
    except RuntimeError as e:
        print(f"bench-grader: {e}", file=sys.stderr)
        return 1
    seconds, data, status = grade(args.submission, args.lab, out)
    if data is None:
        print(f"bench-grader: the grader wrote no results.json (exit {status})", file=sys.stderr)
        return 1
    text = table(floors, data.get("extra_data", {}).get("stage_seconds", {}), seconds, largest)
    text += f"\nScore {data.get('score')} (grader exit {status}) on {data.get('extra_data', {}).get('device') or '?'}."
    (out / "bench-grader.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
