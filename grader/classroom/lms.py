"""The gradebook as the course's grade systems import it, written beside gradebook.csv by `make grade-class`:

  canvas.csv      Canvas's Gradebook import ("Import" in the Gradebook's actions): the columns of Canvas's own
                  gradebook export, Student, ID, SIS User ID, SIS Login ID, Section, then one column per lab and a
                  Points Possible row. A lab's column is its `lms_name` in labs.toml (else the lab's name); Canvas
                  creates an assignment of that name on import where the course has none. Give Canvas's own export as
                  the roster (CANVAS_ROSTER=FILE, --canvas-roster) and its identity columns are copied from it,
                  matched by SID, email or name, and a lab's column takes the export's header of the assignment
                  named so ("Lab 3 (12345)": Canvas then updates that assignment); the students of either side that
                  the other lacks are listed on stderr by id, and those it lacks are left out. Without a roster, SIS
                  User ID is Gradescope's SID and SIS Login ID the email.
  gradescope.csv  a score per student for Gradescope: Name, SID, Email (Gradescope's roster columns, which its
                  imports match on), Total Score, Max Points, then the points of each lab (its lms_name).

Points are the gradebook's, overrides included. A group upload (Gradescope's metadata lists several submitters)
gets a row per member. A row whose points are not a grade (records.NOT_SCORED: not graded, error, kit error, static
only, no GPU) gets empty score cells, so that an import does not write 0 over a grade: grade them, then import. So
does a row graded on the simulator (make grade-class SIM=1): its points are correctness of small sizes only, no
performance, which an import would record as the grade (40 of 100 for a reference solution); gradebook.csv keeps
them, and the export says how many it left empty.
Text cells that a spreadsheet would take for a formula start with ' (as in the gradebook).
"""
import csv
import io
import os
import sys
from pathlib import Path

from grader.classroom.gradebook import members, points_cell, score_cell, text_cell

CANVAS, GRADESCOPE = "canvas.csv", "gradescope.csv"
CORRECTNESS_ONLY = ("simulator",)  # row statuses whose points are no grade for a course's gradebook (above)
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "    Points Possible"  # the first cell of the second row of Canvas's export


class RosterError(Exception):
    """The Canvas roster cannot be read; the message says why."""


def read_roster(path) -> list:
    """The students of a Canvas gradebook export (dicts of CANVAS_IDENTITY), its Points Possible row and test
    student left out; RosterError if it lacks those columns. roster_columns(path) gives its other headers."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise RosterError(f"{path}: cannot be read: {e}") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in CANVAS_IDENTITY if c not in (reader.fieldnames or [])]
    if missing:
        raise RosterError(f"{path}: not a Canvas gradebook export: no column {', '.join(missing)} (export it from "
                          f"the course's Gradebook: Export, Export Entire Gradebook)")
    return [{c: (r.get(c) or "").strip() for c in CANVAS_IDENTITY} for r in reader
            if (r.get("Student") or "").strip() and "Points Possible" not in (r.get("Student") or "")
            and (r.get("Student") or "").strip() != "Student, Test"]


def roster_columns(path) -> list:
    """The headers of a Canvas gradebook export after its identity columns: its assignments, "Name (ID)"."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        header = next(csv.reader(f), [])
    return [h for h in header if h not in CANVAS_IDENTITY]


def column_name(lab, columns=()) -> str:
    """The lab's column: the header of columns (a Canvas export's) that is its lms_name with Canvas's id after it
    ("Lab 3 (12345)"), else its lms_name, else its name."""
    name = getattr(lab, "lms_name", "") or lab.name
    found = [c for c in columns if c == name or (c.startswith(name + " (") and c.endswith(")"))]
    return found[0] if len(found) == 1 else name


def _key(text) -> str:
    return " ".join(str(text or "").lower().split())


def match(row: dict, roster: list) -> dict | None:
    """The roster entry of a gradebook row: by SID (SIS User ID), then email (SIS Login ID, whole or its part
    before @), then name (Canvas's "Last, First" or "First Last"), each only when it is unambiguous."""
    sid, email, name = _key(row.get("sid")), _key(row.get("email")), _key(row.get("name"))
    tests = []
    if sid:
        tests.append(lambda e: _key(e["SIS User ID"]) == sid)
    if email:
        tests.append(lambda e: _key(e["SIS Login ID"]) in (email, email.split("@")[0]))
    if name:
        def same_name(e):
            last, _, first = e["Student"].partition(",")
            return _key(e["Student"]) == name or (_key(f"{first} {last}") == name if first else False)
        tests.append(same_name)
    for test in tests:
        found = [e for e in roster if test(e)]
        if len(found) == 1:
            return found[0]
    return None


def people(rows) -> list:
    """The rows once per person (gradebook.members), sorted by id."""
    return [m for r in sorted(rows, key=lambda r: r["student"]) for m in members(r)]


def canvas_text(rows, labs, roster=None, warn=None, columns=()) -> str:
    """canvas.csv's text for rows (gradebook rows); with roster (read_roster), its identity columns, and a line to
    warn for each side's students the other lacks; columns: the roster's assignment headers (roster_columns)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*CANVAS_IDENTITY, *(column_name(lab, columns) for lab in labs)])
    writer.writerow([POINTS_POSSIBLE, "", "", "", "", *(points_cell(lab.max_score) for lab in labs)])
    absent, matched = [], []
    everyone = people(rows)
    entries = [match(row, roster) for row in everyone] if roster is not None else [None] * len(everyone)
    claims = {}
    for row, entry in zip(everyone, entries):
        if entry is not None:
            claims.setdefault(id(entry), []).append(row["student"])
    for row, entry in zip(everyone, entries):
        if roster is not None and entry is not None and len(claims[id(entry)]) > 1:
            # two uploads whose sid, email or name name one Canvas student (a student may choose a sid): neither
            # row goes in, for one of them would write over the other's grade (a red-team helper's)
            if warn and claims[id(entry)][0] == row["student"]:
                warn(f"{CANVAS}: {entry['Student']} (SIS User ID {entry['SIS User ID'] or '-'}) is matched by "
                     f"{', '.join(claims[id(entry)])}: left out of {CANVAS} (their sids or emails say the same "
                     f"student: check the metadata, then enter the grade by hand)")
            matched.append(id(entry))
            continue
        if roster is not None:
            if entry is None:
                absent.append(f"{row['student']} ({row.get('name') or 'no name'}, sid {row.get('sid') or '-'}, "
                              f"{row.get('email') or 'no email'})")
                continue
            matched.append(id(entry))
            who = [entry[c] for c in CANVAS_IDENTITY]
        else:
            who = [row.get("name") or row["student"], "", row.get("sid", ""), row.get("email", ""), ""]
        writer.writerow([*(text_cell(x) for x in who),
                         *(lms_cell(row, row.get("labs", {}).get(lab.name, 0.0)) for lab in labs)])
    if roster is not None and warn:
        report_mismatches(absent, [e for e in roster if id(e) not in matched], warn)
    return buf.getvalue()


def report_mismatches(absent: list, unmatched: list, warn) -> None:
    """Says which graded students the Canvas roster lacks (left out of canvas.csv) and which of the roster's
    students no upload matched (their cells stay as Canvas has them), each by id."""
    if absent:
        warn(f"canvas.csv: {len(absent)} graded student{'s' if len(absent) != 1 else ''} not in the Canvas roster, "
             f"left out (match them by SID or email in Gradescope's roster, or enter them by hand): "
             + "; ".join(absent))
    if unmatched:
        warn(f"canvas.csv: {len(unmatched)} student{'s' if len(unmatched) != 1 else ''} of the Canvas roster "
             f"without an upload in this class: "
             + "; ".join(f"{e['Student']} (ID {e['ID'] or '-'}, SIS {e['SIS User ID'] or '-'})" for e in unmatched))


def gradescope_text(rows, labs) -> str:
    """gradescope.csv's text for rows (gradebook rows)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["Name", "SID", "Email", "Total Score", "Max Points", *(column_name(lab) for lab in labs)])
    for row in people(rows):
        who = [row.get("name") or row["student"], row.get("sid", ""), row.get("email", "")]
        writer.writerow([*(text_cell(x) for x in who), lms_cell(row, row.get("total", 0.0)),
                         points_cell(row.get("max_score", 0.0)),
                         *(lms_cell(row, row.get("labs", {}).get(lab.name, 0.0)) for lab in labs)])
    return buf.getvalue()


def lms_cell(row: dict, value) -> str:
    """A score for a grade system: the gradebook's score_cell, but "" for a row graded on the simulator."""
    return "" if row.get("status") in CORRECTNESS_ONLY else score_cell(row, value)


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", errors="replace")
    os.replace(tmp, path)


def write(out, rows, labs, roster_path=None, warn=None) -> list:
    """Writes OUT/canvas.csv and OUT/gradescope.csv; returns their paths. RosterError for an unusable roster."""
    warn = warn or (lambda m: print(m, file=sys.stderr, flush=True))
    roster = read_roster(roster_path) if roster_path else None
    columns = roster_columns(roster_path) if roster_path else ()
    rows = list(rows)
    out = Path(out)
    paths = [out / CANVAS, out / GRADESCOPE]
    _write(paths[0], canvas_text(rows, labs, roster, warn, columns))
    _write(paths[1], gradescope_text(rows, labs))
    left = sum(row.get("status") in CORRECTNESS_ONLY for row in rows)
    if left:
        warn(f"{CANVAS}, {GRADESCOPE}: {left} student{'s' if left != 1 else ''} graded on the simulator left empty "
             f"(correctness of small sizes only, no performance: grade them on a GPU; gradebook.csv has the points)")
    return paths
