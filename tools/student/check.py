"""`make check LAB=03`: quick feedback on one lab, in seconds, for the self-study loop.

    python3 -m tools.student.check --lab 03 [--submission labs|solutions|DIR] [--timeout 60] [--seed S]

Builds the lab exactly as the grader does (the kit's harness plus the one student file, through mk/lab.mk; the
pattern and the file come from grader/labs.toml and grader/patterns.py), then runs its harness program on small and edge
sizes: reductions on integer data (exact sums) and uniform data, scans with both block algorithms and both kinds,
compaction with the harness's four thresholds. One line per case says what it tried and PASS or FAIL, with
"yours / expected" for a failure; then a summary and where to go next (`make grade`, compute-sanitizer).

--lab is matched by prefix, like the grader's --lab (03, 03-sequential; 0 checks every lab). Each run has a
timeout, so a kernel that hangs cannot hang the check.

Exit status: 0 every case passed; 1 a case failed, hung or crashed; 2 the file does not compile (or bad usage);
77 no CUDA device here: the build is still checked, and it says what it would have done and which simulator
commands come nearest (grader/run/no_gpu.py: make sim, make grade SIM=1). Through make, 77 reads "Error 77" and make
itself exits 2.
"""
import argparse
import re
import secrets
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from grader.compile import build as build_mod
from grader.run import no_gpu
from grader.compile import static_check
from grader.config import ConfigError, load_config
from grader.run.no_gpu import shown
from grader.patterns import KIT, PATTERNS, lab_dirs, parse_size
from grader.patterns import select_labs as pick_labs
from grader.run.run import run_harness

EXIT_PASS, EXIT_FAIL, EXIT_BUILD, EXIT_NO_DEVICE = 0, 1, 2, 77
DEFAULT_TIMEOUT = 60.0

POISON_COUNT = 0xA5A5A5A5A5A5A5A5  # what *d_count holds when compact() never wrote it (harness/check_i32.h)

DATA_WORDS = {"integer": "integer data (exact sums)", "uniform": "uniform data (float sums, rounding allowed)",
              "signs": "+-1 data (exact sums)"}
ALGORITHM_WORDS = {"kogge-stone": "Kogge-Stone", "brent-kung": "Brent-Kung"}
THRESHOLD_WORDS = {0: "about half kept", 900: "about 1 in 20 kept", -1001: "all kept", 1000: "none kept"}


# ---- what each case tried, and its verdict in words ----

def case_fields(rerun) -> dict:
    """The options of a case's rerun arguments (the harness writes them with each case: grader.run.run.plan_reruns), as
    {"n": 1025, "data": "integer"}, {"n": 4097, "algorithms": "brent-kung", "kinds": "exclusive"} or
    {"n": 33, "thresholds": "900"}; {} without them."""
    fields, args = {}, list(rerun or [])
    for flag, value in zip(args[::2], args[1::2]):
        if flag.startswith("--"):
            fields[flag[2:]] = value
    if "n" in fields:
        fields["n"] = parse_size(fields["n"]) or fields["n"]
    return fields


def describe(name: str, rerun=None) -> str:
    """What a case tried, for people: "n=1025, integer data (exact sums)", "n=4097, exclusive scan, Brent-Kung",
    "n=33, keep x > 900 (about 1 in 20 kept)", from its rerun arguments; its name when it has none."""
    c = case_fields(rerun)
    if "n" not in c:
        return name
    if "data" in c:
        return f"n={c['n']}, {DATA_WORDS.get(c['data'], c['data'] + ' data')}"
    if "kinds" in c and "algorithms" in c:
        return f"n={c['n']}, {c['kinds']} scan, {ALGORITHM_WORDS.get(c['algorithms'], c['algorithms'])}"
    if "thresholds" in c:
        t = int(c["thresholds"]) if c["thresholds"].lstrip("-").isdigit() else c["thresholds"]
        words = THRESHOLD_WORDS.get(t)
        return f"n={c['n']}, keep x > {t}" + (f" ({words})" if words else "")
    return name


def _number(value) -> str:
    """A result line's number (the harness writes NaN and infinities as strings) in the shortest exact-enough form."""
    if isinstance(value, str):
        return {"nan": "NaN", "inf": "+inf", "-inf": "-inf"}.get(value, value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(value)
    return f"{value:.9g}"


def reduction_detail(line: dict) -> str:
    """"yours 1234 / expected 1235 (off by -1, must be exact)" from a reduction line's got, expected and tolerance."""
    got, expected, tolerance = line.get("got"), line.get("expected"), line.get("tolerance")
    if got is None or expected is None:
        return str(line.get("message") or f"status {line.get('status')}")
    text = f"yours {_number(got)} / expected {_number(expected)}"
    if isinstance(got, str) and got == "nan":
        return text + " (NaN: *d_out was never written, or a NaN crept into the sum)"
    if isinstance(got, str):
        return text + " (not a finite number)"
    off = got - expected if isinstance(expected, (int, float)) else None
    if off is None:
        return text
    if tolerance in (0, 0.0):
        return text + f" (off by {_number(off)}; this data sums exactly, so any difference is a dropped or " \
                      f"double-counted element)"
    return text + f" (off by {_number(off)}, more than the rounding tolerance {float(tolerance):.3g})"


def element_detail(message: str) -> str:
    """A scan or compaction message, reworded to read "yours / expected":
    "element 16: got 387, expected 2488 (5 of 4097 elements wrong)" -> "element 16: yours 387 / expected 2488
    (5 of 4097 elements wrong)"; "count: got 5, expected 7 of 31 elements" -> "count: yours 5 / expected 7 (of 31
    elements)". Other messages (writes past the output, a modified input) are kept as they are."""
    m = re.match(r"element (\d+): got (-?\d+), expected (-?\d+)( \(never written\))? \((\d+) of (\d+) elements "
                 r"wrong\)(.*)$", message, re.S)
    if m:
        never = " (never written)" if m[4] else ""
        return (f"element {m[1]}: yours {m[2]}{never} / expected {m[3]} ({m[5]} of {m[6]} elements wrong)"
                + m[7])
    m = re.match(r"count: got (\d+), expected (\d+) of (\d+) elements( \(\*d_count was never written\))?(.*)$",
                 message, re.S)
    if m:
        yours = "never written" if m[4] or int(m[1]) == POISON_COUNT else m[1]
        return f"count: yours {yours} / expected {m[2]} (of {m[3]} elements){m[5]}"
    return message


def failure_detail(line: dict) -> str:
    """The values of a failed case, as "yours / expected" where the line has them."""
    if line.get("status") == "error" or line.get("kind") == "error":
        return str(line.get("message") or "a CUDA error")
    if "got" in line and "expected" in line:
        return reduction_detail(line)
    return element_detail(str(line.get("message") or f"status {line.get('status')}"))


@dataclass
class CaseResult:
    """One case's verdict: PASS, FAIL, TIMEOUT, CRASH, ERROR or NOT RUN, and a detail for everything but PASS."""

    name: str
    verdict: str
    detail: str = ""
    rerun: list = field(default_factory=list)  # the harness arguments that rerun just this case

    def render(self) -> str:
        text = f"  {self.verdict:<7} {describe(self.name, self.rerun)}"
        return text + (f": {self.detail}" if self.detail else "")


OUTCOME_VERDICTS = {"timeout": "TIMEOUT", "crash": "CRASH", "cuda-error": "ERROR", "harness-error": "ERROR"}


def case_results(outcome) -> list:
    """The CaseResults of one harness run (a grader.run.run.Outcome), one per planned case, in plan order. The case a
    run hung or crashed in gets the run's message; the cases after it were never run."""
    by_case = {}
    for line in outcome.lines:
        by_case.setdefault(line.get("case"), []).append(line)
    results = []
    for name in outcome.cases:
        lines = by_case.get(name, [])
        rerun = outcome.reruns.get(name, [])
        bad = next((ln for ln in lines if ln.get("status") != "pass"), None)
        if lines and bad is None:
            results.append(CaseResult(name, "PASS", rerun=rerun))
        elif bad is not None:
            verdict = "ERROR" if bad.get("status") == "error" else "FAIL"
            results.append(CaseResult(name, verdict, failure_detail(bad), rerun))
        elif name == outcome.case and outcome.status in OUTCOME_VERDICTS:
            results.append(CaseResult(name, OUTCOME_VERDICTS[outcome.status], outcome.message, rerun))
        elif name == outcome.case and outcome.status == "fail":  # the first case the program never reported
            results.append(CaseResult(name, "FAIL", outcome.message, rerun))
        elif outcome.status in OUTCOME_VERDICTS or outcome.status == "fail":
            results.append(CaseResult(name, "NOT RUN", "the program stopped before this case", rerun))
        else:
            results.append(CaseResult(name, "NOT RUN", rerun=rerun))
    if not outcome.cases and not outcome.passed:  # stopped before its plan: nothing to list case by case
        verdict = OUTCOME_VERDICTS.get(outcome.status, "FAIL")
        results.append(CaseResult(outcome.case or "the run", verdict, outcome.message))
    return results


def summary_line(results: list) -> str:
    """"18 passed, 2 failed" (and how many never ran, when some did not)."""
    passed = sum(r.verdict == "PASS" for r in results)
    not_run = sum(r.verdict == "NOT RUN" for r in results)
    failed = len(results) - passed - not_run
    return f"{passed} passed, {failed} failed" + (f", {not_run} not run" if not_run else "")


# ---- labs ----

def kit_labs(kit: Path = KIT) -> list:
    """The kit's lab folders (labs/, or solutions/ in a kit without labs/), in order."""
    return lab_dirs(kit / "labs") or lab_dirs(kit / "solutions")


def select_labs(prefix: str, kit: Path = KIT) -> list:
    """The lab folders prefix picks (grader.patterns.select_labs: 03,05 or 3); ValueError naming the labs if none."""
    labs = kit_labs(kit)
    names = pick_labs([d.name for d in labs], prefix)
    return [d for d in labs if d.name in names]


def kit_lab(name: str):
    """The lab of grader/labs.toml called name (its pattern, file and the harness arguments it adds to every
    correctness run: lab 08's one block algorithm); ValueError when labs.toml has none or cannot be read."""
    try:
        lab = load_config().named(name)
    except ConfigError as e:
        raise ValueError(str(e)) from None
    if lab is None:
        raise ValueError(f"grader/labs.toml has no lab {name}")
    return lab


def submission_tag(submission: Path) -> str:
    """A folder name for a submission's builds: labs, solutions, or the submission folder's own name."""
    name = Path(submission).resolve().name
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "submission"


@dataclass
class LabCheck:
    """What checking one lab found: build failed, no device, or the case results."""

    name: str
    built: bool = True
    no_device: bool = False
    results: list = field(default_factory=list)
    forbidden: list = field(default_factory=list)  # the grader's static-check findings: the lab would score 0

    @property
    def passed(self) -> bool:
        return self.built and not self.no_device and not self.forbidden and bool(self.results) and all(
            r.verdict == "PASS" for r in self.results)


def check_lab(lab_dir: Path, submission: Path, *, kit: Path, seed: int, timeout: float, build_root: Path,
              out, build=build_mod.build_lab, run=run_harness, build_only: bool = False,
              static=static_check.check_object) -> LabCheck:
    """Builds and checks one lab, printing as it goes; with build_only (no device found already), only builds."""
    lab = kit_lab(lab_dir.name)
    pattern, source_name = lab.pattern, lab.source
    source = Path(submission) / lab_dir.name / source_name
    folder = build_root / lab_dir.name
    print(f"make check: lab {lab_dir.name}, {shown(source)} (seed {seed})", file=out, flush=True)
    built = build(kit, pattern, source, folder)
    if not built.ok:
        print(built.message, file=out)
        print(f"\nlab {lab_dir.name}: {source_name} does not build; fix the first error above, then run make check "
              f"again.", file=out)
        return LabCheck(lab_dir.name, built=False)
    check = LabCheck(lab_dir.name)
    try:  # the grader's static checks first: a file they reject scores 0, however right its answers
        verdict = static(built.object, pattern)
    except static_check.ToolError as e:
        print(f"  (the grader's static checks could not run here: {e})", file=out)
    else:
        if not verdict.ok:
            print(f"  FORBIDDEN  {source_name} uses what the labs may not; the grader gives this lab 0 points:",
                  file=out)
            for finding in verdict.findings:
                print(f"    {finding.message}", file=out)
            check.forbidden = list(verdict.findings)
            return check
    if build_only:
        print(f"{source_name} builds; its cases need a GPU to run.", file=out)
        check.no_device = True
        return check
    extra = list(lab.args)
    for k, args in enumerate(PATTERNS[pattern].check_runs):
        outcome = run(built.program, [*args, *extra, "--seed", str(seed)], timeout=timeout,
                      workdir=folder / "runs" / str(k), cwd=kit, source=source_name)
        if outcome.status == "no-device":
            print(f"{source_name} builds; its cases need a GPU to run.", file=out)
            check.no_device = True
            return check
        results = case_results(outcome)
        for r in results:
            print(r.render(), file=out, flush=True)
        check.results.extend(results)
        if outcome.status == "timeout":  # a hung kernel would hang again in the next run: stop here
            break
    program = shown(built.program)
    print(f"lab {lab_dir.name}: {summary_line(check.results)}", file=out)
    first_bad = next((r for r in check.results if r.verdict != "PASS"), None)
    rerun = first_bad.rerun if first_bad else []
    if first_bad and rerun:
        command = shlex.join([program, *rerun, *extra, "--seed", str(seed)])
        print(f"  rerun the first failing case:       {command}", file=out)
        print(f"  crashes, CUDA errors, odd values:   compute-sanitizer {command}", file=out)
        if first_bad.verdict in ("ERROR", "CRASH", "TIMEOUT"):
            print("      (it names the line that reads or writes out of bounds; --tool racecheck finds shared-memory "
                  "races, --tool synccheck barriers that not every thread reaches)", file=out)
    else:
        print(f"  crashes and CUDA errors:            compute-sanitizer {program} --n 1025", file=out)
    grade = f"make grade LAB={lab_dir.name[:2]}"
    if Path(submission).resolve() != (kit / "labs").resolve():
        grade += f" SUBMISSION={shown(submission)}"
    print(f"  the full grade (datasets, large sizes, timing): {grade}", file=out)
    return check


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lab", help="the lab: its number or name, matched by prefix (03, 03-sequential)")
    p.add_argument("--submission", default="labs", help="a folder shaped like labs/ (default: labs)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help="seconds per harness run before it counts as hung (default %(default)g)")
    p.add_argument("--seed", type=int, help="the data seed, to rerun a check (default: a fresh one)")
    p.add_argument("--build-dir", help="where the labs are built (default: build/check/SUBMISSION)")
    return p.parse_args(argv)


def main(argv=None, *, kit: Path = KIT, out=None, build=build_mod.build_lab, build_harness=build_mod.build_harness,
         run=run_harness, static=static_check.check_object) -> int:
    """Runs the check as from the command line and returns its exit status. build, build_harness, run and static
    are hooks for tests (grader.compile.build.build_lab, grader.compile.build.build_harness, grader.run.run.run_harness,
    grader.compile.static_check.check_object)."""
    out = out or sys.stdout
    args = parse_args(argv)
    kit = Path(kit)
    if not args.lab:
        names = ", ".join(d.name for d in kit_labs(kit))
        print(f"make check needs a lab: make check LAB=03 (the labs: {names})", file=sys.stderr)
        return EXIT_BUILD
    try:
        labs = select_labs(args.lab, kit)
    except ValueError as e:
        print(f"make check: {e}", file=sys.stderr)
        return EXIT_BUILD
    submission = Path(args.submission)
    if not submission.is_dir():
        print(f"make check: SUBMISSION={args.submission}: no such folder", file=sys.stderr)
        return EXIT_BUILD
    seed = args.seed if args.seed is not None else secrets.randbits(31)
    build_root = Path(args.build_dir) if args.build_dir else kit / "build" / "check" / submission_tag(submission)
    checks = []
    try:
        patterns = dict.fromkeys(kit_lab(d.name).pattern for d in labs)
    except ValueError as e:
        print(f"make check: {e}", file=sys.stderr)
        return EXIT_BUILD
    for pattern in patterns:
        harness = build_harness(kit, pattern)
        if not harness.ok:
            print(harness.message, file=out)
            return EXIT_BUILD
    for k, lab_dir in enumerate(labs):
        if k:
            print(file=out)
        check = check_lab(lab_dir, submission, kit=kit, seed=seed, timeout=args.timeout, build_root=build_root,
                          out=out, build=build, run=run, build_only=any(c.no_device for c in checks),
                          static=static)
        checks.append(check)
    if any(not c.built for c in checks):
        return EXIT_BUILD
    if any(c.no_device for c in checks):
        print(f"\n{no_gpu.message('check', labs[0].name, submission)}", file=out)
        return EXIT_NO_DEVICE
    return EXIT_PASS if all(c.passed for c in checks) else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
