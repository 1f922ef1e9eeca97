"""The gradebook as the course's grade systems import it, written beside gradebook.csv by `make grade-class`:

  canvas.csv      Canvas's Gradebook import ("Import" in the Gradebook's actions): the columns of Canvas's own
                  gradebook export, Student, ID, SIS User ID, SIS Login ID, Section, then one column per lab (an
                  assignment of that name, created on import where the course has none) and a Points Possible row.
                  Canvas finds each student by ID, SIS User ID or SIS Login ID. Without a roster, SIS User ID is
                  Gradescope's SID and SIS Login ID the email; give Canvas's own export as the roster
                  (CANVAS_ROSTER=FILE, --canvas-roster) and those columns are copied from it, matched by SID, email
                  or name, and students it lacks are left out and named on stderr.
  gradescope.csv  a score per student for Gradescope: Name, SID, Email (Gradescope's roster columns, which its
                  imports match on), Total Score, Max Points, then the points of each lab.

Points are the gradebook's, overrides included. A student who was not graded (status not graded, error, kit error)
gets empty score cells, so that an import does not write 0 over a grade: grade them, then import. Text cells that a
spreadsheet would take for a formula start with ' (as in the gradebook).
"""
import csv
import io
import os
import sys
from pathlib import Path

from grader.classroom.gradebook import points_cell, text_cell

CANVAS, GRADESCOPE = "canvas.csv", "gradescope.csv"
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "    Points Possible"  # the first cell of the second row of Canvas's export
NOT_GRADED = ("not graded", "error", "kit error")


class RosterError(Exception):
    """The Canvas roster cannot be read; the message says why."""


def read_roster(path) -> list:
    """The students of a Canvas gradebook export (dicts of CANVAS_IDENTITY), its Points Possible row and test
    student left out; RosterError if it lacks those columns."""
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


def _score(row: dict, value) -> str:
    return "" if row.get("status") in NOT_GRADED else points_cell(value)


def canvas_text(rows, labs, roster=None, warn=None) -> str:
    """canvas.csv's text for rows (gradebook rows); with roster (read_roster), its identity columns."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*CANVAS_IDENTITY, *(lab.name for lab in labs)])
    writer.writerow([POINTS_POSSIBLE, "", "", "", "", *(points_cell(lab.max_score) for lab in labs)])
    for row in sorted(rows, key=lambda r: r["student"]):
        if roster is not None:
            entry = match(row, roster)
            if entry is None:
                if warn:
                    who = (f"{row.get('name') or 'no name'}, sid {row.get('sid') or '-'}, "
                           f"{row.get('email') or 'no email'}")
                    warn(f"canvas.csv: {row['student']} ({who}) is not in the Canvas roster: left out")
                continue
            who = [entry[c] for c in CANVAS_IDENTITY]
        else:
            who = [row.get("name") or row["student"], "", row.get("sid", ""), row.get("email", ""), ""]
        writer.writerow([*(text_cell(x) for x in who),
                         *(_score(row, row.get("labs", {}).get(lab.name, 0.0)) for lab in labs)])
    return buf.getvalue()


def gradescope_text(rows, labs) -> str:
    """gradescope.csv's text for rows (gradebook rows)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["Name", "SID", "Email", "Total Score", "Max Points", *(lab.name for lab in labs)])
    for row in sorted(rows, key=lambda r: r["student"]):
        who = [row.get("name") or row["student"], row.get("sid", ""), row.get("email", "")]
        writer.writerow([*(text_cell(x) for x in who), _score(row, row.get("total", 0.0)),
                         points_cell(row.get("max_score", 0.0)),
                         *(_score(row, row.get("labs", {}).get(lab.name, 0.0)) for lab in labs)])
    return buf.getvalue()


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", errors="replace")
    os.replace(tmp, path)


def write(out, rows, labs, roster_path=None, warn=None) -> list:
    """Writes OUT/canvas.csv and OUT/gradescope.csv; returns their paths. RosterError for an unusable roster."""
    warn = warn or (lambda m: print(m, file=sys.stderr, flush=True))
    roster = read_roster(roster_path) if roster_path else None
    rows = list(rows)
    out = Path(out)
    paths = [out / CANVAS, out / GRADESCOPE]
    _write(paths[0], canvas_text(rows, labs, roster, warn))
    _write(paths[1], gradescope_text(rows, labs))
    return paths
