"""The gradebook: one CSV row per student, cells safe from spreadsheet formulas, and the closing summary."""
import collections
import csv
import io
import os
from pathlib import Path

from grader.classroom.records import EXIT_NO_DEVICE, EXIT_OK, EXIT_UNGRADED, GRADEBOOK, Options, UNGRADED


# ---- the gradebook ----

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula (OWASP)


def text_cell(value) -> str:
    """A gradebook cell holding text (names, ids, notes, upload names: what students and exports chose), kept a
    text in a spreadsheet: one that starts like a formula gets a leading ' (OWASP's CSV injection advice)."""
    text = str(value if value is not None else "")
    return "'" + text if text.startswith(FORMULA_START) else text


def write_gradebook(path, rows, labs) -> None:
    """gradebook.csv: one row per student, sorted by id; points per lab in labs' order. Written atomically. Text
    cells go through text_cell; the points are the grader's own numbers and stay numbers."""
    path = Path(path)
    lab_names = [lab.name for lab in labs]
    columns = ["student", "name", "sid", "email", "total", "max_score", *lab_names, "status", "notes", "upload"]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in sorted(rows, key=lambda r: r["student"]):
        points = [points_cell(row["labs"].get(name, 0.0)) for name in lab_names]
        notes = "; ".join(n for n in (row.get("id_note", ""), row["notes"]) if n)
        who = [text_cell(row.get(k, "")) for k in ("student", "name", "sid", "email")]
        writer.writerow([*who, points_cell(row["total"]), points_cell(row["max_score"]), *points, text_cell(row["status"]),
                         text_cell(notes), text_cell(row.get("upload", ""))])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8", errors="replace")  # a name that is not UTF-8 keeps a mark
    os.replace(tmp, path)


def points_cell(x) -> str:
    x = float(x)
    return f"{x:g}" if x == int(x) else f"{x:.2f}"


def summarize(rows, out: Path, options: Options, log) -> int:
    """Says what the gradebook holds and returns the exit status for it."""
    counts = collections.Counter(r["status"] for r in rows)
    log(f"gradebook: {out / GRADEBOOK} ({len(rows)} students: "
        + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + ")")
    if any(r["status"] in UNGRADED for r in rows):
        return EXIT_UNGRADED
    if counts.get("no GPU"):
        return EXIT_NO_DEVICE
    return EXIT_OK
