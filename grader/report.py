"""The two reports of a grading run: a table for people and results.json in Gradescope's autograder format.

A Report holds the TestResults (grader/score.py) in order, the seed and the notes about the whole run. The tests
of a bonus lab keep their own max_score, but only their score counts in the total: the total's maximum is that of
the other labs.
"""
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

NAME_WIDTH = 20


@dataclass
class Report:
    """Everything a grading run found. notes: lines about the whole run (no device, the seed, a kit error)."""

    submission: str
    seed: int
    results: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    seconds: float = 0.0
    no_device: bool = False
    kit_error: str = ""
    device: str = ""
    sandbox: dict = field(default_factory=dict)  # lab -> {"layers": ..., "missing": ...}: what held its runner

    @property
    def score(self) -> float:
        """Every point scored, bonus labs' included."""
        return round(sum(r.score for r in self.results), 2)

    @property
    def max_score(self) -> float:
        """The total's maximum: the points of every test that is not a bonus lab's."""
        return round(sum(r.max_score for r in self.results if not r.bonus), 2)

    @property
    def bonus_max_score(self) -> float:
        return round(sum(r.max_score for r in self.results if r.bonus), 2)

    @property
    def full_marks(self) -> bool:
        """Every test outside the bonus labs got its full points."""
        return all(r.full for r in self.results if not r.bonus)

    def bonus_labs(self) -> list:
        return list(dict.fromkeys(r.lab for r in self.results if r.bonus))

    def labs(self) -> list:
        """The lab names, in the order they were graded."""
        return list(dict.fromkeys(r.lab for r in self.results))


def _points(x: float) -> str:
    return f"{x:g}" if x == int(x) else f"{x:.2f}"


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + ln for ln in text.splitlines())


def format_table(report: Report, details: bool = True) -> str:
    """The human report: one block per lab, one row per test (points, status, what went wrong), then the total.

    With details, the extra text of a test that lost points (compiler errors, how to reproduce) follows its row.
    A bonus lab is marked "(bonus)", and a note under the table says its maximum is not in the total's.
    """
    out = [f"Grading {report.submission}  (seed {report.seed}{', ' + report.device if report.device else ''})"]
    for lab in report.labs():
        rows = [r for r in report.results if r.lab == lab]
        got, most = sum(r.score for r in rows), sum(r.max_score for r in rows)
        bonus = " (bonus)" if any(r.bonus for r in rows) else ""
        out.append("")
        out.append(f"{lab:<{NAME_WIDTH + 2}} {_points(got):>6} / {_points(most)}{bonus}")
        for r in rows:
            points = f"{_points(r.score):>6} / {_points(r.max_score):<4}"
            summary = r.summary.removeprefix("not run: ") if r.status == "not run" else r.summary
            out.append(f"  {r.name:<{NAME_WIDTH}} {points} {r.status:<10} {summary}")
            if details and not r.full and r.detail and r.detail.strip() != r.summary.strip():
                out.append(_indent(r.detail, " " * 6))
    out.append("")
    out.extend(report.notes)
    out.extend(_bonus_notes(report))
    out.append(_total(report))
    return "\n".join(out)


def _total(report: Report) -> str:
    """The total line: "Total 784 / 700", and "(84 of them bonus points)" when bonus labs were graded; when only
    bonus labs were, "Total 35 / 0 (35 of them bonus points, of 100: a bonus lab's points are outside the total's
    maximum)", so that a maximum of 0 does not read as a mistake."""
    line = f"Total {_points(report.score)} / {_points(report.max_score)}"
    if report.bonus_labs():
        bonus = round(sum(r.score for r in report.results if r.bonus), 2)
        line += f" ({_points(bonus)} of them bonus points"
        if report.max_score == 0:
            line += f", of {_points(report.bonus_max_score)}: a bonus lab's points are outside the total's maximum"
        line += ")"
    return line


def _bonus_notes(report: Report) -> list:
    labs = report.bonus_labs()
    if not labs:
        return []
    which, its = (f"{labs[0]} is a bonus lab", "its") if len(labs) == 1 else (f"{', '.join(labs)} are bonus labs",
                                                                               "their")
    return [f"Bonus: {which}: {its} score adds to the total, {its} {_points(report.bonus_max_score)} points are not "
            f"in the total's maximum"]


def gradescope_results(report: Report) -> dict:
    """results.json for Gradescope: score, execution_time, output and one test per group with its own max_score."""
    tests = []
    for r in report.results:
        extra = r.detail if r.detail.strip() != r.summary.strip() else ""
        output = "\n".join(part for part in (r.summary, extra) if part)
        tests.append({"name": r.title, "score": r.score, "max_score": r.max_score,
                      "status": "passed" if r.full else "failed", "output": output, "visibility": "visible",
                      "extra_data": {"lab": r.lab, "test": r.name, "status": r.status}})
    summary = [_total(report), f"seed {report.seed}", *report.notes,
               *_bonus_notes(report)]
    board = leaderboard(report)
    return {**({"leaderboard": board} if board else {}),
        "score": report.score,
        "execution_time": round(report.seconds, 1),
        "output": "\n".join(summary),
        "visibility": "visible",
        "stdout_visibility": "visible",
        "tests": tests,
        "extra_data": {"max_score": report.max_score, "bonus_max_score": report.bonus_max_score,
                       "bonus_labs": report.bonus_labs(), "seed": report.seed, "device": report.device,
                       "no_device": report.no_device, "kit_error": report.kit_error,
                       "static_check_findings": static_check_findings(report), "sandbox": report.sandbox,
                       "performance_environment": performance_environment(report), "labs": lab_numbers(report)},
    }


def leaderboard(report: Report) -> list:
    """Gradescope's leaderboard entries (https://gradescope-autograders.readthedocs.io/en/latest/leaderboards/): the
    measured speedup of each lab whose benchmark ran, higher first. Gradescope shows them under the pseudonyms
    students choose, never their names; a lab not timed (on the simulator, or before its correctness passed) has no
    entry, so no estimate ever sits beside a measurement."""
    board = []
    for r in report.results:
        if r.name == "performance" and _finite(r.data.get("speedup")):
            what = "x of CUB's speed" if r.data.get("yardstick") == "cub" else "x over the baseline"
            board.append({"name": f"{r.lab}: {what}", "value": round(float(r.data["speedup"]), 3), "order": "desc"})
    return board


def static_check_findings(report: Report) -> dict:
    """{lab: [{"rule": ..., "message": ...}, ...]} for each lab whose static checks found something, for scripts
    that go through a class's results (the table and each test's output say the same to people)."""
    return {r.lab: r.data["findings"] for r in report.results if r.data.get("findings")}


def performance_environment(report: Report) -> dict:
    """{lab: record} for each lab whose benchmark ran: the GPU, driver and runtime, the measured and maximum SM
    clocks, samples discarded for a throttled clock, nvidia-smi's clocks, temperature, power and pstate before and
    after, the other processes on the GPU, and the warnings (grader/gpuinfo.py: environment)."""
    return {r.lab: r.data["environment"] for r in report.results if r.data.get("environment")}


def lab_numbers(report: Report) -> dict:
    """{lab: numbers} for scripts and the class report (grader/classroom/class_report.py): the lab's points, each
    test's status word, and where its benchmark ran the speedup, the thresholds it was scored against and the
    harness's times (ms), spread and samples; on the simulator its estimate and counts where the performance row
    carries them."""
    out = {}
    for lab in report.labs():
        rows = [r for r in report.results if r.lab == lab]
        numbers = {"score": round(sum(r.score for r in rows), 2),
                   "max_score": round(sum(r.max_score for r in rows), 2), "bonus": any(r.bonus for r in rows),
                   "tests": {r.name: r.status for r in rows}}
        perf = next((r.data for r in rows if r.name == "performance"), {})
        if _finite(perf.get("speedup")):
            bench = perf.get("bench") or {}
            numbers.update({key: perf[key] for key in ("speedup", "yardstick", "lower", "full", "credited")
                            if key in perf})
            numbers.update({key: float(bench[key]) for key in ("student_ms", "baseline_ms", "spread", "samples")
                            if _finite(bench.get(key))})
        numbers.update({key: perf[key] for key in ("estimate", "counts") if perf.get(key)})
        out[lab] = numbers
    return out


def _finite(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def write_results(report: Report, path) -> None:
    """Writes gradescope_results(report) to path (creating its folder), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(gradescope_results(report), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
