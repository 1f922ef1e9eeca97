"""The course GPU's results back on Gradescope, for a course whose autograder has no GPU (issue 21, item 5).

Gradescope runs the autograder again on every submission of an assignment when its staff update the autograder and
click "Regrade All Submissions" (Manage Submissions); the score and the results each student then sees are what the
new autograder returns. So, after `make grade-class` graded the export ("Export Submissions") on the course's GPU:

    make gradescope CLASS=OUT [LAB=03]     the autograder zip, carrying OUT's results (bundle)

and that zip, uploaded in place of the old one, answers each submission the class graded with the course GPU's
results.json (performance points and feedback, late work and overrides as in the gradebook) instead of grading it
on the simulator again (recorded). A submission is matched by its id (the export's submission_NNN folder, the
runner's submission_metadata.json "id") and by the files graded: one the export did not hold (a submission after
it) is graded on the simulator as before, pending points and all; export and grade again to bring it in.

The zip holds every graded student's results under course/class-results/ (course/ is the course's own folder:
never in the student release). Before a submission is graded its files are made readable by their owner only
(protect), so that the student's code, which runs as another user where bubblewrap is missing, cannot read them;
a submission answered from them runs no code of the student's at all.
"""
import json
import os
import stat
from pathlib import Path

from grader.classroom.records import CLASS_FILE, RECORD, STUDENTS, read_class_file, read_json

FOLDER = "course/class-results"  # in the autograder zip: one SUBMISSION_ID.json per graded submission
GPU_STATUSES = ("graded",)  # rows graded with every test run on a GPU: what the simulator cannot give


class RoundTripError(Exception):
    """The class folder cannot be bundled; the message says why."""


def submission_id(metadata_key: str) -> str:
    """The Gradescope submission id of an export's folder name (submission_123456: 123456), "" for another name."""
    head, _, number = metadata_key.rpartition("_")
    return number if head == "submission" and number.isdigit() else ""


def bundle(out) -> dict:
    """{path in the zip: bytes} for every student of the class in OUT graded on a GPU whose upload is a Gradescope
    submission: FOLDER/ID.json with the files' hash and the results.json as the class run left it (late work and
    overrides in). RoundTripError when OUT is not a graded class or holds no such student."""
    out = Path(out)
    if not (out / CLASS_FILE).is_file():
        raise RoundTripError(f"{out}: no class graded here ({CLASS_FILE} is missing): run make grade-class "
                             f"SUBMISSIONS=EXPORT OUT={out} on the course's GPU first")
    _, entries, _ = read_class_file(out)
    found, skipped = {}, []
    for entry in entries:
        folder = out / STUDENTS / entry.student
        record, results = read_json(folder / RECORD), read_json(folder / "results.json")
        number = submission_id(entry.metadata_key)
        status = ((record or {}).get("row") or {}).get("status")
        if not number or status not in GPU_STATUSES or not results or not (record or {}).get("files"):
            skipped.append(entry.student)
            continue
        files = record["files"].split(":submitted", 1)[0]
        found[f"{FOLDER}/{number}.json"] = json.dumps({"student": entry.student, "files": files,
                                                       "results": results}, indent=1).encode()
    if not found:
        raise RoundTripError(f"{out}: no student graded on a GPU with a Gradescope submission id (the export's "
                             f"submission_NNN folders and its submission_metadata.yml); skipped: "
                             f"{', '.join(skipped[:10]) or 'none'}")
    return found


def protect(folder) -> None:
    """Makes folder and everything under it readable by its owner only (files 0600, folders 0700), links left
    alone: the student's code runs as another user."""
    folder = Path(folder)
    if not folder.is_dir() or folder.is_symlink():
        return
    for root, dirs, files in os.walk(folder):
        os.chmod(root, stat.S_IRWXU)
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)


def recorded(source, root, submission, labs, config) -> dict | None:
    """The course GPU's results for the submission being graded on Gradescope (root/submission_metadata.json's
    id, the files collected into submission), with labs.toml's visibility and output format, or None (no bundle,
    another submission, other files). course/ is protected first, whatever the answer."""
    from grader.classroom.intake import files_hash
    from grader.config import gradescope_settings
    from grader.intake.metadata import RUNNER_FILE
    from grader.report.report import set_output_format, set_visibility
    protect(Path(source) / "course")
    try:
        number = str(json.loads((Path(root) / RUNNER_FILE).read_text(encoding="utf-8")).get("id", ""))
    except (OSError, ValueError, AttributeError):
        return None
    path = Path(source) / FOLDER / f"{number}.json"
    data = read_json(path) if number.isdigit() else None
    if not data or data.get("files") != files_hash(submission, labs) or not isinstance(data.get("results"), dict):
        return None
    results = dict(data["results"])
    results["output"] = ("Graded on the course's GPU after the due date (make grade-class): these are its results, "
                         "performance included.\n\n" + str(results.get("output", "")))
    chosen = gradescope_settings(config)
    return set_output_format(set_visibility(results, labs, chosen["visibility"]), chosen["output_format"])
