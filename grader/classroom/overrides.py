"""Grade overrides by course staff: a CSV file a TA edits (in a spreadsheet or a text editor), given to
`make grade-class OVERRIDES=FILE` (or `--overrides FILE`). The class folder remembers it (OUT/class.json): a rerun
without OVERRIDES= applies the same file again, and says so; one that names another file, or OVERRIDES=none, says
what it replaces (choose). Without either, OUT/overrides.csv when there is one.

    student,lab,points,reason
    ada@example.edu,03-sequential,45,regrade request 12: rerun on an idle GPU
    S12345,05,+5,the late-day waiver of 2026-11-02
    carol,total,-10,academic integrity case 2026-3

student: who the student is, as the class knows them: an email or sid from Gradescope's submission_metadata.yml
(these stay the same when the submissions are exported again), else the gradebook's id (the upload's folder name).
An override of one member of a group upload applies to the group's upload. lab: a lab's name or number (03), or `total`
for an adjustment of the whole. points: a plain number sets the lab's points to it (0 up to the lab's maximum); +N or -N
adds or takes away (the lab's points stay within 0 and its maximum, the total at 0 or above); `total` takes +N or -N
only. reason: required; the student reads it. Lines whose first cell starts with # are comments; at most one line per
student and lab.

An override never changes what the grader measured: each student's record keeps the graded row, and the overrides
are laid over it whenever the gradebook is written (after a rerun too, graded again or not). They show in the
gradebook (the points, and a note per override), in the student's feedback.txt (a closing section) and
results.json (its score, an "override by course staff" test per override saying why, extra_data.overrides).
A file that names a student or lab the class does not have, or a malformed line, stops the run before anything
is graded (exit status 2), with every problem's line.
"""
import csv
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

FILE_NAME = "overrides.csv"
COLUMNS = ("student", "lab", "points", "reason")
TOTAL = "total"
TEST_NAME = "override by course staff"
FEEDBACK_MARK = "== Overrides by course staff =="


class OverrideError(Exception):
    """The overrides file cannot be used; the message lists each problem with its line."""


@dataclass(frozen=True)
class Override:
    """One line of the file: lab is a lab's full name or TOTAL; relative: points is added (else it is set)."""

    student: str
    lab: str
    points: float
    relative: bool
    reason: str
    line: int

    def describe(self, before: float, after: float) -> str:
        what = "total" if self.lab == TOTAL else self.lab
        change = f"{_points(before)} -> {_points(after)}"
        return f"override {what}: {change} ({self.reason})"


def _points(x: float) -> str:
    return f"{x:g}" if float(x) == int(x) else f"{x:.2f}"


def _lab_name(text: str, labs) -> str | None:
    """The full name of the lab text names (its name, or its number: 3, 03), TOTAL, or None."""
    if text.lower() == TOTAL:
        return TOTAL
    key = text.zfill(2) if text.isdigit() else text
    found = [lab.name for lab in labs if lab.name == key or lab.name.split("-", 1)[0] == key]
    return found[0] if len(found) == 1 else None


def identities(students) -> dict:
    """{(kind, key): student id} of the ways the file may name a student: ("id", each id), and for entries
    (intake.Entry) each submitter's ("email", email in any case) and ("sid", sid); a key two uploads share maps to
    None (ambiguous). Emails and sids are apart: where students choose their own sid, a sid that reads as another
    student's email must not take that student's overrides (a red-team helper's). students: ids or entries."""
    keys = {}
    for s in students:
        sid = s if isinstance(s, str) else s.student
        people = [*getattr(s, "people", ()), ("", getattr(s, "sid", ""), getattr(s, "email", ""))]
        own = {("id", sid)} | {("sid", str(p[1]).strip()) for p in people if str(p[1] or "").strip() and
                               ";" not in str(p[1])} \
            | {("email", str(p[2]).strip().casefold()) for p in people if "@" in str(p[2] or "") and
               ";" not in str(p[2])}
        for key in own:
            keys[key] = sid if keys.get(key, sid) == sid else None
    return keys


def lookup(known: dict, who: str):
    """The student the file's cell who names in known (identities'): an email cell (one with @) names an email, else
    an id; any other cell an id, else a sid. (kind, key) of the first that matched, and its student (None:
    ambiguous), or (None, None)."""
    who = who.strip()
    tries = [("email", who.casefold()), ("id", who)] if "@" in who else [("id", who), ("sid", who)]
    for key in tries:
        if key in known:
            return key, known[key]
    return None, None


def load(path, labs, students) -> dict:
    """{student id: [Override, ...]} from the CSV file at path, checked against labs and the class (students: ids,
    or intake.Entry's, whose emails and sids name them too: identities); OverrideError listing every problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise OverrideError(f"{path}: cannot be read: {e}") from None
    reader = csv.reader(text.splitlines())
    rows = [(n, r) for n, r in enumerate(reader, 1) if r and any(c.strip() for c in r)
            and not r[0].lstrip().startswith("#")]
    if not rows:
        return {}
    header = [c.strip().lower() for c in rows[0][1]]
    if tuple(header[:4]) != COLUMNS:
        raise OverrideError(f"{path}:{rows[0][0]}: the first line must be the header {','.join(COLUMNS)} (got "
                            f"{','.join(rows[0][1])})")
    known, problems, found, seen = identities(students), [], {}, {}
    maxima = {lab.name: lab.max_score for lab in labs}
    for n, cells in rows[1:]:
        cells = [c.strip() for c in cells] + [""] * 4
        who, lab_text, points_text, reason = cells[:4]
        where = f"{path}:{n}"
        lab = _lab_name(lab_text, labs)
        key, student = lookup(known, who)
        if student is None:
            problems.append(f"{where}: no student {who!r} in this class (an email or sid from Gradescope's metadata, "
                            f"or the gradebook's student column)" if key is None else
                            f"{where}: {who!r} names more than one upload: use the gradebook's student id")
        if lab is None:
            problems.append(f"{where}: no lab {lab_text!r} (the labs: {', '.join(maxima)}, or total)")
        if not reason:
            problems.append(f"{where}: the reason is missing (the student reads it)")
        relative = points_text[:1] in "+-" and bool(points_text)
        try:
            points = float(points_text)
        except ValueError:
            problems.append(f"{where}: points {points_text!r} is not a number (45 sets, +5 or -5 adjusts)")
            continue
        if lab == TOTAL and not relative:
            problems.append(f"{where}: total takes an adjustment (+N or -N), not {points_text}")
        elif lab in maxima and not relative and not 0 <= points <= maxima[lab]:
            problems.append(f"{where}: {lab} is worth 0 to {_points(maxima[lab])} points, not {points_text}")
        if student is not None and (student, lab) in seen:
            problems.append(f"{where}: {student} {lab} is overridden on line {seen[(student, lab)]} already")
        seen[(student, lab)] = n
        if student is not None and lab is not None and reason:
            found.setdefault(student, []).append(Override(student, lab, points, relative, reason, n))
    if problems:
        raise OverrideError("\n".join(problems))
    return found


NONE = "none"  # OVERRIDES=none: this run applies no overrides file, though the last one did


def default_path(out, given=None) -> Path | None:
    """The overrides file of a run: the one given (None for NONE), else OUT/overrides.csv when it exists."""
    if given:
        return None if given == NONE else Path(given)
    path = Path(out) / FILE_NAME
    return path if path.is_file() else None


def choose(out, given: str, last: str) -> tuple:
    """(the overrides file of a run as a string, "" for none; a line saying so, "" when there is nothing to say).
    given: the file named for this run ("" none named, NONE none wanted); last: the one the class folder's last run
    applied ("" none). A rerun that names no file applies last's again; one that names another, or NONE, replaces
    it, and the line says which. OverrideError when last is applied again but is gone."""
    chosen = default_path(out, given or last or None)
    chosen = str(chosen.resolve()) if chosen is not None else ""
    if not given and last:
        if not Path(last).is_file():
            raise OverrideError(f"the last run of this class applied the overrides in {last}, which is gone: give "
                                f"OVERRIDES=FILE (--overrides FILE) to apply another, or OVERRIDES=none to apply none")
        return chosen, f"overrides: {last}, as the last run of this class (OVERRIDES=FILE for another, none for none)"
    if last and chosen != last:
        now = chosen or "none"
        return chosen, f"overrides: {now}, in place of {last}, which the last run of this class applied"
    return chosen, f"overrides: {chosen}" if chosen else ""


def apply_row(row: dict, overrides: list, labs) -> dict:
    """The gradebook row with overrides laid over it (the graded row is not changed): the labs' points, the total,
    a note per override; row["overrides"] lists them as dicts with the points before and after."""
    if not overrides:
        return row
    row = dict(row, labs=dict(row.get("labs", {})))
    maxima = {lab.name: lab.max_score for lab in labs}
    applied, notes = [], []
    for o in sorted(overrides, key=lambda o: o.lab == TOTAL):  # the labs first, then the total's adjustment
        if o.lab == TOTAL:
            before = float(row["total"])
            after = max(0.0, before + o.points)
        else:
            before = float(row["labs"].get(o.lab, 0.0))
            after = min(maxima[o.lab], max(0.0, before + o.points)) if o.relative else o.points
            row["labs"][o.lab] = round(after, 2)
            row["total"] = float(row["total"]) + after - before
        if o.lab == TOTAL:
            row["total"] = after
        row["total"] = round(row["total"], 2)
        applied.append({**asdict(o), "before": round(before, 2), "after": round(after, 2)})
        notes.append(o.describe(before, after))
    row["notes"] = "; ".join(n for n in (row.get("notes", ""), *notes) if n)
    row["overrides"] = applied
    return row


def _visibility_of(tests: list, lab: str) -> str:
    """An override row's visibility: the latest of the rows it tells of (the lab's; every row for the total), since
    its "before -> after" says their points (a red-team helper read a hidden group's result from it)."""
    from grader.report.report import latest
    mine = [t for t in tests if lab == "total" or (t.get("extra_data") or {}).get("lab") == lab]
    return latest("visible", *(t.get("visibility") or "visible" for t in mine))


def apply_outputs(folder, row: dict) -> None:
    """Lays row["overrides"] (apply_row's) over the student's results.json and feedback.txt in folder, first
    taking away any overrides a previous run laid there; with none, restores them as graded."""
    applied = row.get("overrides") or []
    folder = Path(folder)
    results_path = folder / "results.json"
    try:
        results = json.loads(results_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        results = None
    if isinstance(results, dict):
        extra = results.setdefault("extra_data", {})
        if "score_before_overrides" in extra:
            results["score"] = extra.pop("score_before_overrides")
            extra.pop("overrides", None)
            results["tests"] = [t for t in results.get("tests", []) if not str(t.get("name", "")).endswith(
                ": " + TEST_NAME)]
        if applied:
            extra["score_before_overrides"] = results.get("score", 0)
            extra["overrides"] = applied
            results["score"] = row["total"]
            for o in applied:
                results.setdefault("tests", []).append({
                    "name": f"{o['lab']}: {TEST_NAME}", "score": round(o["after"] - o["before"], 2), "max_score": 0,
                    "status": "passed", "visibility": _visibility_of(results.get("tests", []), o["lab"]),
                    "extra_data": {"lab": o["lab"], "test": TEST_NAME},
                    "output": f"{_points(o['before'])} -> {_points(o['after'])} points: {o['reason']}"})
        tmp = results_path.with_name(results_path.name + ".tmp")
        tmp.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, results_path)
    feedback = folder / "feedback.txt"
    if feedback.is_file():
        text = feedback.read_text(encoding="utf-8", errors="replace")
        text = text.split("\n" + FEEDBACK_MARK, 1)[0].rstrip("\n") + "\n"
        if applied:
            lines = [f"  {o['lab']}: {_points(o['before'])} -> {_points(o['after'])} points: {o['reason']}"
                     for o in applied]
            text += "\n".join(["", FEEDBACK_MARK, *lines, f"Total after overrides: {_points(row['total'])}", ""])
        feedback.write_text(text, encoding="utf-8")
