"""`make calibrate`: performance thresholds for this machine's GPU model, from the reference solutions' benchmarks
(tools/student/bench.py's ladder) and the rule at the top of grader/labs.toml, written to grader/thresholds.d/GPU.toml.

    python3 -m tools.instructor.calibrate [--labs 03,04] [--repeats 3] [--out FILE] [--dry-run]
    python3 -m tools.instructor.calibrate --from build/calibrate/GPU.json     recompute from saved measurements (no GPU)

Each lab's reference solution is timed --repeats times at its benchmark size (labs.toml's `bench`, 2^26), every
lab once per round; `measured` is the median speedup, rounded to 2 decimals. Then, as labs.toml says:
  full  = 0.9 * measured;
  lower = the previous rung's measured speedup, for a lab timed against the baseline kernel that has a previous
          rung (the lab before it in labs.toml, same pattern and yardstick: 02-05); with no previous rung (lab 01,
          whose reference is the baseline itself) lower 0.5 and full 0.8; for a lab timed against CUB (06-08)
          lower = 0.5 * full.
Calibrating a lab with a previous rung times that rung too (its measured speedup is lower's), without writing it.

Why a file of its own rather than an edit of labs.toml: a calibration is a measurement of one GPU model, made
where that GPU is, and reviewed like any other change. grader/config.py lays every grader/thresholds.d/*.toml over
labs.toml's [labs.NN-stage.performance.gpus."GPU"] tables (grader/config.py), in place of any labs.toml has for
that model, so a recalibration needs no hand edit; commit the file and the student release and Gradescope
autograder ship it. A file already there for this GPU keeps the labs not calibrated now. The raw measurements go to
build/calibrate/GPU.json (--from recomputes from them).

Exit status: 0 written; 1 a benchmark failed; 2 bad usage; 77 no NVIDIA GPU here.
"""
import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from grader.config import THRESHOLDS_FOLDER, ConfigError, DEFAULT_PATH, load_config
from grader.patterns import KIT, select_labs

NO_DEVICE = 77
FULL_FACTOR, CUB_LOWER_FACTOR = Decimal("0.9"), Decimal("0.5")
FIRST_RUNG = (0.5, 0.8)  # (lower, full) of a lab whose reference is the baseline itself


def r2(x) -> float:
    """x rounded to 2 decimals, halves up (0.355 -> 0.36), without binary floating point's surprises."""
    return float(Decimal(str(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def gpu_slug(name: str) -> str:
    """A file name for a GPU model: "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


def previous_rung(lab, labs):
    """The lab before lab in labs.toml's order with the same pattern, timed against the baseline too, else None
    (a lab timed against CUB has none: its lower is half its full)."""
    if not lab.performance or lab.performance.yardstick != "baseline":
        return None
    before = [x for x in labs if x.name < lab.name and x.pattern == lab.pattern and x.performance
              and x.performance.yardstick == "baseline"]
    return before[-1] if before else None


def thresholds(lab, measured: float, previous_measured: float | None) -> dict:
    """{measured, lower, full, why} for lab by the rule of labs.toml (see the module's docstring). A previous rung
    that measured faster than this lab's full (lower would exceed full) gives lower = 0.5 * full, and says so."""
    m = Decimal(str(r2(measured)))
    full = float((FULL_FACTOR * m).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    if lab.performance.yardstick == "cub":
        lower = r2(CUB_LOWER_FACTOR * FULL_FACTOR * m)
        return {"measured": float(m), "lower": lower, "full": full, "why": "lower 0.5 * full; full 0.9 * measured"}
    if previous_measured is None:
        lower, full = FIRST_RUNG
        return {"measured": float(m), "lower": lower, "full": full,
                "why": "the first rung: its reference is the baseline itself"}
    lower = r2(previous_measured)
    why = "lower: the previous rung's measured speedup; full 0.9 * measured"
    if lower > full:
        lower = r2(CUB_LOWER_FACTOR * FULL_FACTOR * m)
        why = (f"the previous rung measured {r2(previous_measured):g}, more than this lab's full: lower 0.5 * full "
               f"instead (check the reference solutions on this GPU)")
    return {"measured": float(m), "lower": lower, "full": full, "why": why}


def calibrate(config, measurements: dict, wanted: list, run_seconds: dict | None = None) -> dict:
    """{lab name: thresholds(...)} for the wanted labs from measurements ({lab name: [speedups]}), medians taken, each
    with the reference solution's slowest run of each correctness group (run_seconds: {lab: {group: seconds}}) where
    measured. KeyError naming a lab whose (or whose previous rung's) measurements are missing."""
    labs = list(config.labs)
    by_name = {lab.name: lab for lab in labs}
    medians = {name: statistics.median(v) for name, v in measurements.items() if v}
    result = {}
    for name in wanted:
        lab = by_name[name]
        rung = previous_rung(lab, labs)
        if name not in medians or (rung and rung.name not in medians):
            raise KeyError(f"no measurements of {name if name not in medians else rung.name}")
        result[name] = thresholds(lab, medians[name], medians[rung.name] if rung else None)
        result[name]["runs"] = [r2(x) for x in measurements[name]]
        if (run_seconds or {}).get(name):
            result[name]["run_seconds"] = {group: r2(max(0.01, x)) for group, x in run_seconds[name].items()}
    return result


def _toml_string(s: str) -> str:
    return json.dumps(s)  # a TOML basic string is a JSON string for the names used here


def render(gpu: str, calibrated_on: str, tables: dict) -> str:
    """The thresholds file: a header saying what it is, [calibration], then each lab's table, in lab order.
    tables: {lab: {measured, lower, full, why?, runs?}}."""
    lines = [
        f"# Performance thresholds for the {gpu},",
        "# made by `make calibrate` (tools/instructor/calibrate.py) from the reference solutions' benchmarks on this GPU",
        "# model, by the rule at the top of grader/labs.toml.",
        f"# grader/config.py lays this file over labs.toml's [labs.NN-stage.performance.gpus.{_toml_string(gpu)}]",
        "# tables, in place of any labs.toml has for this model (grader/config.py). Review it and commit it: the",
        "# student release and the Gradescope autograder ship grader/thresholds.d/.",
        "",
        "[calibration]",
        f"gpu = {_toml_string(gpu)}",
        f"calibrated_on = {_toml_string(calibrated_on)}",
    ]
    for lab in sorted(tables):
        t = tables[lab]
        runs = f"  # median of {', '.join(f'{x:g}' for x in t['runs'])}" if t.get("runs") else ""
        why = f"  # {t['why']}" if t.get("why") else ""
        lines += ["", f"[labs.{lab}.performance.gpus.{_toml_string(gpu)}]", f"measured = {t['measured']:g}{runs}",
                  f"lower = {t['lower']:g}{why}", f"full = {t['full']:g}"]
        if t.get("run_seconds"):  # the time limits of grader/labs.toml's [limits] come from these
            lines.append("run_seconds = {" + ", ".join(f"{_toml_string(g)} = {x:g}" for g, x in
                                                       t["run_seconds"].items()) + "}")
    return "\n".join(lines) + "\n"


def existing_tables(path: Path, gpu: str) -> dict:
    """{lab: table} of a thresholds file already written for gpu (empty when there is none)."""
    import tomllib
    if not path.is_file():
        return {}
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return {lab: t["performance"]["gpus"][gpu] for lab, t in data.get("labs", {}).items()
            if gpu in t.get("performance", {}).get("gpus", {})}


def warnings(config, gpu: str, result: dict) -> list:
    """What an instructor should know: labs.toml's defaults (for GPUs not calibrated) stricter than this GPU's
    thresholds, which the rule says should be the most lenient of the calibrated ones."""
    notes = []
    for lab in config.labs:
        t = result.get(lab.name)
        if t and (lab.performance.lower > t["lower"] or lab.performance.full > t["full"]):
            notes.append(f"{lab.name}: labs.toml's defaults for other GPUs (lower {lab.performance.lower:g}, full "
                         f"{lab.performance.full:g}) are stricter than the {gpu}'s (lower {t['lower']:g}, full "
                         f"{t['full']:g}); the rule wants the most lenient calibrated: consider lowering them")
    return notes


def no_gpu_reason() -> str | None:
    """Why this machine cannot calibrate, or None when nvidia-smi lists a GPU."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "nvidia-smi is not installed"
    try:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"nvidia-smi -L failed: {e}"
    if listed.returncode != 0 or "GPU" not in listed.stdout:
        return f"nvidia-smi -L lists no GPU ({(listed.stdout + listed.stderr).strip()[:200]})"
    return None


def measure(config, names: list, repeats: int, out: Path) -> dict:
    """Times the named labs' solutions `repeats` times with tools/student/bench.py's ladder; returns the saved record:
    {"gpu", "sm", "size", "repeats", "when", "speedups": {lab: [...]}}. Raises bench.BenchError."""
    from tools.student import bench
    from grader.patterns import lab_dirs
    sizes = {config_lab.performance.bench for config_lab in config.labs if config_lab.name in names}
    if len(sizes) != 1:
        raise bench.BenchError(f"the labs benchmark at different sizes ({', '.join(sorted(sizes))}): calibrate "
                               "them separately (--labs)", 2)
    size = sizes.pop()
    folders = [d for d in lab_dirs(KIT / "solutions") if d.name in names]
    missing = set(names) - {d.name for d in folders}
    if missing:
        raise bench.BenchError(f"no reference solution for {', '.join(sorted(missing))} in solutions/", 2)
    _, rows = bench.ladder(folders, [size] * repeats, out)
    devices = {str(line.get("device")) for _, line in rows}
    if len(devices) != 1:
        raise bench.BenchError(f"the benchmarks ran on different GPUs: {', '.join(sorted(devices))}")
    speedups = {}
    for name, line in rows:
        speedups.setdefault(name, []).append(float(line["speedup"]))
    return {"gpu": devices.pop(), "sm": str(rows[0][1].get("sm", "?")), "size": size, "repeats": repeats,
            "when": time.strftime("%Y-%m-%d"), "speedups": speedups}


def measure_run_seconds(names: list, out: Path) -> dict:
    """{lab: {group: seconds}}: one grading of the named labs' reference solutions (python3 -m grader), each
    correctness group's slowest run as the grader timed it (results.json's extra_data.run_seconds)."""
    results = out / "results.json"
    results.unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "grader", "--submission", "solutions", "--lab", ",".join(names), "--quiet",
                    "--results", str(results), "--build-dir", str(out / "grade")], cwd=KIT, capture_output=True)
    if not results.is_file():
        return {}
    return json.loads(results.read_text()).get("extra_data", {}).get("run_seconds", {})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labs", default="", help="comma-separated lab prefixes (default: every lab with a "
                                                   "performance test)")
    parser.add_argument("--repeats", type=int, default=3, help="benchmark rounds; the median counts (default 3)")
    parser.add_argument("--out", type=Path, help=f"the file to write (default grader/{THRESHOLDS_FOLDER}/GPU.toml)")
    parser.add_argument("--dry-run", action="store_true", help="print the file instead of writing it")
    parser.add_argument("--from", dest="source", type=Path, help="recompute from measurements saved by an "
                                                                 "earlier run (build/calibrate/GPU.json): no GPU")
    parser.add_argument("--config", type=Path, default=DEFAULT_PATH, help="the labs file (default grader/labs.toml)")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
    except ConfigError as e:
        print(f"calibrate: {e}", file=sys.stderr)
        return 2
    try:
        picked = select_labs([lab.name for lab in config.labs], args.labs)
    except ValueError:
        picked = []
    wanted = [lab.name for lab in config.labs if lab.performance and lab.name in picked]
    if not wanted:
        print(f"calibrate: --labs {args.labs}: no lab with a performance test matches", file=sys.stderr)
        return 2
    timed = list(dict.fromkeys(
        n for name in wanted for n in ([name] + [r.name for r in [previous_rung(
            next(x for x in config.labs if x.name == name), list(config.labs))] if r])))
    if args.source:
        try:
            record = json.loads(args.source.read_text())
        except (OSError, ValueError) as e:
            print(f"calibrate: --from {args.source}: {e}", file=sys.stderr)
            return 2
    else:
        reason = no_gpu_reason()
        if reason:
            print(f"make calibrate needs an NVIDIA GPU: the thresholds are those of the GPU it runs on ({reason}).",
                  file=sys.stderr)
            return NO_DEVICE
        from tools.student import bench
        try:
            record = measure(config, sorted(timed), max(1, args.repeats), KIT / "build" / "calibrate" / "bench")
        except bench.BenchError as e:
            if e.status == NO_DEVICE:
                print("make calibrate needs an NVIDIA GPU: this machine has no CUDA device.", file=sys.stderr)
            else:
                print(f"calibrate: {e}", file=sys.stderr)
            return e.status
        record["run_seconds"] = measure_run_seconds(wanted, KIT / "build" / "calibrate")
        saved = KIT / "build" / "calibrate" / f"{gpu_slug(record['gpu'])}.json"
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps(record, indent=2) + "\n")
        print(f"measurements saved to {saved}", file=sys.stderr)
    try:
        result = calibrate(config, record["speedups"], wanted, record.get("run_seconds"))
    except KeyError as e:
        print(f"calibrate: {e.args[0]}", file=sys.stderr)
        return 2
    gpu = record["gpu"]
    out = args.out or config.path.parent / THRESHOLDS_FOLDER / f"{gpu_slug(gpu)}.toml"
    tables = {**existing_tables(out, gpu), **result}
    calibrated_on = (f"{record['when']} from the reference solutions (make calibrate at {record['size']}, median "
                     f"of {record['repeats']} runs, sm {record['sm']})")
    text = render(gpu, calibrated_on, tables)
    print(f"{'lab':<20} {'measured':>8} {'lower':>6} {'full':>6}   runs")
    for name in wanted:
        t = result[name]
        print(f"{name:<20} {t['measured']:>8g} {t['lower']:>6g} {t['full']:>6g}   {', '.join(map(str, t['runs']))}")
    for note in warnings(config, gpu, result):
        print(f"note: {note}", file=sys.stderr)
    if args.dry_run:
        print(text)
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    try:
        load_config(args.config)
    except ConfigError as e:
        print(f"calibrate: wrote {out}, but the grader cannot load it: {e}", file=sys.stderr)
        return 1
    print(f"wrote {out}: thresholds for the {gpu}; the grader uses them from now on (review, then commit the file)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
