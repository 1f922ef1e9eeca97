"""Points: a correctness group is all or nothing; a hazard in the student's code (a race, a barrier misuse, an
out-of-bounds access, an uninitialized read) takes its share of every correctness group's points (apply_hazards,
labs.toml's hazard_cost); performance is earned in whole steps between two speedups, the measured speedup credited
with a margin for the noise of timing (labs.toml's [scoring]; linear without it).

Every function here is pure: it turns harness Outcomes (grader/run/run.py) into TestResults for the report.
"""
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader.config import SANITIZERS
from grader.run.run import NO_DEVICE_MESSAGE

# The first test of every lab: the static checks of its compiled file (grader/compile/static_check.py). It has no points
# of its own; when it finds something, every other test of the lab scores 0 and none runs.
STATIC_CHECKS = "static checks"
FORBIDDEN = "FORBIDDEN"

# The status of a correctness group whose points a hazard took (apply_hazards).
HAZARD = "HAZARD"

# Table status of a run that did not pass, by Outcome.status.
STATUS_WORDS = {"fail": "FAIL", "timeout": "TIMEOUT", "crash": "CRASH", "cuda-error": "CUDA ERROR",
                "harness-error": "ERROR", "no-device": "not run"}


@dataclass
class TestResult:
    """One graded test (a group or the performance test of a lab), as reported to people and to Gradescope.

    status: pass, partial, slow (below the lower threshold), FAIL, TIMEOUT, CRASH, CUDA ERROR, NO BUILD, FORBIDDEN
    (the static checks found what the lab's file may not use), ERROR (a kit problem, not the student's doing) or
    not run.
    summary is one line for the table; detail is more text (compiler errors, how to reproduce) for both reports.
    bonus: the test belongs to a bonus lab (its points count in the total, its max_score does not).
    """

    lab: str
    name: str
    max_score: float
    score: float = 0.0
    status: str = "FAIL"
    summary: str = ""
    detail: str = ""
    data: dict = field(default_factory=dict)
    bonus: bool = False

    @property
    def full(self) -> bool:
        """All its points; a test of no points (the static checks) only when it passed."""
        return self.score >= self.max_score and (self.max_score > 0 or self.status == "pass")

    @property
    def title(self) -> str:
        return f"{self.lab}{' (bonus)' if self.bonus else ''}: {self.name}"


def not_run(lab: str, name: str, points: float, why: str, detail: str = "") -> TestResult:
    """A test that was not run and scores 0, for the reason why ("not run: ..." is shown as it is)."""
    return TestResult(lab, name, points, 0.0, "not run", why, detail)


def no_device(lab: str, name: str, points: float) -> TestResult:
    """A test not run because the harness found no CUDA device here."""
    return not_run(lab, name, points, NO_DEVICE_MESSAGE)


def score_static_check(lab: str, verdict, source: str) -> TestResult:
    """The static checks' row from a static_check.Verdict of the lab's file source: pass, or FORBIDDEN with one
    finding in the summary and all of them in the detail; data["findings"] lists them for results.json."""
    notes = "\n".join(f"note: {n}" for n in verdict.notes)
    if verdict.ok:
        return TestResult(lab, STATIC_CHECKS, 0.0, 0.0, "pass",
                          f"nothing forbidden in compiled {source}: no libraries, host copies, files, processes "
                          f"or code before main", notes)
    messages = [f.message for f in verdict.findings]
    extra = len(messages) - 1
    more = f" (and {extra} more finding{'s' if extra > 1 else ''} below)" if extra else ""
    detail = "\n".join([f"compiled {source}:", *(f"- {m}" for m in messages),
                        "Every test of this lab scores 0 and none was run: remove what is listed, then grade again.",
                        *([notes] if notes else [])])
    return TestResult(lab, STATIC_CHECKS, 0.0, 0.0, FORBIDDEN, messages[0] + more, detail,
                      {"findings": [{"rule": f.key, "message": f.message} for f in verdict.findings]})


def reproduce_line(lab: str, args, program: str) -> str:
    """How a student reruns one harness run by hand, from the kit's root."""
    return f"to reproduce, from the kit's root: make -C labs/{lab} && labs/{lab}/build/{program} {' '.join(args)}"


def score_group(lab: str, group, runs, program: str) -> TestResult:
    """Scores a correctness group from its runs, a list of (args, Outcome) in the order they ran.

    Full points only if there was at least one run and every run passed; otherwise 0, with the first failing
    run's status, case and message.
    """
    for args, outcome in runs:
        if outcome.status == "no-device":
            return no_device(lab, group.name, group.points)
        if not outcome.passed:
            where = f"{outcome.case}: " if outcome.case else ""
            first, *rest = outcome.message.splitlines() or [""]
            detail = "\n".join([*rest, reproduce_line(lab, args, program)])
            return TestResult(lab, group.name, group.points, 0.0, STATUS_WORDS.get(outcome.status, "FAIL"),
                              where + first, detail)
    if not runs:
        return TestResult(lab, group.name, group.points, 0.0, "ERROR", "no runs")
    cases = sum(len(o.cases) for _, o in runs)
    summary = f"{cases} case{'s' if cases != 1 else ''} passed" + (f" in {len(runs)} runs" if len(runs) > 1 else "")
    detail = "\n".join(f"passed: {' '.join(args)}" for args, _ in runs) if len(runs) <= 3 else ""
    result = TestResult(lab, group.name, group.points, group.points, "pass", summary, detail)
    result.data["run_seconds"] = round(max(o.seconds for _, o in runs), 3)  # its slowest run: make calibrate
    return result


def perf_fraction(speedup: float, lower: float, full: float) -> float:
    """The share of the performance points for a speedup: 0 at or below lower, 1 at or above full, linear between."""
    if speedup >= full:
        return 1.0
    if speedup <= lower:
        return 0.0
    return (speedup - lower) / (full - lower)


def step_thresholds(lower: float, full: float, steps: int) -> list:
    """The speedups at which steps 1..steps are earned: evenly spaced after lower, the last one at full."""
    return [full if k == steps else lower + k / steps * (full - lower) for k in range(1, steps + 1)]


def perf_steps(credited: float, lower: float, full: float, steps: int) -> int:
    """How many of the steps a credited speedup earns: those whose threshold it reaches (none at or below lower)."""
    if credited <= lower and lower < full:
        return 0
    return sum(1 for t in step_thresholds(lower, full, steps) if credited >= t * (1 - 1e-12))


def speedup_spread(bench: dict) -> float:
    """The relative spread of the speedup in one benchmark: the harness's speedup_spread (IQR / median of the ratios
    of the samples, each taken in one round), else the student's and the yardstick's spreads combined, else 0."""
    def number(key):
        try:
            value = float(bench.get(key))
        except (TypeError, ValueError):
            return None
        return value if math.isfinite(value) and value >= 0 else None
    direct = number("speedup_spread")
    if direct is not None:
        return direct
    return math.hypot(number("spread") or 0.0, number("baseline_spread") or 0.0)


def credit_margin(scoring, bench: dict) -> float:
    """The margin a speedup is credited with: spread_factor times its spread, within [min_margin, max_margin]."""
    return min(scoring.max_margin, max(scoring.min_margin, scoring.spread_factor * speedup_spread(bench)))


def perf_points(points: float, speedup: float, lower: float, full: float, scoring, bench: dict) -> tuple:
    """(score, fraction, credited speedup, margin, steps earned) for a measured speedup under scoring; steps earned
    is None for the linear rule."""
    if not scoring.steps:
        fraction = perf_fraction(speedup, lower, full)
        return round(points * fraction, 2), fraction, speedup, 0.0, None
    margin = credit_margin(scoring, bench)
    credited = speedup * (1 + margin)
    earned = perf_steps(credited, lower, full, scoring.steps)
    fraction = earned / scoring.steps
    return round(points * fraction, 2), fraction, credited, margin, earned


def score_performance(lab: str, perf, outcome, calibration_gpu: str = "", name: str = "performance") -> TestResult:
    """Scores a --bench run: points * perf_fraction(speedup), or 0 when the run failed (a wrong sum, a crash...).

    With perf.yardstick "cub" the speedup is the fraction of CUB's speed and the report says "0.45x of CUB";
    with "baseline", the speedup over the kit's baseline kernel: "6.10x baseline".
    """
    against = "CUB" if perf.yardstick == "cub" else "baseline"
    unit = "x of CUB" if perf.yardstick == "cub" else "x baseline"
    bench = outcome.bench_line()
    device = str((bench or {}).get("device", ""))
    lower, full, calibrated_gpu = perf.thresholds_for(device)
    thresholds = f"full marks at {full:.2f}{unit}, none at or below {lower:.2f}{unit}"
    if outcome.status == "no-device":
        return no_device(lab, name, perf.points)
    if not outcome.passed or bench is None:
        message = outcome.message or "no benchmark result"
        if outcome.passed:
            message = "the benchmark wrote no result line"
        return TestResult(lab, name, perf.points, 0.0, STATUS_WORDS.get(outcome.status, "FAIL"),
                          message.splitlines()[0], message + f"\n({thresholds})", {"bench": bench})
    try:
        speedup = float(bench["speedup"])
    except (KeyError, TypeError, ValueError):
        speedup = math.nan
    if not math.isfinite(speedup) or speedup <= 0:
        return TestResult(lab, name, perf.points, 0.0, "ERROR", f"no valid speedup in the benchmark line: {bench}")
    scoring = perf.scoring
    score, fraction, credited, margin, earned = perf_points(perf.points, speedup, lower, full, scoring, bench)
    status = "pass" if fraction >= 1 else "partial" if fraction > 0 else "slow"
    timing = (f"{float(bench.get('student_ms', 0)):.4f} ms vs {against} {float(bench.get('baseline_ms', 0)):.4f} ms, "
              f"spread {100 * float(bench.get('spread', 0)):.1f}%, {bench.get('samples', '?')} samples")
    rule = ""
    if earned is not None:
        rule = (f"; {credited:.2f}{unit} with the {100 * margin:.1f}% margin for timing noise: "
                f"{earned} of {scoring.steps} steps")
    summary = f"{speedup:.2f}{unit} ({thresholds}{rule}): {timing}"
    detail = ""
    if earned is not None:
        each = perf.points / scoring.steps
        marks = ", ".join(f"{t:.2f}" for t in step_thresholds(lower, full, scoring.steps))
        detail = (f"points in steps of {each:g}, at {marks}{unit}; the speedup is credited {100 * margin:.1f}% for "
                  f"timing noise (its spread in this run: {100 * speedup_spread(bench):.1f}%)")
    if device:
        where = f"measured on {device} (sm {bench.get('sm', '?')})"
        if calibrated_gpu:
            where += "; thresholds calibrated on this GPU model"
        elif not perf.gpus:  # a new lab (make new-lab) whose thresholds no GPU has measured yet
            where += ("; this lab's thresholds are not calibrated on any GPU model yet (make calibrate), so "
                      "labs.toml's numbers apply as they are")
        else:
            where += (f"; no thresholds are calibrated for this GPU model, so the defaults apply"
                      f"{' (from ' + calibration_gpu + ')' if calibration_gpu else ''}")
        detail = "\n".join(part for part in (where, detail) if part)
    return TestResult(lab, name, perf.points, score, status, summary, detail,
                      {"speedup": speedup, "yardstick": perf.yardstick, "lower": lower, "full": full,
                       "credited": credited, "margin": margin, "steps": earned, "of_steps": scoring.steps or None,
                       "bench": bench})


def hung_labs(report) -> list:
    """The labs with a run that hung (a TIMEOUT row), bonus labs included, in order."""
    return list(dict.fromkeys(r.lab for r in report.results if r.status == STATUS_WORDS["timeout"]))


HANG_NOTE_START = "Hung: "


def hang_note(labs: list) -> str:
    """The line under the table that says why a grading with a hung run fails."""
    return (f"{HANG_NOTE_START}{', '.join(labs)}: a run never finished (TIMEOUT above), so this grading fails "
            f"(exit status 1), bonus lab or not: a kernel or host loop that never ends would hang a GPU too. Fix it first.")


def hazards_of(row) -> list:
    """The hazards a sanitizers row holds against the student's code: its data["hazards"], one line each (what, and
    where in the student's file); [] for a row that passed, was not run, or found only the kit's."""
    found = (row.data or {}).get("hazards") if row is not None else None
    return [str(h) for h in found] if isinstance(found, list) else []


PLACE = re.compile(r"([\w.+-]+\.(?:cu|cuh|h|hpp|c|cc|cpp)):(\d+)")


def hazard_places(found: list, most: int = 3) -> str:
    """The file:line places the hazards found name, each once, in order, their files by base name ("reduce.cu:31,
    reduce.cu:34"; "... and N more" past most; "the line is not known" when none names one): how a correctness
    group points at the sanitizers row without repeating its lines."""
    places = []
    for h in found:
        for file, line in PLACE.findall(h):
            if f"{file}:{line}" not in places:
                places.append(f"{file}:{line}")
    if not places:
        return "the line is not known"
    more = f" and {len(places) - most} more" if len(places) > most else ""
    return ", ".join(places[:most]) + more


def apply_hazards(results: list, groups, cost: float) -> list:
    """The rule of labs.toml's hazard_cost: when the lab's sanitizers row (compute-sanitizer on a GPU, the simulator's
    own checks without one) holds a hazard against the student's code, every correctness group in `groups` (their
    names) that earned points keeps only (1 - cost) of them, with status HAZARD and a summary that names the hazards'
    file:line places and points at the sanitizers row, which alone prints them: a racy kernel that sums right today is
    still a wrong kernel. Groups that failed, were not run or need a GPU are left as they are; so is everything when
    the row holds no hazard (it passed, found only the kit's, or was not run). Returns results, changed in place."""
    row = next((r for r in results if r.name == SANITIZERS), None)
    found = hazards_of(row)
    if not found or cost <= 0:
        return results
    names = set(groups)
    lost = f"{100 * min(cost, 1.0):g}%" if cost < 1 else "all"
    places = hazard_places(found)
    for r in results:
        if r.name not in names or r.score <= 0:
            continue
        kept = round(r.max_score * max(0.0, 1.0 - cost), 2)
        detail = [f"Its runs passed ({r.summary}), but the lab's code has a hazard ({places}: the {SANITIZERS} row "
                  f"says what), which takes {lost} of the points of every correctness group (labs.toml's "
                  f"hazard_cost): a race or an out-of-bounds access may give right answers on one run or GPU and "
                  f"wrong ones on the next."]
        if r.detail:
            detail.append(r.detail)
        r.score, r.status = kept, HAZARD
        r.summary = f"HAZARD: see the {SANITIZERS} row ({places})"
        r.detail = "\n".join(detail)
        r.data = {**(r.data or {}), "hazard_cost": cost}
    return results


PAST_THE_END = "wrote past the end of the output"  # the checker's words for a write into the guard past the output


def note_writes_past_the_end(results: list) -> list:
    """When a correctness group failed because a case wrote past the end of the output (the checker's guard
    elements), the sanitizers row must not read as if no out-of-bounds access happened: the guard is memory the
    harness allocated, so neither compute-sanitizer nor the simulator sees the write as out of bounds. A row that
    passed says so and names the group; its status and points are unchanged (the group already lost its points).
    Returns results, changed in place."""
    row = next((r for r in results if r.name == SANITIZERS), None)
    group = next((r for r in results if r is not row and PAST_THE_END in (r.summary or "")), None)
    if row is None or group is None or row.status != "pass":
        return results
    row.summary = (f"a case wrote past the end of the output: see {group.name} (a write into the harness's guard "
                   f"space past the output is into allocated memory, which the hazard checks cannot see as out of "
                   f"bounds: fix the bounds test of the line that writes the output); no other hazard was found")
    row.detail = "\n".join(x for x in (f"Without that case: {row.summary}", row.detail) if x)
    return results


def student_path_mapper(copy, student, kit):
    """A function of a text that names the student's own file where the text names the copy of it the grader
    compiled (copy: build/grade-sim/01-global-strided/reduce.cu, whole, relative to the kit or by its last folders,
    as the line table, the CUDA error text and the sanitizers' messages name it). student: the file the student
    wrote, shown relative to the kit when it lies inside it."""
    copy, student, kit = Path(copy).resolve(), Path(student).resolve(), Path(kit).resolve()
    shown = str(student.relative_to(kit)) if student.is_relative_to(kit) else str(student)
    forms = {str(copy)}
    if copy.is_relative_to(kit):
        forms.add(str(copy.relative_to(kit)))
    parts = copy.parts
    for k in range(2, min(len(parts), 5)):  # "grade-sim/01-global-strided/reduce.cu", "01-global-strided/reduce.cu"
        forms.add("/".join(parts[-k:]))
    forms.discard(shown)
    if not forms:
        return lambda text: text or ""
    pattern = re.compile(r"(?<![\w./-])(?:" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
                         + r")(?![\w/-])")
    return lambda text: pattern.sub(shown, text or "")


def student_paths(results: list, copy, student, kit) -> list:
    """Names the student's own file in results' summaries and details where they name the copy of it the grader
    compiled (student_path_mapper). Returns results, changed in place."""
    mapped = student_path_mapper(copy, student, kit)
    for r in results:
        r.summary = mapped(r.summary)
        r.detail = mapped(r.detail)
    return results

