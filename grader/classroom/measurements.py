"""What a class grading keeps of each student besides the record: OUT/students/STUDENT/measurements.json, the
report as graded (every test's status, text and data: a benchmark's whole result line), what the intake found, and a
signature of the tests each lab ran; grader/classroom/rescore.py scores it again under a changed labs file."""
import functools
import hashlib
import json
from pathlib import Path

from grader.classroom.records import parts_digest, write_json

MEASUREMENTS = "measurements.json"
KIT_CODE_EXCLUDED = ("grader/labs.toml", "grader/thresholds.d/", "course/labs.toml")  # what a rescore may change
REPORT_FIELDS = ("submission", "seed", "notes", "seconds", "no_device", "kit_error", "device", "sandbox",
                 "build_sandbox", "simulator", "stage_seconds", "simulator_check")


def signature(lab) -> str:
    """A hash of what a lab's grading runs (its groups' runs and datasets, its arguments, its benchmark size and
    yardstick, its sanitizer runs), not of its points or thresholds: equal signatures can be rescored."""
    what = {"groups": [(g.name, g.runs, g.datasets, g.expected) for g in lab.groups], "args": lab.args,
            "bench": (lab.performance.bench, lab.performance.yardstick) if lab.performance else None,
            "sanitizers": (lab.sanitizers.tools, lab.sanitizers.runs) if lab.sanitizers else None}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=list).encode()).hexdigest()


@functools.lru_cache(maxsize=4)
def code_version(kit) -> str:
    """A hash of the kit's parts that grade (records.KIT_PARTS) but the labs files: what a rescore cannot change.
    Computed once per process and kit (a class's grading does not change the kit)."""
    return parts_digest(kit, leave_out=KIT_CODE_EXCLUDED)


def save(folder, report, got, labs, kit) -> None:
    """Writes folder/measurements.json: the report as graded (grader.report.report.Report), the intake's findings (got:
    intake.Intake), each lab's signature and the kit's code_version."""
    data = {"report": {k: getattr(report, k) for k in REPORT_FIELDS},
            "results": [vars(r) for r in report.results],
            "intake": {"submission": str(got.submission), "found": got.found, "notes": got.notes,
                       "problems": got.problems},
            "labs": {lab.name: signature(lab) for lab in labs}, "code": code_version(kit)}
    write_json(Path(folder) / MEASUREMENTS, data)
