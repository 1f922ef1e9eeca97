"""What follows the grading of a class (`grade` on this machine, `merge` after a Slurm run): the course staff's
overrides laid over the graded rows and the students' outputs, then gradebook.csv, canvas.csv and gradescope.csv,
the similarity report and the class report (report.html), and the closing summary with the exit status.

Every step after the gradebook is a convenience for people: one that fails says so on stderr and the class's
grades stand (the exit status is the gradebook's). The overrides are different: a file that cannot be used stops
the run before anything is graded (load_overrides, called first).
"""
import concurrent.futures
import dataclasses
from pathlib import Path

from grader.classroom import class_report, lms, overrides, similarity
from grader.classroom.gradebook import summarize, write_gradebook
from grader.classroom.records import CLASS_FILE, GRADEBOOK, Options, STUDENTS, read_json
from grader.classroom.student import config_of


def choose_overrides(options: Options, log) -> Options:
    """options with the run's overrides file settled (overrides.choose: the one named, else the one the class
    folder's last run applied, else OUT/overrides.csv; overrides.NONE for none), said on log when it is worth a
    line; overrides.OverrideError when the last run's file is gone and none is named."""
    last = ((read_json(Path(options.out) / CLASS_FILE) or {}).get("options") or {}).get("overrides") or ""
    chosen, line = overrides.choose(options.out, options.overrides, "" if last == overrides.NONE else last)
    if line:
        log(line)
    return dataclasses.replace(options, overrides=chosen or overrides.NONE)


def load_overrides(options: Options, labs, entries) -> dict:
    """{student id: [Override]} from the run's overrides file (none: {}), whose lines name students by id, email or
    sid (entries: the class's intake.Entry's); overrides.OverrideError when it cannot be used."""
    path = overrides.default_path(options.out, options.overrides)
    if path is None:
        return {}
    return overrides.load(path, labs, entries)


def final_row(row: dict, table: dict, labs) -> dict:
    """A graded row with its overrides (table: load_overrides's) laid over it."""
    return overrides.apply_row(row, table.get(row["student"], []), labs)


def mark_outputs(options: Options, row: dict) -> None:
    """Lays the final row's overrides over the student's results.json and feedback.txt (or takes old ones away)."""
    folder = Path(options.out) / STUDENTS / row["student"]
    if folder.is_dir():
        overrides.apply_outputs(folder, row)


def start_similarity(options: Options, labs):
    """The similarity report (make similarity), made in a thread of its own from the students' folders as they
    are now, or None when the class has none: a class run starts it once every upload is unpacked, so that close
    does not wait for it after the last GPU turn (about 0.5 s for 16 students). close takes the future."""
    if not options.similarity:
        return None
    config = config_of(options)
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="similarity")
    future = pool.submit(similarity.run, similarity.graded_folders(Path(options.out)), labs, Path(options.out),
                         cap=config.limits.lab_file_bytes)
    pool.shutdown(wait=False)
    return future


def close(rows, options: Options, labs, table: dict, log, similar=None) -> int:
    """Writes everything a graded class gets from rows (the graded rows, overrides not yet applied) and returns
    the exit status (grader/classroom/gradebook.py: summarize). similar: start_similarity's future, when the
    report was started during the grading."""
    out = Path(options.out)
    final = [final_row(row, table, labs) for row in rows]
    for row in final:
        mark_outputs(options, row)
    write_gradebook(out / GRADEBOOK, final, labs)
    try:
        lms.write(out, final, labs, options.canvas_roster or None, warn=log)
    except (lms.RosterError, OSError) as e:
        log(f"canvas.csv and gradescope.csv not written: {e}")
    config = config_of(options)
    if options.similarity:
        try:
            path, results = similar.result() if similar is not None else similarity.run(
                similarity.graded_folders(out), labs, out, cap=config.limits.lab_file_bytes)
            log(f"similarity: {similarity.summary(results)}: {path}")
        except (similarity.SimilarityError, OSError) as e:
            log(f"similarity report not written: {e}")
    page = class_report.write(out, final, labs, options=options.to_json(), calibration=config.calibration)
    if page:
        log(f"class report: {page}")
    return summarize(final, out, options, log)
