#!/usr/bin/env python3
"""Grades a whole class: one upload per student (folders, .zip, .tar, .tar.gz, as Gradescope and GitHub Classroom
export them), every lab graded as grader/grade.py grades it, into one gradebook.

    python3 grader/classroom.py grade SUBMISSIONS [--out build/class] [--lab 03] [--jobs N] [--gpus N]
    python3 grader/classroom.py slurm SUBMISSIONS [--out DIR] [--submit] ...   a Slurm job array instead (see --help)
    python3 grader/classroom.py merge --out DIR                                the gradebook from what is graded

What it writes under OUT:
  gradebook.csv                    one row per student: id, name, sid, email (from Gradescope's
                                   submission_metadata.yml), total, maximum, points per lab, status and notes (why
                                   points were lost, or why the upload could not be graded)
  students/STUDENT/results.json    Gradescope's results.json (grader/report.py), as grade.py writes it
  students/STUDENT/feedback.txt    which file was graded for each lab, then the table grade.py prints
  students/STUDENT/submission/     the files graded, shaped like labs/
  students/STUDENT/record.json     the row and the key it was graded under (what makes a rerun skip the student)
  class.json                       the students and the options: what `merge` and the Slurm tasks read
STUDENT is the upload's name cleaned to a safe folder name (letters, digits and ._@+-), with -2, -3 when two uploads
clean to the same (the gradebook's notes say so): students/ holds nothing else, so no upload can reach the
grader's own files. Cells of the gradebook that a spreadsheet would take for a formula (=, +, -, @, tab, carriage
return first) start with ' instead.

How: the uploads are unpacked (grader/intake.py: safe, size-capped) and each student's labs are built and
statically checked in a pool of CPU processes (--jobs, default one per CPU); the run-time tests then run one
student at a time on each GPU, a worker process per GPU pinned with CUDA_VISIBLE_DEVICES (--gpus, default every
GPU `nvidia-smi -L` lists). Progress (n/N done, who is on which GPU, ETA) goes to stderr.

A rerun (after an interruption, or with more uploads) skips every student whose graded files, and the kit's
harness, grader, labs.toml and options, are unchanged since their record was written. A student whose upload is
unreadable, or whose code hangs or crashes, gets a row saying so and the class goes on. Without a GPU the labs are
still built and statically checked, and the run-time tests are reported as not run (exit status 77); --static-only
does that on purpose.

Exit status: 0 every student graded; 1 some could not be graded (status "error" or "kit error" in the gradebook);
2 bad usage or a broken kit (nothing graded); 77 no GPU: run-time tests not run; 130 interrupted (run it again to
go on).
"""
import argparse
import collections
import concurrent.futures as cf
import csv
import dataclasses
import hashlib
import io
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the kit's root importable instead of grader/
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from grader import build as build_mod  # noqa: E402
from grader import intake, static_check  # noqa: E402
from grader.build import BuildResult  # noqa: E402
from grader.config import ConfigError, DEFAULT_PATH, load_config  # noqa: E402
from grader.grade import DEFAULT_TIMEOUT, Grader  # noqa: E402
from grader.report import format_table, write_results  # noqa: E402
from grader.run import NO_DEVICE_MESSAGE, Outcome, run_harness  # noqa: E402

KIT = Path(__file__).resolve().parent.parent
CLASS_FILE, GRADEBOOK, RECORD = "class.json", "gradebook.csv", "record.json"
STUDENTS = "students"  # OUT/students/ID: one folder per student, apart from the grader's own files in OUT
EXIT_OK, EXIT_UNGRADED, EXIT_BROKEN, EXIT_NO_DEVICE, EXIT_INTERRUPTED = 0, 1, 2, 77, 130
STATIC_ONLY_MESSAGE = "not run: this grading ran the static checks only (--static-only)"
# Row statuses: graded (every test ran), no GPU (run-time tests not run: no CUDA device), static only, no files
# (the upload held no lab file), unreadable (the upload could not be unpacked), kit error, error (the grader failed
# on this student: a bug to report), not graded (no record: interrupted, or a Slurm task that did not finish).
UNGRADED = ("error", "kit error", "not graded")
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
    timeout: float = DEFAULT_TIMEOUT
    build_timeout: float = build_mod.DEFAULT_BUILD_TIMEOUT
    seed: int | None = None
    static_only: bool = False
    keep_builds: bool = False
    harness_build: str | None = None
    limits: intake.Limits = intake.Limits()
    hooks: Hooks = Hooks()
    kit: str = str(KIT)
    mode: str = "gpu"  # gpu, no-gpu or static: part of each student's key (a no-GPU grading is redone on a GPU)
    gpu_models: str = ""  # the GPU models graded on: their thresholds differ, so they are part of the key too

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
    got: intake.Intake | None = None  # the intake: the labs/-shaped folder and the notes on it
    builds: dict = field(default_factory=dict)  # lab -> BuildResult
    verdicts: dict = field(default_factory=dict)  # lab -> static_check.Verdict, or the ToolError's message
    seconds: float = 0.0


# ---- the key of a grading: what must not change for a rerun to skip a student ----

KIT_PARTS = ("harness", "mk", "datasets", "grader", "tools/gradescope/autograde.py")


def kit_version(kit=KIT, config=DEFAULT_PATH) -> str:
    """A hash of what grades a submission: the harness, make fragments, datasets, the grader with labs.toml and
    thresholds.d, the rules that pick a lab's file from an upload, and the labs file in use."""
    kit, h = Path(kit), hashlib.sha256()
    files = set()
    for part in KIT_PARTS:
        path = kit / part
        files.update([path] if path.is_file() else (p for p in path.rglob("*") if p.is_file()))
    files.add(Path(config).resolve())
    for path in sorted(files):
        rel = path.relative_to(kit) if path.is_relative_to(kit) else path
        if "__pycache__" in rel.parts or path.suffix in (".pyc", ".tmp"):
            continue
        h.update(str(rel).encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def context_key(options: Options, labs) -> str:
    """The part of every student's key that the whole class shares: the kit's version and the options that change
    a grade."""
    what = {"kit": kit_version(options.kit, options.config), "labs": [lab.name for lab in labs],
            "mode": options.mode, "gpus": options.gpu_models, "timeout": options.timeout,
            "build_timeout": options.build_timeout, "seed": options.seed, "sm": os.environ.get("SM", "")}
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


def final_record(folder, key: str, options: Options) -> dict | None:
    """The student's record if it was made under key, its outputs are there, and it is final: a grading without a
    GPU is redone when the run-time tests can run now."""
    record = read_json(Path(folder) / RECORD)
    if not record or record.get("key") != key or not isinstance(record.get("row"), dict):
        return None
    if not (Path(folder) / "results.json").is_file():
        return None
    if record["row"].get("status") == "no GPU" and options.mode == "gpu":
        return None
    return record


def identity(entry: intake.Entry) -> dict:
    """The fields of a row that say who it is (refreshed from the class's entries when a record is reused)."""
    return {"student": entry.student, "name": entry.name, "sid": entry.sid, "email": entry.email,
            "upload": Path(entry.path).name, "id_note": entry.note}


def blank_row(entry: intake.Entry, labs, status: str, notes: str) -> dict:
    return {**identity(entry), "total": 0.0, "max_score": 0.0, "labs": {lab.name: 0.0 for lab in labs},
            "status": status, "notes": notes}


def lab_notes(report) -> list:
    """One note per lab that lost points for a reason worth a line: no file, no build, forbidden code, a failed,
    hung or crashed test ("03-sequential: TIMEOUT datasets")."""
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
                                                                     "ERROR", "slow")]
        if bad:
            notes.append(f"{lab}: " + ", ".join(bad))
    return notes


def row_of(entry: intake.Entry, report, got: intake.Intake, options: Options) -> dict:
    """The gradebook row of a graded student."""
    row = blank_row(entry, [], "graded", "")
    row["labs"] = {lab: round(sum(r.score for r in report.results if r.lab == lab), 2) for lab in report.labs()}
    row["total"], row["max_score"] = report.score, report.max_score
    if report.kit_error:
        row["status"] = "kit error"
    elif not got.found:
        row["status"] = "no files"
    elif report.no_device:
        row["status"] = "static only" if options.static_only else "no GPU"
    notes = ([report.kit_error] if report.kit_error else []) + got.problems + lab_notes(report)
    row["notes"] = "; ".join(n.replace("\n", " ") for n in notes)
    return row


# ---- one student, in a worker process ----

_configs = {}


def config_of(options: Options):
    """The Config graded with, loaded once per process (again when the file changes)."""
    try:
        st = os.stat(options.config)
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    if _configs.get(options.config, (None, None))[0] != stamp or stamp is None:
        _configs[options.config] = (stamp, load_config(options.config))
    return _configs[options.config][1]


def labs_of(options: Options) -> list:
    """The labs graded."""
    return config_of(options).select(options.lab)


def _interrupt(signum, frame):
    """SIGTERM (Slurm's scancel, timeout(1)) stops grading as Ctrl-C does, so that what runs is killed cleanly."""
    raise KeyboardInterrupt


def _worker_init(gpu):
    """A worker process: pinned to one GPU (the harness it runs inherits this), and deaf to Ctrl-C and SIGTERM
    while idle (the task it runs hears them: see _interruptible), for a worker that died idle would break its pool
    and the parent's shutdown."""
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


class _interruptible:
    """Ctrl-C (or SIGTERM) stops the task now running (its harness or compiler is killed with its process
    group)."""

    def __enter__(self):
        if multiprocessing.parent_process() is not None:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, _interrupt)

    def __exit__(self, *exc):
        if multiprocessing.parent_process() is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return False


def student_folder(options: Options, student: str) -> Path:
    """OUT/students/ID: a student's outputs, apart from the grader's own files in OUT."""
    return Path(options.out) / STUDENTS / student


def prepare(options: Options, entry: intake.Entry, context: str) -> Prepared:
    """The CPU side of one student: unpack the upload, skip it if unchanged, else build every lab and run the
    static checks. An unreadable upload is finished here, with its row."""
    with _interruptible():
        start = time.monotonic()
        labs, folder = labs_of(options), student_folder(options, entry.student)
        try:
            got = intake.gather(entry, labs, folder, options.limits)
        except intake.IntakeError as e:
            key = student_key(context, Path(entry.path).name, "unreadable:" + raw_hash(entry.path))
            record = final_record(folder, key, options)
            if record:
                return Prepared(entry.student, row={**record["row"], **identity(entry)}, unchanged=True)
            return Prepared(entry.student, row=write_unreadable(options, entry, labs, folder, key, str(e)))
        key = student_key(context, Path(entry.path).name, intake.files_hash(got.submission, labs))
        record = final_record(folder, key, options)
        if record:
            return Prepared(entry.student, row={**record["row"], **identity(entry)}, unchanged=True)
        (folder / RECORD).unlink(missing_ok=True)
        prepared = Prepared(entry.student, key=key, got=got)
        hooks = options.hooks
        for lab in labs:
            built = hooks.build(Path(options.kit), lab.pattern, got.submission / lab.name / lab.source,
                                folder / "build" / lab.name, timeout=options.build_timeout,
                                harness_build=options.harness_build)
            prepared.builds[lab.name] = built
            if built.object is not None:
                try:
                    prepared.verdicts[lab.name] = hooks.check(built.object, lab.pattern)
                except static_check.ToolError as e:
                    prepared.verdicts[lab.name] = str(e)
        prepared.seconds = time.monotonic() - start
        return prepared


def _static_only_run(program, args, *, timeout, workdir, cwd=None, source="the lab's file") -> Outcome:
    """The run hook of --static-only: nothing runs; every run-time test is reported as not run."""
    return Outcome("no-device", NO_DEVICE_MESSAGE)


def finish(options: Options, entry: intake.Entry, prepared: Prepared) -> dict:
    """The GPU side of one student: the Grader, with the builds and static checks the CPU side made, runs the
    run-time tests; then results.json, feedback.txt and the record are written. Returns the row."""
    with _interruptible():
        start = time.monotonic()
        labs, folder = labs_of(options), student_folder(options, entry.student)
        builds, verdicts = prepared.builds, prepared.verdicts

        def build(kit, pattern, source, target, timeout=None, harness_build=None):
            return builds[Path(target).name]

        def check(obj, pattern):
            verdict = verdicts[Path(obj).parent.name]
            if isinstance(verdict, str):
                raise static_check.ToolError(verdict)
            return verdict

        run = _static_only_run if options.static_only else options.hooks.run
        grader = Grader(config_of(options), prepared.got.submission, kit=options.kit,
                        build_dir=folder / "build", timeout=options.timeout, build_timeout=options.build_timeout,
                        seed=options.seed, harness_build=options.harness_build, build=build,
                        build_harness=lambda *a, **k: BuildResult(True), run=run, check=check)
        report = grader.grade(labs)
        report.seconds += prepared.seconds
        tidy(report, folder, options)
        row = row_of(entry, report, prepared.got, options)
        write_outputs(options, entry, folder, report, prepared.got, row, prepared.key,
                      prepared.seconds + time.monotonic() - start)
        if not options.keep_builds:
            for lab in labs:
                for program in (folder / "build" / lab.name).glob("*_lab"):
                    program.unlink(missing_ok=True)
        return row


def grade_one(options: Options, entry: intake.Entry, context: str) -> Prepared:
    """Both sides of one student in one process (no GPU to wait for, or a Slurm task)."""
    prepared = prepare(options, entry, context)
    if prepared.row is None:
        prepared.row = finish(options, entry, prepared)
    return prepared


def tidy(report, folder: Path, options: Options) -> None:
    """The report as a student reads it: paths inside their folder shown relative to it, the submission named by
    the student, and with --static-only, "skipped" rather than "no CUDA device"."""
    prefix = f"{folder}/"
    for r in report.results:
        r.summary, r.detail = r.summary.replace(prefix, ""), r.detail.replace(prefix, "")
        if options.static_only:
            r.summary = r.summary.replace(NO_DEVICE_MESSAGE, STATIC_ONLY_MESSAGE)
    if options.static_only:
        no_device_note = NO_DEVICE_MESSAGE.replace("not run: ", "Run-time tests not run: ")
        report.notes = [STATIC_ONLY_MESSAGE.replace("not run: ", "Run-time tests not run: ")
                        if n == no_device_note else n for n in report.notes]


def header(entry: intake.Entry) -> str:
    who = " ".join(x for x in (entry.name, f"<{entry.email}>" if entry.email else "") if x)
    return f"Student: {entry.student}{' (' + who + ')' if who else ''}, upload {Path(entry.path).name}"


def write_outputs(options, entry, folder, report, got, row, key, seconds) -> None:
    """results.json, feedback.txt, then the record (last: it marks the student as done)."""
    config = config_of(options)
    report.notes.append(f"Performance thresholds: {config.calibration['calibrated_on']} "
                        f"(GPU: {config.calibration['gpu']})")
    report.submission = entry.student
    row["seconds"] = round(seconds, 1)
    write_results(report, folder / "results.json")
    text = "\n".join([header(entry), *got.notes, "", format_table(report), ""])
    (folder / "feedback.txt").write_text(text, encoding="utf-8", errors="replace")
    write_json(folder / RECORD, {"student": entry.student, "key": key, "row": row,
                                 "graded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")})


def write_unreadable(options, entry, labs, folder, key, why: str) -> dict:
    """The outputs of an upload that could not be unpacked: 0 points, and why."""
    shutil.rmtree(folder / "submission", ignore_errors=True)
    row = blank_row(entry, labs, "unreadable", why)
    row["max_score"] = round(sum(lab.max_score for lab in labs if not lab.bonus), 2)
    fallback = intake.autograde_module().fallback_results(f"Your upload could not be graded: {why}", labs)
    write_json(folder / "results.json", fallback)
    (folder / "feedback.txt").write_text(f"{header(entry)}\nThe upload could not be graded: {why}\n",
                                         encoding="utf-8", errors="replace")
    write_json(folder / RECORD, {"student": entry.student, "key": key, "row": row,
                                 "graded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    return row


def error_row(entry: intake.Entry, labs, error: BaseException) -> dict:
    """The row of a student the grader failed on (its traceback goes to stderr)."""
    what = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()[-1]
    return blank_row(entry, labs, "error", f"the grader failed on this student: {what}")


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
        points = [_points(row["labs"].get(name, 0.0)) for name in lab_names]
        notes = "; ".join(n for n in (row.get("id_note", ""), row["notes"]) if n)
        who = [text_cell(row.get(k, "")) for k in ("student", "name", "sid", "email")]
        writer.writerow([*who, _points(row["total"]), _points(row["max_score"]), *points, text_cell(row["status"]),
                         text_cell(notes), text_cell(row.get("upload", ""))])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8", errors="replace")  # a name that is not UTF-8 keeps a mark
    os.replace(tmp, path)


def _points(x) -> str:
    x = float(x)
    return f"{x:g}" if x == int(x) else f"{x:.2f}"


# ---- the class file ----

def write_class_file(options: Options, entries, submissions, batch: int = 1) -> None:
    write_json(Path(options.out) / CLASS_FILE, {
        "submissions": str(submissions), "batch": batch, "options": options.to_json(),
        "students": [dataclasses.asdict(e) for e in entries]})


def read_class_file(out) -> tuple:
    """(Options, entries, batch) from OUT/class.json; ValueError saying what is wrong."""
    data = read_json(Path(out) / CLASS_FILE)
    if not data or "students" not in data or "options" not in data:
        raise ValueError(f"{Path(out) / CLASS_FILE}: missing or unreadable (made by `classroom.py grade` or "
                         f"`classroom.py slurm`)")
    options = Options.from_json(data["options"])
    return options, [intake.Entry(**e) for e in data["students"]], int(data.get("batch", 1))


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


# ---- GPUs ----

def visible_gpus() -> tuple:
    """(ids to pin workers to, model names): the GPUs `nvidia-smi -L` lists, or those CUDA_VISIBLE_DEVICES names."""
    smi = shutil.which("nvidia-smi")
    listed = []
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60).stdout
            listed = [ln for ln in out.splitlines() if ln.startswith("GPU ")]
        except (OSError, subprocess.TimeoutExpired):
            listed = []
    models = sorted({ln.split(": ", 1)[1].split(" (UUID")[0] for ln in listed if ": " in ln})
    ids = [str(k) for k in range(len(listed))]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and listed:
        ids = [x.strip() for x in visible.split(",") if x.strip() and x.strip() != "-1"]
    return ids, models


# ---- progress ----

class Progress:
    """Progress on stderr: a line as each student is done, with n/N, who is being graded where, and an ETA."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.worked = total, 0, 0
        self.start = time.monotonic()
        self.stream = stream or sys.stderr
        self.running = {}  # student -> "building" or "gpuK"

    def where(self, student: str, place: str | None) -> None:
        if place is None:
            self.running.pop(student, None)
        else:
            self.running[student] = place

    def finished(self, student: str, row: dict, unchanged: bool) -> None:
        self.done += 1
        self.worked += not unchanged
        self.running.pop(student, None)
        width = len(str(self.total))
        how = "unchanged, not regraded" if unchanged else f"{row.get('seconds', 0):.1f} s"
        score = f"{_points(row['total'])}/{_points(row['max_score'])}"
        print(f"[{self.done:>{width}}/{self.total}] {student:<24} {score:>9}  {row['status']} ({how})"
              f"{self._now()}{self._eta()}", file=self.stream, flush=True)

    def _now(self) -> str:
        gpu = sorted(f"{s}@{p}" for s, p in self.running.items() if p.startswith("gpu"))
        building = sum(1 for p in self.running.values() if p == "building")
        waiting = sum(1 for p in self.running.values() if p == "waiting")
        parts = gpu + ([f"{building} to build"] if building else []) + ([f"{waiting} built, waiting for a GPU"]
                                                                        if waiting else [])
        return f" | now: {', '.join(parts)}" if parts else ""

    def _eta(self) -> str:
        left = self.total - self.done
        if not left:
            return ""
        if not self.worked:
            return " | ETA ?"
        seconds = (time.monotonic() - self.start) / self.done * left
        return f" | ETA {int(seconds // 60)}m{int(seconds % 60):02d}s"


# ---- grading a class on this machine ----

class Pool:
    """A process pool that is made again when one of its workers dies (a worker killed for memory, say)."""

    def __init__(self, workers: int, gpu=None):
        self.workers, self.gpu = workers, gpu
        self.executor = self._new()

    def _new(self):
        return cf.ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                      initializer=_worker_init, initargs=(self.gpu,))

    def submit(self, fn, *args):
        try:
            return self.executor.submit(fn, *args)
        except BrokenProcessPool:
            self.renew()
            return self.executor.submit(fn, *args)

    def renew(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.executor = self._new()

    def shutdown(self, cancel: bool = False) -> None:
        self.executor.shutdown(wait=True, cancel_futures=cancel)


def stop_workers(pools=(), grace: float = 30.0) -> None:
    """After Ctrl-C or SIGTERM: each busy worker is told to stop its task (its harness or compiler is killed), the
    pools are shut down, and a worker still there after grace seconds is killed. Further signals are ignored
    meanwhile (timeout(1) sends its SIGTERM twice): cut short, the cleanup would leave workers that keep the
    interpreter from exiting."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for worker in multiprocessing.active_children():  # a busy one stops its task; an idle one ignores it
        try:
            os.kill(worker.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for pool in pools:
        pool.executor.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + grace
    for worker in multiprocessing.active_children():
        worker.join(max(0.0, deadline - time.monotonic()))
    for worker in multiprocessing.active_children():
        worker.kill()
        worker.join()


def continue_workers() -> None:
    """SIGCONT to every worker process: one that a student's program stopped (SIGSTOP, without the sandbox that
    forbids it) goes on, and its own timeouts fire, instead of holding the class for good."""
    for worker in multiprocessing.active_children():
        try:
            os.kill(worker.pid, signal.SIGCONT)
        except (ProcessLookupError, PermissionError):
            pass


def grade_class(entries, options: Options, jobs: int, gpu_ids: list, log=None, stream=None) -> int:
    """Grades every entry (the harness already built) and writes the gradebook; returns the exit status."""
    log = log or (lambda message: print(message, file=sys.stderr, flush=True))
    labs = labs_of(options)
    context = context_key(options, labs)
    out = Path(options.out)
    rows = {}
    progress = Progress(len(entries), stream)
    cpu = Pool(max(1, jobs))
    gpus = [Pool(1, gpu) for gpu in gpu_ids]
    idle = list(range(len(gpus)))
    ready = collections.deque()  # (entry, Prepared) waiting for a GPU
    pending = {}  # future -> (entry, pool, executor, GPU index or None)
    retried = set()
    by_student = {e.student: e for e in entries}

    def submit_cpu(entry):
        fn = prepare if gpus else grade_one
        pending[cpu.submit(fn, options, entry, context)] = (entry, cpu, cpu.executor, None)
        progress.where(entry.student, "building")

    def dispatch():
        while ready and idle:
            k = idle.pop(0)
            entry, prepared = ready.popleft()
            pending[gpus[k].submit(finish, options, entry, prepared)] = (entry, gpus[k], gpus[k].executor, k)
            progress.where(entry.student, f"gpu{gpu_ids[k]}")

    def done(entry, row, unchanged):
        rows[entry.student] = row
        progress.finished(entry.student, row, unchanged)
        write_gradebook(out / GRADEBOOK, rows.values(), labs)

    try:
        for entry in entries:
            submit_cpu(entry)
        while pending:
            finished, _ = cf.wait(pending, timeout=NUDGE_SECONDS, return_when=cf.FIRST_COMPLETED)
            continue_workers()
            for future in finished:
                entry, pool, executor, k = pending.pop(future)
                if k is not None:
                    idle.append(k)
                try:
                    result = future.result()
                except BrokenProcessPool as e:
                    if pool.executor is executor:
                        pool.renew()
                    if entry.student in retried or k is not None:
                        done(entry, error_row(entry, labs, e), False)
                    else:  # a worker died, perhaps on another student's job: once more
                        retried.add(entry.student)
                        submit_cpu(entry)
                    continue
                except Exception as e:  # a grader bug on this student: say so, go on with the class
                    traceback.print_exception(e, file=sys.stderr)
                    done(entry, error_row(entry, labs, e), False)
                    continue
                if isinstance(result, dict):  # finish(): the row
                    done(entry, result, False)
                elif result.row is not None:
                    done(entry, result.row, result.unchanged)
                else:
                    ready.append((entry, result))
                    progress.where(entry.student, "waiting")
            dispatch()
    except KeyboardInterrupt:
        log("\ninterrupted: stopping the workers (what is graded is kept; run the same command again to go on)")
        stop_workers([cpu, *gpus])
        missing = [by_student[s] for s in by_student if s not in rows]
        all_rows = list(rows.values()) + [blank_row(e, labs, "not graded", "interrupted") for e in missing]
        write_gradebook(out / GRADEBOOK, all_rows, labs)
        return EXIT_INTERRUPTED
    for pool in (cpu, *gpus):
        pool.shutdown()
    return summarize(list(rows.values()), out, options, log)


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


def build_harnesses(options: Options, log) -> str:
    """Builds the harness of every graded pattern once, before any student; returns the error, or ""."""
    for pattern in dict.fromkeys(lab.pattern for lab in labs_of(options)):
        log(f"building the {pattern} harness")
        built = options.hooks.build_harness(Path(options.kit), pattern, timeout=options.build_timeout,
                                            harness_build=options.harness_build)
        if not built.ok:
            return built.message
    return ""


def run_grade(args, hooks: Hooks = Hooks()) -> int:
    """`classroom.py grade`: the whole class on this machine."""
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    out = Path(args.out).resolve()
    static_only = args.static_only or args.gpus == 0  # no GPU asked for: none is used, not even by accident
    options = Options(out=str(out), config=str(Path(args.config).resolve()), lab=args.lab, timeout=args.timeout,
                      build_timeout=args.build_timeout, seed=args.seed, static_only=static_only,
                      keep_builds=args.keep_builds,
                      harness_build=str(Path(args.harness_build).resolve()) if args.harness_build else None,
                      hooks=hooks)
    try:
        labs_of(options)
        entries = list_students(args.submissions, out, args.strip_prefix, log)
    except (ConfigError, ValueError, intake.IntakeError) as e:
        print(f"classroom.py: {e}", file=sys.stderr)
        return EXIT_BROKEN
    gpu_ids, models = ([], []) if static_only else visible_gpus()
    if args.gpus is not None:
        gpu_ids = gpu_ids[:args.gpus]
    mode = "static" if static_only else "gpu" if gpu_ids else "no-gpu"
    options = dataclasses.replace(options, mode=mode, gpu_models=", ".join(models) if gpu_ids else "")
    write_class_file(options, entries, args.submissions)
    jobs = args.jobs or os.cpu_count() or 1
    where = (f"{len(gpu_ids)} GPU{'s' if len(gpu_ids) != 1 else ''} ({options.gpu_models})" if gpu_ids
             else "no GPU: run-time tests not run" if mode == "no-gpu" else "static checks only")
    log(f"grading {len(entries)} students, labs {', '.join(lab.name for lab in labs_of(options))}: "
        f"{jobs} build processes, {where}; results in {out}")
    error = build_harnesses(options, log)
    if error:
        print(f"classroom.py: {error}", file=sys.stderr)
        return EXIT_BROKEN
    return grade_class(entries, options, jobs, gpu_ids, log)


# ---- Slurm: the tasks and the merge ----

def run_task(args, hooks: Hooks = Hooks()) -> int:
    """`classroom.py task`: one Slurm array task grades its batch of students, one after another."""
    try:
        options, entries, batch = read_class_file(args.out)
    except ValueError as e:
        print(f"classroom.py: {e}", file=sys.stderr)
        return EXIT_BROKEN
    mine = entries[args.task * batch:(args.task + 1) * batch]
    if not mine:
        print(f"classroom.py: task {args.task}: no students (the class has {len(entries)}, {batch} a task)",
              file=sys.stderr)
        return EXIT_BROKEN
    ids, models = ([], []) if options.static_only else visible_gpus()
    options = dataclasses.replace(options, hooks=hooks, mode="static" if options.static_only else "gpu",
                                  gpu_models=", ".join(models))
    labs = labs_of(options)
    context = context_key(options, labs)
    progress = Progress(len(mine), sys.stdout)
    for entry in mine:
        try:
            prepared = grade_one(options, entry, context)
            row, unchanged = prepared.row, prepared.unchanged
        except Exception as e:  # the record is not written, so merge reports the student as not graded
            traceback.print_exception(e, file=sys.stderr)
            row, unchanged = error_row(entry, labs, e), False
        progress.finished(entry.student, row, unchanged)
    return EXIT_OK


def run_merge(args) -> int:
    """`classroom.py merge`: the gradebook from the records written so far (the Slurm array's last job)."""
    try:
        options, entries, _ = read_class_file(args.out)
        labs = labs_of(options)
    except (ValueError, ConfigError) as e:
        print(f"classroom.py: {e}", file=sys.stderr)
        return EXIT_BROKEN
    rows = []
    for entry in entries:
        record = read_json(student_folder(options, entry.student) / RECORD)
        if record and isinstance(record.get("row"), dict):
            rows.append({**record["row"], **identity(entry)})
        else:
            rows.append(blank_row(entry, labs, "not graded", "no record: its grading did not finish (see "
                                                             "_slurm/logs/ for a Slurm run)"))
    write_gradebook(Path(options.out) / GRADEBOOK, rows, labs)
    return summarize(rows, Path(options.out), options, lambda m: print(m, file=sys.stderr, flush=True))


def run_harness_build(args, hooks: Hooks = Hooks()) -> int:
    """`classroom.py harness`: builds the harness for the class in OUT (the Slurm run's first job)."""
    try:
        options, _, _ = read_class_file(args.out)
        options = dataclasses.replace(options, hooks=hooks)
        error = build_harnesses(options, lambda m: print(m, flush=True))
    except (ValueError, ConfigError) as e:
        error = str(e)
    if error:
        print(f"classroom.py: {error}", file=sys.stderr)
        return EXIT_BROKEN
    return EXIT_OK


def run_slurm(args) -> int:
    """`classroom.py slurm`: writes the class file and the job scripts, and with --submit submits them."""
    from grader import slurm
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    out = Path(args.out).resolve()
    harness = Path(args.harness_build).resolve() if args.harness_build else out / "_harness"
    options = Options(out=str(out), config=str(Path(args.config).resolve()), lab=args.lab, timeout=args.timeout,
                      build_timeout=args.build_timeout, seed=args.seed, static_only=args.static_only,
                      keep_builds=args.keep_builds, harness_build=str(harness),
                      mode="static" if args.static_only else "gpu")
    try:
        labs_of(options)
        entries = list_students(args.submissions, out, args.strip_prefix, log)
    except (ConfigError, ValueError, intake.IntakeError) as e:
        print(f"classroom.py: {e}", file=sys.stderr)
        return EXIT_BROKEN
    batch = max(args.batch, -(-len(entries) // slurm.MAX_ARRAY))
    write_class_file(options, entries, args.submissions, batch)
    scripts = slurm.write_scripts(out, tasks=-(-len(entries) // batch), settings=slurm.Settings(
        python=args.python, kit=str(KIT), gpu=not args.static_only, sm=args.sm or os.environ.get("SM", ""),
        partition=args.partition, account=args.account, time=args.time, cpus=args.cpus,
        max_running=args.max_running, extra=tuple(args.sbatch or ())))
    log(f"{len(entries)} students in {-(-len(entries) // batch)} array tasks of {batch}; scripts in {scripts}")
    if not args.submit:
        log(f"submit with: bash {scripts / 'submit.sh'}   (the gradebook: {out / GRADEBOOK}, written by the last "
            f"job)")
        return EXIT_OK
    proc = subprocess.run(["bash", str(scripts / "submit.sh")], capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        print(f"classroom.py: submitting failed: {proc.stderr.strip()}", file=sys.stderr)
        return EXIT_BROKEN
    return EXIT_OK


# ---- command line ----

def _common(p, slurm_run: bool = False):
    p.add_argument("submissions", help="a folder with one folder or archive (.zip, .tar, .tar.gz) per student, "
                                       "or an export archive holding such a folder")
    p.add_argument("--out", default="build/class", help="where the gradebook and each student's results go "
                                                      "(default: build/class)")
    p.add_argument("--lab", help="grade only the labs whose name starts with this (03, 03-sequential)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds per harness run, as grade.py's --timeout (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--build-timeout", type=float, default=build_mod.DEFAULT_BUILD_TIMEOUT,
                   help="seconds per build (default %(default)g)")
    p.add_argument("--seed", type=int, help="one data seed for every student (default: a fresh one each)")
    p.add_argument("--static-only", action="store_true",
                   help="build and statically check only; report the run-time tests as not run")
    p.add_argument("--keep-builds", action="store_true", help="keep the built programs (default: removed once a "
                                                              "student is graded; logs and results stay)")
    p.add_argument("--strip-prefix", default="", help="remove this from the start of each upload's name to get "
                                                      "the student id (GitHub Classroom's 'assignment-')")
    p.add_argument("--harness-build", help="where the harness objects are built (default: " +
                   ("OUT/_harness" if slurm_run else "the kit's build/harness/ARCH, shared with make grade") + ")")
    p.add_argument("--config", default=str(DEFAULT_PATH), help="the labs file (default: grader/labs.toml)")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split(
                                         "\n\n", 1)[1])
    sub = parser.add_subparsers(dest="command", required=True)
    grade = sub.add_parser("grade", help="grade the class on this machine")
    _common(grade)
    grade.add_argument("--jobs", type=int, help="build processes (default: one per CPU)")
    grade.add_argument("--gpus", type=int, help="use at most this many GPUs (default: every one nvidia-smi lists; "
                                                "0: none, as --static-only)")

    slurm = sub.add_parser("slurm", help="write (and with --submit, submit) a Slurm job array that grades the class",
                           description="Writes OUT/class.json and OUT/_slurm/: prepare.sbatch (builds the harness), "
                                       "grade.sbatch (an array: each task grades its batch of students into "
                                       "OUT/students/STUDENT/), merge.sbatch (the gradebook, after every task, "
                                       "whatever their fate) and submit.sh, which submits the three chained by "
                                       "dependencies. Give OUT on a file system the compute nodes share.")
    _common(slurm, slurm_run=True)
    slurm.add_argument("--batch", type=int, default=1, help="students per array task (default 1; raised so that "
                                                            "the array stays under 1000 tasks)")
    slurm.add_argument("--partition", help="sbatch --partition")
    slurm.add_argument("--account", help="sbatch --account")
    slurm.add_argument("--time", default="01:00:00", help="sbatch --time per task (default 01:00:00)")
    slurm.add_argument("--cpus", type=int, default=4, help="CPUs per task (default 4)")
    slurm.add_argument("--max-running", type=int, help="at most this many tasks at once (the array's %%N)")
    slurm.add_argument("--sm", help="build for this compute capability (90 for an H100/H200), the same on every "
                                    "node; default: SM from the environment, else each node's own GPU")
    slurm.add_argument("--sbatch", action="append", help="another #SBATCH line's option (repeatable), e.g. "
                                                         "--sbatch=--qos=short")
    slurm.add_argument("--python", default=sys.executable, help="the Python the jobs run (default: this one)")
    slurm.add_argument("--submit", action="store_true", help="submit the jobs now (bash OUT/_slurm/submit.sh)")

    task = sub.add_parser("task", help="(a Slurm array task) grade batch TASK of the class in OUT")
    task.add_argument("--out", required=True)
    task.add_argument("--task", type=int, required=True)
    harness = sub.add_parser("harness", help="(the Slurm run's first job) build the harness for the class in OUT")
    harness.add_argument("--out", required=True)
    merge = sub.add_parser("merge", help="write OUT/gradebook.csv from the students graded so far")
    merge.add_argument("--out", required=True)
    return parser.parse_args(argv)


def main(argv=None, hooks: Hooks = Hooks()) -> int:
    """Runs a command as from the command line and returns its exit status; hooks replace the grading steps."""
    args = parse_args(argv)
    commands = {"grade": lambda: run_grade(args, hooks), "slurm": lambda: run_slurm(args),
                "task": lambda: run_task(args, hooks), "harness": lambda: run_harness_build(args, hooks),
                "merge": lambda: run_merge(args)}
    main_thread = threading.current_thread() is threading.main_thread()
    previous = (signal.getsignal(signal.SIGINT), signal.signal(signal.SIGTERM, _interrupt)) if main_thread else None
    try:
        return commands[args.command]()
    except KeyboardInterrupt:
        stop_workers()
        print("classroom.py: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, previous[0])
            signal.signal(signal.SIGTERM, previous[1])


if __name__ == "__main__":
    from grader import classroom  # the workers must find these functions as grader.classroom's, not __main__'s
    sys.exit(classroom.main())
