"""`make regrade-bench`: grades the same kernels K times in a row and counts how often their performance points change.

For each lab (--lab selects), the reference solution is built once and its performance test graded K times (--regrades,
default 5), each in a fresh harness process with a fresh seed, as grader/grade.py grades it (Grader.grade_performance:
the benchmark, nvidia-smi before and after, labs.toml's scoring). The correctness groups are left out: timing does not
touch them. Then, for each lab of --near (default 03 and 04), a kernel slowed to sit at a threshold of this GPU is
graded K times too (tools/instructor/variants/near.py: the reference solution plus an extra pass, sized from the
reference's median speedup here and corrected after one trial run), at each target of --targets:
  full   the speedup of full marks: labs.toml's margin should absorb the noise there; the linear rule cannot
  edge   full / (1 + min_margin), where the credited speedup meets full: the worst place for labs.toml's rule

Printed per kernel: the median speedup over the regrades, their min..max and range (max - min over the median), the
points of each regrade under the linear rule (what grading did before [scoring]) and under labs.toml's rule, computed
from the same measurements, and the flips: regrades whose points differ from the one before. Ratios and points only.
Everything measured (bench lines, nvidia-smi records) goes to OUT/regrade.json.

Exit status: 0 when labs.toml's rule gave every reference solution and every kernel at `full` the same points on every
regrade; 1 otherwise (a kernel at `edge` may flip: that is what it shows); 2 a kit problem (a build failed); 77 no
CUDA device here.
"""
import argparse
import json
import secrets
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.config import ConfigError, Scoring, load_config
from grader.grade import Grader
from grader.patterns import KIT
from grader.report.report import Report
from grader.score.score import perf_points
from tools.instructor.variants import near

NO_DEVICE, BROKEN = 77, 2
TARGETS = ("full", "edge")
TRIALS = 2  # runs of a near kernel's first guess, whose median corrects its slowdown


class NoDevice(Exception):
    """The harness found no CUDA device."""


@dataclass
class Kernel:
    """One kernel graded K times: its runs' speedups and the points each rule gave them."""

    name: str
    lab: object  # config.Lab
    target: str = ""  # "" for a reference solution, else full or edge
    target_speedup: float | None = None
    fraction: float | None = None
    speedups: list = field(default_factory=list)
    stepped: list = field(default_factory=list)  # labs.toml's rule
    linear: list = field(default_factory=list)  # the linear rule, same measurements
    statuses: list = field(default_factory=list)
    benches: list = field(default_factory=list)
    environments: list = field(default_factory=list)
    problems: list = field(default_factory=list)

    @property
    def median(self) -> float | None:
        return statistics.median(self.speedups) if self.speedups else None


def flips(points: list) -> int:
    """Regrades whose points differ from the regrade before."""
    return sum(1 for a, b in zip(points, points[1:]) if a != b)


def points_text(points: list) -> str:
    return " ".join(f"{p:g}" for p in points)


class Bench:
    def __init__(self, config, out: Path, regrades: int, log):
        self.config, self.out, self.regrades, self.log = config, out, regrades, log
        self.grader = Grader(config, KIT / "solutions", build_dir=out / "grade", log=lambda m: None)
        self.device = ""

    def build(self, lab, source: Path, folder: Path):
        built = self.grader.build(KIT, lab.pattern, source, folder, timeout=self.grader.build_timeout)
        if not built.ok:
            raise RuntimeError(f"{source} does not build:\n{built.message}")
        return built.program

    def grade(self, kernel: Kernel, program, times: int, record: bool = True) -> list:
        """Grades kernel's performance times times; returns the speedups (and records everything when record)."""
        lab, perf = kernel.lab, kernel.lab.performance
        found = []
        for _ in range(times):
            self.grader.seed = secrets.randbits(63)  # a fresh grading: a fresh seed, as grade.py draws
            result = self.grader.grade_performance(lab, program, True, Report("regrade", self.grader.seed))
            if self.grader.no_device:
                raise NoDevice()
            bench = result.data.get("bench") or {}
            speedup = result.data.get("speedup")
            if speedup is None:
                kernel.problems.append(f"{result.status}: {result.summary}")
                self.grader.hung.discard(lab.name)  # a timeout must not stop the next regrade
                continue
            self.device = self.device or str(bench.get("device", ""))
            found.append(speedup)
            if record:
                lower, full = result.data["lower"], result.data["full"]
                kernel.speedups.append(speedup)
                kernel.stepped.append(result.score)
                kernel.linear.append(perf_points(perf.points, speedup, lower, full, Scoring(), bench)[0])
                kernel.statuses.append(result.status)
                kernel.benches.append(bench)
                kernel.environments.append(result.data.get("environment"))
            self.log(f"  {kernel.name}: {speedup:.3f}x, {result.score:g} points")
        return found

    def near_kernels(self, lab, reference: Kernel, targets) -> list:
        perf = lab.performance
        if reference.median is None:
            return [Kernel(f"{lab.name} near {t}", lab, t, problems=["the reference gave no speedup"]) for t in targets]
        lower, full, _ = perf.thresholds_for(self.device)
        margin = perf.scoring.min_margin if perf.scoring.steps else 0.0
        kernels = []
        for target in targets:
            speedup = full if target == "full" else full / (1 + margin)
            kernel = Kernel(f"{lab.name} near {target}", lab, target, speedup)
            kernels.append(kernel)
            fraction = near.fraction_for(reference.median, speedup)
            if fraction < 0.005:
                kernel.problems.append(f"the reference ({reference.median:.2f}x) is not above {speedup:.2f}x here")
                continue
            folder = self.out / "near" / f"{lab.name}-{target}"
            self.log(f"{kernel.name}: calibrating (reference {reference.median:.3f}x, target {speedup:.3f}x)")
            source = near.submission(lab.name, fraction, folder / "src") / lab.name / lab.source
            trial = self.grade(kernel, self.build(lab, source, folder / "build"), TRIALS, record=False)
            if trial:
                fraction = near.recalibrate(fraction, reference.median, statistics.median(trial), speedup)
                source = near.submission(lab.name, fraction, folder / "src") / lab.name / lab.source
            kernel.fraction = fraction
            self.grade(kernel, self.build(lab, source, folder / "build"), self.regrades)
        return kernels


def table(kernels: list, bench: Bench, scoring) -> str:
    env = next((e for k in kernels for e in k.environments if e), {}) or {}
    clocks = [b.get("sm_clock_mhz") for k in kernels for b in k.benches if b.get("sm_clock_mhz")]
    top = env.get("sm_clock_max_mhz")
    clock = (f", SM clock {statistics.median(clocks):.0f} MHz median of the runs" + (f" (max {top:.0f})" if top else "")
             if clocks else "")
    rule = (f"{scoring.steps} steps, margin {100 * scoring.min_margin:g}%..{100 * scoring.max_margin:g}% "
            f"({scoring.spread_factor:g} x the speedup's spread)" if scoring.steps else "linear (no [scoring])")
    out = [f"Regrade benchmark on {bench.device or '?'} (driver {env.get('driver_version') or '?'}, CUDA runtime "
           f"{env.get('cuda_runtime') or '?'}{clock}): {bench.regrades} regrades per kernel",
           f"labs.toml's rule: {rule}; linear: the rule before [scoring], on the same measurements", "",
           f"{'kernel':<30} {'target':>7} {'median':>7} {'min..max':>13} {'range':>6}  "
           f"{'linear points':<30} {'flips':>5}  {'labs.toml points':<22} {'flips':>5}"]
    for k in kernels:
        target = f"{k.target_speedup:.2f}x" if k.target_speedup else "-"
        if not k.speedups:
            out.append(f"{k.name:<30} {target:>7}  not measured: {k.problems[0] if k.problems else '?'}"
                       + (f" (and {len(k.problems) - 1} more)" if len(k.problems) > 1 else ""))
            continue
        lo, hi, med = min(k.speedups), max(k.speedups), k.median
        out.append(f"{k.name:<30} {target:>7} {med:>6.3f}x {lo:>6.3f}..{hi:<6.3f} {100 * (hi - lo) / med:>5.1f}%  "
                   f"{points_text(k.linear):<30} {flips(k.linear):>5}  {points_text(k.stepped):<22} "
                   f"{flips(k.stepped):>5}")
        if k.problems:
            out.append(f"{'':<30} {len(k.problems)} regrade(s) gave no speedup; the first: {k.problems[0]}")
    throttled = sum(int(b.get("throttled") or 0) for k in kernels for b in k.benches)
    warnings = sorted({w for k in kernels for e in k.environments if e for w in e.get("warnings", [])})
    out += ["", f"samples discarded for a throttled clock: {throttled} in all"]
    out += [f"warning: {w}" for w in warnings]
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--regrades", type=int, default=5, help="gradings per kernel (default 5)")
    p.add_argument("--lab", default="",
                   help="reference solutions of the labs whose name starts with this (default all)")
    p.add_argument("--near", default="03,04",
                   help="labs with a near-threshold kernel (of tools/instructor/variants/near.py), "
                        "comma-separated prefixes, or none (default 03,04)")
    p.add_argument("--targets", default="full,edge", help="where the near kernels sit: full, edge (default both)")
    p.add_argument("--out", type=Path, default=KIT / "build" / "regrade", help="builds and regrade.json")
    args = p.parse_args(argv)
    if args.regrades < 2:
        p.error("--regrades: at least 2, to have something to compare")
    targets = [t for t in args.targets.split(",") if t]
    if any(t not in TARGETS for t in targets):
        p.error(f"--targets: each of {', '.join(TARGETS)}")
    try:
        config = load_config()
        labs = [lab for lab in config.select(args.lab or None) if lab.performance]
    except ConfigError as e:
        print(f"regrade_bench: {e}", file=sys.stderr)
        return BROKEN
    wanted = [] if args.near == "none" else [w for w in args.near.split(",") if w]
    near_labs = [lab for lab in config.labs if lab.performance and lab.name in near.VARIANTS
                 and any(lab.name.startswith(w) for w in wanted)]
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    args.out.mkdir(parents=True, exist_ok=True)
    bench = Bench(config, args.out, args.regrades, log)
    start = time.monotonic()
    kernels = []
    try:
        for pattern in dict.fromkeys(lab.pattern for lab in [*labs, *near_labs]):
            log(f"building the {pattern} harness")
            built = bench.grader.build_harness(KIT, pattern, timeout=bench.grader.build_timeout)
            if not built.ok:
                raise RuntimeError(built.message)
        shown = {lab.name for lab in labs}  # a near lab outside --lab: its reference is graded 3 times, not shown
        references = {lab.name: Kernel(lab.name, lab) for lab in [*labs, *near_labs]}
        log("building the reference solutions")
        with ThreadPoolExecutor(max_workers=8) as pool:
            programs = dict(zip(references, pool.map(
                lambda k: bench.build(k.lab, KIT / "solutions" / k.lab.name / k.lab.source,
                                      args.out / "solutions" / k.lab.name), references.values())))
        for name, kernel in references.items():
            times = args.regrades if name in shown else 3
            log(f"{name}: {times} regrades of the reference solution")
            bench.grade(kernel, programs[name], times)
            if name in shown:
                kernels.append(kernel)
        for lab in near_labs:
            kernels.extend(bench.near_kernels(lab, references[lab.name], targets))
    except NoDevice:
        print("make regrade-bench needs an NVIDIA GPU: this machine has no CUDA device.", file=sys.stderr)
        return NO_DEVICE
    except RuntimeError as e:
        print(f"regrade_bench: {e}", file=sys.stderr)
        return BROKEN
    scoring = next((lab.performance.scoring for lab in config.labs if lab.performance), Scoring())
    text = table(kernels, bench, scoring)
    print(text)
    record = {"device": bench.device, "regrades": args.regrades, "seconds": round(time.monotonic() - start, 1),
              "scoring": asdict(scoring),
              "kernels": [{"name": k.name, "lab": k.lab.name, "target": k.target or None,
                           "target_speedup": k.target_speedup, "fraction": k.fraction, "speedups": k.speedups,
                           "points": k.stepped, "linear_points": k.linear, "flips": flips(k.stepped),
                           "linear_flips": flips(k.linear), "statuses": k.statuses, "problems": k.problems,
                           "benches": k.benches, "environments": k.environments} for k in kernels]}
    (args.out / "regrade.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"\n(all figures: {args.out / 'regrade.json'}; {record['seconds']:.0f} s)")
    held = [k for k in kernels if k.target in ("", "full")]
    bad = [k.name for k in held if flips(k.stepped) or not k.speedups or k.problems]
    if bad:
        print(f"labs.toml's rule did not give the same points on every regrade of: {', '.join(bad)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
