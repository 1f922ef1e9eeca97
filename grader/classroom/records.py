"""What a class grading keeps: its options, the key that lets a rerun skip a student, each student's
record and gradebook row, and the class file (class.json) that Slurm's tasks read."""
import dataclasses
import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from grader.compile import build as build_mod
from grader.compile import static_check
from grader.classroom import intake
from grader.config import DEFAULT_PATH
from grader.patterns import KIT
from grader.report.report import lab_numbers
from grader.run.run import run_harness


CLASS_FILE, GRADEBOOK, RECORD = "class.json", "gradebook.csv", "record.json"
STUDENTS = "students"  # OUT/students/ID: one folder per student, apart from the grader's own files in OUT
EXIT_OK, EXIT_UNGRADED, EXIT_BROKEN, EXIT_NO_DEVICE, EXIT_INTERRUPTED = 0, 1, 2, 77, 130
STATIC_ONLY_MESSAGE = "not run: this grading ran the static checks only (--static-only)"
# Row statuses: graded (every test ran), simulator (graded on the kit's CPU simulator: correctness of small sizes,
# no performance), no GPU (run-time tests not run: no CUDA device), static only, no files
# (the upload held no lab file), unreadable (the upload could not be unpacked), kit error, error (the grader failed
# on this student: a bug to report), not graded (no record: interrupted, or a Slurm task that did not finish).
UNGRADED = ("error", "kit error", "not graded")
# Rows whose points are no grade (the run-time tests did not run, or nothing was graded): their score cells stay empty
# in gradebook.csv, canvas.csv and gradescope.csv, so that no import writes a 0 over a grade.
NOT_SCORED = (*UNGRADED, "static only", "no GPU")
NUMBER_KEYS = ("speedup", "yardstick", "student_ms", "baseline_ms")  # what a row keeps of a lab's numbers
NUDGE_SECONDS = 1.0  # how often the workers are sent SIGCONT while the class is graded
EXPORT_LIMITS = intake.Limits(max_members=500000, max_file_bytes=1 << 30, max_total_bytes=16 << 30,
                              max_scanned_bytes=64 << 30)


@dataclass(frozen=True)
class Hooks:
    """The steps a test may replace, as grader/grade.py's Grader takes them. Each must be a module-level function
    (it crosses into worker processes)."""

    build: object = build_mod.build_lab
    build_harness: object = build_mod.build_harness
    run: object = run_harness
    check: object = static_check.check_object


@dataclass(frozen=True)
class Options:
    """How the class is graded; the same for every student (and written to class.json for Slurm's tasks)."""

    out: str
    config: str = str(DEFAULT_PATH)
    lab: str | None = None
    timeout: float | None = None  # None: python3 -m grader's own limits (labs.toml [limits], else DEFAULT_TIMEOUT)
    build_timeout: float = build_mod.DEFAULT_BUILD_TIMEOUT
    seed: int | None = None
    static_only: bool = False
    keep_builds: bool = False
    harness_build: str | None = None
    limits: intake.Limits = intake.Limits()
    hooks: Hooks = Hooks()
    kit: str = str(KIT)
    simulator: bool = False  # grade on the kit's CPU simulator (grader/sim/simulator.py): correctness, no GPU (SIM=1)
    simulator_check: bool = True  # on a GPU, each lab is also graded on the simulator (grader/sim/sim_check.py)
    mode: str = "gpu"  # gpu, no-gpu, static or simulator: part of each student's key (a no-GPU grading is redone on
    # a GPU)
    gpu_models: str = ""  # the GPU models graded on: their thresholds differ, so they are part of the key too
    # What this run does besides grading; none of it is part of a student's key (grader/classroom/closing.py):
    force: bool = False  # grade again every student of this run, changed or not (--force)
    overrides: str = ""  # the course staff's overrides file (grader/classroom/overrides.py), "" for none
    canvas_roster: str = ""  # Canvas's gradebook export, to match canvas.csv's students (grader/classroom/lms.py)
    similarity: bool = True  # compare the graded files (grader/classroom/similarity.py) once the class is graded
    graders_per_gpu: int = 1  # students graded side by side on each GPU, benchmarks alone (grader/run/gpu_lock.py)

    def to_json(self) -> dict:
        data = dataclasses.asdict(self)
        data.pop("hooks")
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Options":
        data = dict(data)
        data["limits"] = intake.Limits(**data.get("limits", {}))
        return cls(**data)


@dataclass
class Prepared:
    """What the CPU side made of one student: either a finished row (unchanged since the last run, or an upload
    that could not be read), or the intake, key, builds and static checks for the GPU side."""

    student: str
    row: dict | None = None
    unchanged: bool = False
    key: str = ""
    files: str = ""  # the student's part of key: the files graded and when they were submitted
    got: intake.Intake | None = None  # the intake: the labs/-shaped folder and the notes on it
    builds: dict = field(default_factory=dict)  # lab -> BuildResult
    verdicts: dict = field(default_factory=dict)  # lab -> static_check.Verdict, or the ToolError's message
    sim_apart: bool = False  # the simulator's check is a CPU job of its own (student.py's simulate), beside the turn
    seed: int | None = None  # the seed both sides grade with (the simulator's check was made with it)
    stages: dict = field(default_factory=dict)  # lab -> {"build": s, "static checks": s}: the CPU side's seconds
    seconds: float = 0.0


@dataclass
class Turn:
    """What a student's GPU turn made (grader/classroom/student.py's turn), for complete() to finish on the CPU
    side: the report of the run-time tests, the seconds the turn took, and with the simulator's check made apart
    (Prepared.sim_apart) what the Grader's check stood for (Grader.sim_apart): (the labs it submitted to the check,
    lab -> why its check was dropped), for complete() to lay the simulator's verdicts over the report."""

    report: object
    seconds: float = 0.0
    apart: object = None


# ---- the key of a grading: what must not change for a rerun to skip a student ----

KIT_PARTS = ("harness", "patterns", "sim", "mk", "datasets", "grader", "course")  # sim/: every runner's CUDA runtime
# and the simulator; course/: the course's own datasets and tests


def hooks_of(options: Options) -> Hooks:
    """The grading steps of a run: options.hooks, with the simulator's build, harness build and run in place of the
    GPU's where options.simulator asks for it (a test's own steps are kept)."""
    hooks = options.hooks
    if not options.simulator:
        return hooks
    from grader.sim import simulator
    swap = {build_mod.build_lab: simulator.build_lab_sim, build_mod.build_harness: simulator.build_harness_sim,
            run_harness: simulator.run_harness_sim}
    return dataclasses.replace(hooks, build=swap.get(hooks.build, hooks.build),
                               build_harness=swap.get(hooks.build_harness, hooks.build_harness),
                               run=swap.get(hooks.run, hooks.run))


def parts_digest(kit=KIT, *, extra=(), leave_out=()) -> str:
    """A hash of the files of KIT_PARTS in kit, and extra (more files, in the kit or not), each by its path and
    content, leaving out caches and the kit paths that start with one of leave_out."""
    kit, h = Path(kit), hashlib.sha256()
    files = {Path(e).resolve() for e in extra}
    for part in KIT_PARTS:
        path = kit / part
        files.update([path] if path.is_file() else (p for p in path.rglob("*") if p.is_file()))
    for path in sorted(files):
        rel = path.relative_to(kit) if path.is_relative_to(kit) else path
        if "__pycache__" in rel.parts or path.suffix in (".pyc", ".tmp") or rel.as_posix().startswith(leave_out):
            continue
        h.update(str(rel).encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def kit_version(kit=KIT, config=DEFAULT_PATH) -> str:
    """A hash of what grades a submission: the harness, make fragments, datasets, the grader with labs.toml and
    thresholds.d, the rules that pick a lab's file from an upload, and the labs file in use."""
    return parts_digest(kit, extra=[config])


def context_key(options: Options, labs) -> str:
    """The part of every student's key that the whole class shares: the kit's version and the options that change
    a grade."""
    what = {"kit": kit_version(options.kit, options.config), "labs": [lab.name for lab in labs],
            "mode": options.mode, "gpus": options.gpu_models, "timeout": options.timeout,
            "build_timeout": options.build_timeout, "seed": options.seed, "sm": os.environ.get("SM", ""),
            "simulator_check": options.simulator_check}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


def student_key(context: str, upload: str, files: str) -> str:
    """The key of one student: the class's context, the upload's name (an id handed to another upload when the
    uploads change is graded again) and the files graded."""
    return hashlib.sha256(f"{context}:{len(upload)}:{upload}:{files}".encode("utf-8", "surrogateescape")).hexdigest()


def raw_hash(path) -> str:
    """A hash of an upload as it is (for one that cannot be unpacked)."""
    h = hashlib.sha256()
    path = Path(path)
    if path.is_file():
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


# ---- records and rows ----

def read_json(path) -> dict | None:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_json(path, data) -> None:
    """Writes data as JSON to path atomically (a rename), so an interruption never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def final_record(folder, key: str, options: Options, files: str = "") -> dict | None:
    """The student's record if it was made under key, its outputs are there, and it is final: a grading without a
    GPU is redone when the run-time tests can run now. A run that cannot time anything (no GPU, static checks only,
    the simulator) also keeps a GPU grading of the same files (files: the student's part of key) made under another
    key, rather than put a lesser grading in its place."""
    record = read_json(Path(folder) / RECORD)
    if options.force or not record or not isinstance(record.get("row"), dict):
        return None
    kept_gpu = (options.mode != "gpu" and files and record.get("files") == files
                and record["row"].get("status") == "graded")
    if record.get("key") != key and not kept_gpu:
        return None
    if not (Path(folder) / "results.json").is_file():
        return None
    if record["row"].get("status") == "no GPU" and options.mode == "gpu":
        return None
    return record


def identity(entry: intake.Entry) -> dict:
    """The fields of a row that say who it is (refreshed from the class's entries when a record is reused)."""
    return {"student": entry.student, "name": entry.name, "sid": entry.sid, "email": entry.email,
            "upload": Path(entry.path).name, "id_note": entry.note,
            "people": [dict(zip(("name", "sid", "email"), p)) for p in entry.people]}


def blank_row(entry: intake.Entry, labs, status: str, notes: str) -> dict:
    return {**identity(entry), "total": 0.0, "max_score": 0.0, "labs": {lab.name: 0.0 for lab in labs},
            "status": status, "notes": notes}


def recorded_row(options: Options, entry: intake.Entry, labs, missing: str) -> dict:
    """A student's row as their record holds it (who they are refreshed from entry), or a "not graded" row saying
    missing when they have none."""
    record = read_json(Path(options.out) / STUDENTS / entry.student / RECORD)
    if record and isinstance(record.get("row"), dict):
        return {**record["row"], **identity(entry)}
    return blank_row(entry, labs, "not graded", missing)


def lab_notes(report) -> list:
    """One note per lab that lost points for a reason worth a line: no file, no build, forbidden code, a failed,
    hung or crashed test ("03-sequential: TIMEOUT datasets"), and one for the rows the simulator's check could not
    judge through the kit's fault (data["kit_fault"], grader/sim/sim_check.py), which the instructors review."""
    notes = []
    for lab in report.labs():
        rows = [r for r in report.results if r.lab == lab]
        first = next((r for r in rows if r.status in ("NO BUILD", "FORBIDDEN")), None)
        if first and first.summary.startswith("missing file"):
            notes.append(f"{lab}: no file")
            continue
        if first:
            notes.append(f"{lab}: {first.status}")
            continue
        bad = [f"{r.status} {r.name}" for r in rows if r.status in ("FAIL", "TIMEOUT", "CRASH", "CUDA ERROR",
                                                                     "ERROR", "slow", "not graded")]
        if bad:
            notes.append(f"{lab}: " + ", ".join(bad))
        kit = [r.name for r in rows if (r.data or {}).get("kit_fault")]
        if kit:  # the GPU's verdict stood where the simulator's check failed through the kit's fault: for review
            notes.append(f"{lab}: the simulator's check could not judge {', '.join(kit)} (the kit's fault; the GPU's "
                         f"verdict stands): review")
    return notes


def row_of(entry: intake.Entry, report, got: intake.Intake, options: Options) -> dict:
    """The gradebook row of a graded student. With --static-only its status is "static only" for every student
    whose files were read, whether or not their code got as far as a run: a file that does not build would not on
    a GPU either, but its row must not read "graded" beside the others' (the run-time tests ran for nobody).
    numbers: per lab, the speedup and times where its benchmark ran."""
    row = blank_row(entry, [], "graded", "")
    row["labs"] = {lab: round(sum(r.score for r in report.results if r.lab == lab), 2) for lab in report.labs()}
    row["total"], row["max_score"] = report.score, report.max_score
    row["numbers"] = {lab: {k: v for k, v in numbers.items() if k in NUMBER_KEYS}
                      for lab, numbers in lab_numbers(report).items() if "speedup" in numbers}
    if report.kit_error:
        row["status"] = "kit error"
    elif not got.found:
        row["status"] = "no files"
    elif options.static_only or options.mode == "static":
        row["status"] = "static only"
    elif report.no_device:
        row["status"] = "no GPU"
    elif report.simulator:
        row["status"] = "simulator"
    notes = ([report.kit_error] if report.kit_error else []) + got.problems + lab_notes(report)
    row["notes"] = "; ".join(n.replace("\n", " ") for n in notes)
    return row


# ---- the class file ----

def write_class_file(options: Options, entries, submissions, batch: int = 1) -> None:
    write_json(Path(options.out) / CLASS_FILE, {
        "submissions": str(submissions), "batch": batch, "options": options.to_json(),
        "students": [dataclasses.asdict(e) for e in entries]})


def read_class_file(out) -> tuple:
    """(Options, entries, batch) from OUT/class.json; ValueError saying what is wrong."""
    data = read_json(Path(out) / CLASS_FILE)
    if not data or "students" not in data or "options" not in data:
        raise ValueError(f"{Path(out) / CLASS_FILE}: missing or unreadable (made by `grader.classroom grade` or "
                         f"`grader.classroom slurm`)")
    options = Options.from_json(data["options"])
    entries = [intake.Entry(**{**e, "people": tuple(tuple(p) for p in e.get("people", ()))}) for e in data["students"]]
    return options, entries, int(data.get("batch", 1))


def resolve_submissions(submissions: Path, out: Path, log) -> Path:
    """The folder of uploads: submissions itself, or a whole export archive unpacked into OUT/_export."""
    if submissions.is_dir():
        return submissions
    if submissions.is_file() and intake.archive_suffix(submissions.name):
        dest = out / "_export"
        shutil.rmtree(dest, ignore_errors=True)
        log(f"unpacking {submissions} into {dest}")
        intake.extract(submissions, dest, EXPORT_LIMITS, intake.Budget(EXPORT_LIMITS.max_total_bytes),
                       keep=lambda rel: True)
        return dest
    raise ValueError(f"{submissions}: no such folder or archive")


def list_students(submissions, out: Path, strip_prefix: str, log) -> list:
    """The entries of the export (their ids safe and unique: intake.find_entries); ValueError when there are
    none."""
    folder = resolve_submissions(Path(submissions), out, log)
    entries, notes = intake.find_entries(folder, strip_prefix)
    for note in notes + [e.note for e in entries if e.note]:
        log(f"note: {note}")
    if not entries:
        raise ValueError(f"{submissions}: no student uploads (folders or archives) found")
    return entries
