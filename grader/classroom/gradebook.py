"""The gradebook: one CSV row per student, cells safe from spreadsheet formulas, and the closing summary."""
import collections
import csv
import io
import math
import os
from pathlib import Path

from grader.classroom.records import (EXIT_NO_DEVICE, EXIT_OK, EXIT_UNGRADED, GRADEBOOK, NOT_SCORED, Options,
                                      UNGRADED)
from grader.report.text import printable


# ---- the gradebook ----

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula (OWASP)


def text_cell(value) -> str:
    """A gradebook cell holding text (names, ids, notes, upload names: what students and exports chose), kept a
    text in a spreadsheet: one that starts like a formula gets a leading ' (OWASP's CSV injection advice). A cell is
    one line, without escape sequences or control characters (grader/report/text.py)."""
    text = printable(value, keep="")
    return "'" + text if text.startswith(FORMULA_START) else text


def members(row: dict) -> list:
    """The row once per person who submitted the upload (a group upload lists several in Gradescope's metadata), each
    with that person's name, sid and email; the row itself when the metadata names one person or none."""
    people = row.get("people") or []
    if len(people) < 2:
        return [row]
    return [{**row, "name": p.get("name", ""), "sid": p.get("sid", ""), "email": p.get("email", "")} for p in people]


def scored(row: dict) -> bool:
    """Whether the row's points are a grade (records.NOT_SCORED: static only, no GPU, kit error, not graded...)."""
    return row.get("status") not in NOT_SCORED


def score_cell(row: dict, value) -> str:
    """A score in an export: its points, or "" for a row that was not graded (never a 0 over an old grade)."""
    return points_cell(value) if scored(row) else ""


def write_gradebook(path, rows, labs) -> None:
    """gradebook.csv: one row per person (a group upload's members each get its row: members), sorted by id; points
    per lab in labs' order (empty, as the total, where the row is not a grade: score_cell), then for each lab with a
    performance test the speedup its benchmark measured ("LAB speedup": x baseline, or the fraction of CUB's speed)
    and the kernel's time ("LAB ms"), empty where none was measured. Written atomically. Text cells go through
    text_cell; the points and measurements are the grader's own numbers and stay numbers."""
    path = Path(path)
    lab_names = [lab.name for lab in labs]
    timed = [lab.name for lab in labs if lab.performance is not None]
    columns = ["student", "name", "sid", "email", "total", "max_score", *lab_names, "status", "notes", "upload",
               *(f"{name} {what}" for name in timed for what in ("speedup", "ms"))]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in (m for r in sorted(rows, key=lambda r: r["student"]) for m in members(r)):
        points = [score_cell(row, row["labs"].get(name, 0.0)) for name in lab_names]
        notes = "; ".join(n for n in (row.get("id_note", ""), row["notes"]) if n)
        who = [text_cell(row.get(k, "")) for k in ("student", "name", "sid", "email")]
        numbers = row.get("numbers") or {}
        measured = [number_cell((numbers.get(name) or {}).get(key)) for name in timed
                    for key in ("speedup", "student_ms")]
        writer.writerow([*who, score_cell(row, row["total"]), points_cell(row["max_score"]), *points,
                         text_cell(row["status"]), text_cell(notes), text_cell(row.get("upload", "")), *measured])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8", errors="replace")  # a name that is not UTF-8 keeps a mark
    os.replace(tmp, path)


def number_cell(x) -> str:
    """A measurement: 4 significant digits (a speedup 6.103, a time 0.1234 ms), or "" where there is none."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        return ""
    return f"{value:.4g}" if math.isfinite(value) else ""


def points_cell(x) -> str:
    x = float(x)
    return f"{x:g}" if x == int(x) else f"{x:.2f}"


def summarize(rows, out: Path, options: Options, log) -> int:
    """Says what the gradebook holds and returns the exit status for it."""
    counts = collections.Counter(r["status"] for r in rows)
    log(f"gradebook: {out / GRADEBOOK} ({len(rows)} students: "
        + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + ")")
    if any(r["status"] in UNGRADED for r in rows):
        status, why = EXIT_UNGRADED, "some students could not be graded (status " + ", ".join(
            sorted({r["status"] for r in rows if r["status"] in UNGRADED})) + ")"
    elif counts.get("no GPU"):
        status, why = EXIT_NO_DEVICE, "no GPU: the run-time tests did not run"
    else:
        return EXIT_OK
    log(f"exit status {status}: {why}")
    return status
