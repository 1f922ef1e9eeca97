"""Late work: due dates, late days and the penalty of labs.toml's [late] table, applied the same way on Gradescope
(grader/gradescope.py) and by the class grader (grader/classroom/).

labs.toml says (grader/config.py checks it with parse_policy):

    [late]
    due = 2026-12-01T23:59:00-05:00   # a TOML date and time with its offset; optional (see below)
    grace_minutes = 15                # this long after the due date still counts as on time
    penalty_per_day = 0.1             # the share of a lab's points lost per late day begun (0.1: 10% a day)
    max_late_days = 3                 # later than this many days, the lab scores 0; optional (no limit)

    [labs.03-sequential]
    due = 2026-10-01T23:59:00-04:00   # a lab's own due date, over [late]'s

A lab's due date is its own `due`, else [late]'s `due`, else the due date of the Gradescope assignment the
submission was made to (submission metadata: grader/intake/metadata.py). A student whom Gradescope gave an extension
(their own due date in the metadata, later than the assignment's) gets it on every lab: their due dates move by the same
time. Without a [late] table nothing is late: the penalty is the course's decision, written in labs.toml.

A submission made after due + grace is late by days = ceil(late time / 24 h): 1 minute late is 1 day. It loses
min(1, days * penalty_per_day) of the lab's points; past max_late_days (or, without it, after the assignment's
late due date in Gradescope), all of them. The points are those the lab scored, bonus labs' included; what
grade-class merges later (performance from the course's GPU) is penalised by the same Lateness.deduction.

results.json shows it (apply): a row "LAB: late penalty" with the negative points, the total lowered by the same
amount, a line at the top of the output saying how late and what it cost, and extra_data.late.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

DAY = dt.timedelta(days=1)
PENALTY_ROW = "late penalty"  # the name of the penalty's test row, after "LAB: "
KEYS = ("due", "grace_minutes", "penalty_per_day", "max_late_days")


class LateError(ValueError):
    """labs.toml's [late] table (or a lab's due) is malformed; grader/config.py reports it as a ConfigError."""


@dataclass(frozen=True)
class Policy:
    """labs.toml's late-work rule. due: the default due date (None: the Gradescope assignment's); lab_due: each lab's
    own, as ((lab, datetime), ...)."""

    due: dt.datetime | None = None
    grace_minutes: float = 0.0
    penalty_per_day: float = 0.0
    max_late_days: int | None = None
    lab_due: tuple = ()

    def due_for(self, lab: str) -> dt.datetime | None:
        """The due date labs.toml gives lab (its own, else [late]'s), or None."""
        return dict(self.lab_due).get(lab, self.due)


def _datetime(value, where: str) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        raise LateError(f"{where}: expected a date and time with its offset, like 2026-12-01T23:59:00-05:00 "
                        f"(no quotes), got {value!r}")
    if value.tzinfo is None:
        raise LateError(f"{where}: {value.isoformat()} has no offset from UTC, so it would mean a different time on "
                        f"each machine: write it as {value.isoformat()}-05:00 (or your time zone's offset)")
    return value


def parse_due(value, where: str) -> dt.datetime:
    """A lab's `due` from labs.toml (a TOML offset date-time); LateError otherwise."""
    return _datetime(value, where)


def parse_policy(raw, where: str = "labs.toml: late", lab_due=None) -> Policy:
    """The Policy of a [late] table (raw, as tomllib read it) and the labs' own due dates (lab_due: {lab: datetime},
    already checked with parse_due); LateError naming the key at fault."""
    if not isinstance(raw, dict):
        raise LateError(f"{where}: expected a table")
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise LateError(f"{where}: unknown key {', '.join(unknown)} (the keys are {', '.join(KEYS)})")

    def number(key, default, whole=False):
        value = raw.get(key, default)
        if value is None:
            return None
        ok = isinstance(value, int) if whole else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok or value < 0 or (isinstance(value, float) and not math.isfinite(value)):
            kind = "a whole number of days >= 0" if whole else "a number >= 0"
            raise LateError(f"{where}.{key}: expected {kind}, got {value!r}")
        return value

    penalty = float(number("penalty_per_day", 0.0))
    if penalty > 1:
        raise LateError(f"{where}.penalty_per_day: expected a fraction of the points per day (0.1 is 10%), got "
                        f"{penalty:g}")
    return Policy(due=_datetime(raw["due"], f"{where}.due") if "due" in raw else None,
                  grace_minutes=float(number("grace_minutes", 0.0)), penalty_per_day=penalty,
                  max_late_days=number("max_late_days", None, whole=True),
                  lab_due=tuple(sorted((lab_due or {}).items())))


@dataclass(frozen=True)
class Lateness:
    """How late one lab of one submission is, and what it costs. due: the due date that applied (None: none
    known, so nothing is late); days: late days begun after due + grace; fraction: the share of the lab's points
    lost; refused: past the last day work is taken (all points lost); source: where the due date came from."""

    lab: str
    submitted: dt.datetime | None
    due: dt.datetime | None
    days: int = 0
    fraction: float = 0.0
    refused: bool = False
    source: str = ""
    grace_minutes: float = 0.0

    @property
    def late(self) -> bool:
        return self.days > 0

    def deduction(self, points: float) -> float:
        """The points lost of a lab that scored points (never more than it scored, never below 0)."""
        return round(max(points, 0.0) * self.fraction, 2)

    def text(self, points: float | None = None) -> str:
        """One line for the feedback: on time, or how late, against which due date, and what it cost."""
        if self.due is None:
            return f"{self.lab}: no due date is set, so nothing is late"
        due = f"due {_shown(self.due)} ({self.source})"
        if self.submitted is None:
            return f"{self.lab}: {due}; the submission time is unknown, so it is taken as on time"
        if not self.late:
            grace = f", within the {self.grace_minutes:g} minutes' grace" if self.submitted > self.due else ""
            return f"{self.lab}: submitted {_shown(self.submitted)}, on time ({due}{grace})"
        late_by = _duration(self.submitted - self.due)
        cost = ("past the last day work is taken: the lab scores 0" if self.refused else
                f"{self.days} late day{'s' if self.days != 1 else ''}: -{100 * self.fraction:g}% of the lab's points")
        lost = f" (-{self.deduction(points):g} of {points:g})" if points is not None else ""
        return f"{self.lab}: submitted {_shown(self.submitted)}, {late_by} late ({due}): {cost}{lost}"

    def to_json(self) -> dict:
        return {"due": self.due.isoformat() if self.due else None,
                "submitted": self.submitted.isoformat() if self.submitted else None, "days": self.days,
                "fraction": self.fraction, "refused": self.refused, "source": self.source}


def _shown(when: dt.datetime) -> str:
    return when.isoformat(sep=" ", timespec="minutes")


def _duration(delta: dt.timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in ((days, "day"), (hours, "hour"),
                                                                    (minutes, "minute")) if n]
    return " ".join(parts[:2]) or "less than a minute"


def lateness(policy: Policy | None, lab: str, submission) -> Lateness:
    """How late submission (a grader.intake.metadata.Submission: created_at, the assignment's due dates, the submitters'
    own) is for lab under policy (None: no [late] table, so never late)."""
    submitted = getattr(submission, "created_at", None)
    if policy is None:
        return Lateness(lab, submitted, None)
    assignment_due, assignment_late_due = getattr(submission, "due", None), getattr(submission, "late_due", None)
    own_due, own_late_due = submission.own_dates() if hasattr(submission, "own_dates") else (None, None)
    due, source = policy.due_for(lab), "labs.toml"
    if due is None:
        due, source = assignment_due, "the Gradescope assignment's"
    if due is None:
        return Lateness(lab, submitted, None)
    last = None if policy.max_late_days is not None else assignment_late_due
    if own_due is not None and assignment_due is not None and own_due > assignment_due:
        extension = own_due - assignment_due
        due, source = due + extension, f"{source}, with your extension of {_duration(extension)}"
        if last is not None:
            last = max(last + extension, own_late_due or last)
    if submitted is None:
        return Lateness(lab, None, due, source=source, grace_minutes=policy.grace_minutes)
    late = submitted - due - dt.timedelta(minutes=policy.grace_minutes)
    days = math.ceil(late / DAY) if late > dt.timedelta(0) else 0
    refused = days > 0 and ((policy.max_late_days is not None and days > policy.max_late_days)
                            or (last is not None and submitted > last))
    fraction = 1.0 if refused else min(1.0, days * policy.penalty_per_day)
    return Lateness(lab, submitted, due, days, round(fraction, 6), refused, source, policy.grace_minutes)


# ---- results.json ----

def test_lab(test: dict) -> str:
    """The lab a results.json test belongs to: its extra_data.lab (grader/report/report.py), else its name's prefix."""
    lab = (test.get("extra_data") or {}).get("lab") if isinstance(test.get("extra_data"), dict) else None
    if isinstance(lab, str) and lab:
        return lab
    return str(test.get("name", "")).split(":", 1)[0].removesuffix(" (bonus)")


def lab_scores(results: dict) -> dict:
    """{lab: points scored} of a results.json's tests, penalty rows left out."""
    scores = {}
    for test in results.get("tests") or []:
        if (test.get("extra_data") or {}).get("test") == PENALTY_ROW:
            continue
        lab = test_lab(test)
        scores[lab] = round(scores.get(lab, 0.0) + float(test.get("score") or 0), 2)
    return scores


def _shares(tests: list, item: Lateness, lost: float) -> list:
    """(visibility, points lost) of a late lab, one per visibility its tests have (grader/report/report.py set them, or
    "visible"), "visible" first: each visibility's Lateness.deduction of the points its tests scored, the last
    taking what rounding left, so that the shares sum to lost exactly and a row shown now tells nothing of the
    tests shown later."""
    scored = {"visible": 0.0}
    for test in tests:
        if test_lab(test) == item.lab and (test.get("extra_data") or {}).get("test") != PENALTY_ROW:
            key = str(test.get("visibility") or "visible")
            scored[key] = scored.get(key, 0.0) + float(test.get("score") or 0)
    shares, left = [], lost
    for k, (visibility, points) in enumerate(scored.items()):
        share = left if k == len(scored) - 1 else item.deduction(points)
        shares.append((visibility, round(share, 2)))
        left = round(left - share, 2)
    return shares


def apply(results: dict, latenesses) -> dict:
    """results (a results.json dict) with each late lab's penalty: a row "LAB: late penalty" (negative points,
    max_score 0) after the lab's last test, a row per visibility of the lab's tests (each costing the points of
    those tests: grader/report/report.py's set_visibility, applied first, decides who sees what when), the score lowered
    by as much, a line per lab at the top of the output (the points lost of the tests shown now alone, when the lab has
    tests shown later), its total line made the new score's, and extra_data.late = {lab: Lateness.to_json() and
    "points_lost"}. Labs on time get their line too, when any lab has a due date, so that a student sees the due
    date that applied."""
    from grader.report.report import retotal
    scores = lab_scores(results)
    lines, late_data, total = [], {}, 0.0
    tests = list(results.get("tests") or [])
    for item in latenesses:
        if item.due is None:
            continue
        points = scores.get(item.lab, 0.0)
        lost = item.deduction(points) if item.late else 0.0
        late_data[item.lab] = {**item.to_json(), "points_lost": lost}
        if not item.late:
            lines.append("Late work: " + item.text())
            continue
        total += lost
        shares = _shares(tests, item, lost)
        shown = sum(float(t.get("score") or 0) for t in tests if test_lab(t) == item.lab and
                    (t.get("visibility") or "visible") == "visible")
        lines.append("Late work: " + (item.text(round(shown, 2)) + " (of the tests shown now)" if len(shares) > 1
                                      else item.text(points)))
        last = max((k for k, t in enumerate(tests) if test_lab(t) == item.lab), default=len(tests) - 1)
        rows = [{"name": f"{item.lab}: {PENALTY_ROW}", "score": -share if share else 0, "max_score": 0,
                 "status": "failed", "output": item.text(), "visibility": visibility,
                 "extra_data": {"lab": item.lab, "test": PENALTY_ROW, "status": "late"}}
                for visibility, share in shares]
        tests[last + 1:last + 1] = rows
    if not late_data:
        return results
    results = dict(results)
    results["tests"] = tests
    results["score"] = round(float(results.get("score") or 0) - total, 2)
    results["output"] = "\n".join([*lines, "", str(results.get("output", ""))]).strip("\n")
    results["extra_data"] = {**(results.get("extra_data") or {}), "late": late_data}
    return retotal(results)
