"""Taking in a class's uploads: one folder or archive per student, as Gradescope and GitHub Classroom export them,
turned into folders shaped like labs/ that grader/grade.py's Grader can grade.

find_entries() lists the students of an export folder; gather() unpacks one student's upload safely and picks each
lab's one file out of it, by the rules the Gradescope autograder uses for a single upload
(grader/gradescope.py, `collect`): lab folders at any depth (labs/03-sequential/reduce.cu, a whole copy
of the kit, one top-level folder inside an archive), loose files named after their lab (03-sequential.cu), nested
archives one level deep.

Unpacking is safe (grader/intake/unpack.py, which the Gradescope autograder uses too): only regular files are written
(no links, devices or folders named by the archive), no member may leave the folder it is unpacked into (absolute
paths, `..`), and sizes and entries are capped (Limits) by the bytes actually read, not by what an archive's
headers claim. An upload that cannot be read at all raises IntakeError, whose message is the reason the gradebook
shows.

Student ids are the uploads' names cleaned to a safe folder name (clean_id), made unique (unique_ids): two uploads
never share a folder, and no upload's name can reach the grader's own files (grader/classroom/ keeps students in
OUT/students/).
"""
import hashlib
import os
import re
import shutil
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from grader.intake.collect import collect as collect_files
from grader.intake.metadata import MetadataError, read_export
from grader.intake.unpack import Budget, Limits, UnpackError, archive_suffix, copy_capped
from grader.intake.unpack import extract as unpack_archive

SKIP_DIRS = {"build", "__MACOSX", "__pycache__", "node_modules"}  # as grader.intake.collect.walk skips them
GRADESCOPE_METADATA = "submission_metadata.yml"
MAX_ID = 64  # characters of a student id (a folder name)

IntakeError = UnpackError  # a student's upload cannot be read at all (a broken archive, over a size limit)


@dataclass(frozen=True)
class Entry:
    """One student's upload in an export: a folder or an archive. name, sid and email come from Gradescope's
    submission_metadata.yml when the export has one; note says why the id is not the upload's cleaned name (two
    uploads that clean to the same id)."""

    student: str
    path: str
    kind: str  # "folder" or "archive"
    name: str = ""
    sid: str = ""
    email: str = ""
    note: str = ""
    metadata: str = ""  # the export's submission_metadata.yml that knows this upload ("" none), and its key there
    metadata_key: str = ""
    submitted: str = ""  # when it was submitted (ISO 8601, from that file; "" unknown): late work depends on it
    people: tuple = ()  # each submitter's (name, sid, email): several for a group upload, which gets a row each


@dataclass
class Intake:
    """What gather() made of an upload: the labs/-shaped folder, the labs it found a file for, and notes for people
    (which file was graded for each lab, what was skipped and why)."""

    submission: Path
    found: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    problems: list = field(default_factory=list)  # the notes worth a line in the gradebook


# ---- the students of an export ----

def clean_id(text: str) -> str:
    """A safe folder name from text: accents dropped (José: Jose), every character but ASCII letters, digits and
    ._@+- replaced by _, no leading ., -, + or @ (no hidden folder, nothing a command takes for an option), at most
    MAX_ID characters; "student" when no letter or digit is left."""
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = re.sub(r"[^A-Za-z0-9._@+-]", "_", text).lstrip(".-+@")[:MAX_ID]
    return text if re.search(r"[A-Za-z0-9]", text) else "student"


def student_id(name: str, strip_prefix: str = "") -> str:
    """A student's id from their upload's name: the archive suffix and strip_prefix (GitHub Classroom's
    "assignment-" before each user name) removed, then clean_id. Two uploads may get the same: see unique_ids."""
    suffix = archive_suffix(name)
    stem = name[:len(name) - len(suffix)] if suffix else name
    if strip_prefix and stem.startswith(strip_prefix) and len(stem) > len(strip_prefix):
        stem = stem[len(strip_prefix):]
    return clean_id(stem)


def unique_ids(uploads: list, ids: list) -> list:
    """(id, note) for each upload, given each one's cleaned id: of the uploads whose ids are the same (ignoring case,
    as some file systems do) the first keeps its id and the others get -2, -3, ... after theirs (an id no other
    upload has), each with a note naming them all; never one folder for two students."""
    groups = {}
    for k, sid in enumerate(ids):
        groups.setdefault(sid.casefold(), []).append(k)
    taken = set(groups)
    result = [(sid, "") for sid in ids]
    for members in groups.values():
        if len(members) < 2:
            continue
        n = 1
        for k in members[1:]:
            n += 1
            while f"{ids[k]}-{n}".casefold() in taken:
                n += 1
            taken.add(f"{ids[k]}-{n}".casefold())
            result[k] = (f"{ids[k]}-{n}", "")
        names = ", ".join(uploads[k] for k in members)
        for k in members:
            result[k] = (result[k][0], f"uploads {names} would share the id {ids[members[0]]}: this one "
                                       f"({uploads[k]}) is {result[k][0]}")
    return result


def read_gradescope_metadata(path, notes=None) -> dict:
    """{submission folder: {"name", "sid", "email"}} from Gradescope's submission_metadata.yml, read by
    grader/intake/metadata.py (PyYAML): names with quotes and letters outside ASCII as written, a group submission's
    people joined with "; ". {} when there is no such file; when it cannot be read, {} and a line in notes saying
    why."""
    if not Path(path).is_file():
        return {}
    try:
        found = read_export(path)
    except MetadataError as e:
        if notes is not None:
            notes.append(f"names, sids and emails not read: {e}")
        return {}
    return {key: {"name": sub.name, "sid": sub.sid, "email": sub.email, "key": key,
                  "submitted": sub.created_at.isoformat() if sub.created_at else "",
                  "people": tuple((p.name, p.sid, p.email) for p in sub.people)}
            for key, sub in found.items()}


def find_entries(folder, strip_prefix: str = "") -> tuple:
    """(entries, notes): one Entry per folder or archive at the top of an export folder, sorted by student id.

    A single folder holding everything (an export zip's one top-level folder) is looked into. Hidden files,
    submission_metadata.yml and other loose files are left out, each named in notes. Ids are the uploads' cleaned
    names (student_id), made unique by unique_ids.
    """
    folder = Path(folder)
    items = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    if len(items) == 1 and items[0].is_dir() and not items[0].is_symlink() and _is_export(items[0]):
        folder, items = items[0], sorted(p for p in items[0].iterdir() if not p.name.startswith("."))
    notes, chosen = [], []
    metadata = read_gradescope_metadata(folder / GRADESCOPE_METADATA, notes)
    for path in items:
        if path.is_symlink():
            notes.append(f"left out {path.name}: a symbolic link")
        elif path.is_dir():
            chosen.append((path, "folder"))
        elif path.is_file() and archive_suffix(path.name):
            chosen.append((path, "archive"))
        elif path.name != GRADESCOPE_METADATA:
            notes.append(f"left out {path.name}: neither a folder nor an archive")
    ids = unique_ids([p.name for p, _ in chosen], [student_id(p.name, strip_prefix) for p, _ in chosen])
    entries = []
    for (path, kind), (sid, note) in zip(chosen, ids):
        meta = metadata.get(path.name) or metadata.get(student_id(path.name)) or {}
        entries.append(Entry(sid, str(path), kind, meta.get("name", ""), meta.get("sid", ""), meta.get("email", ""),
                             note, str(folder / GRADESCOPE_METADATA) if meta else "", meta.get("key", ""),
                             meta.get("submitted", ""), meta.get("people", ())))
    return sorted(entries, key=lambda e: e.student), notes


def _is_export(folder: Path) -> bool:
    """Whether a lone top-level folder is the export itself (it holds the uploads) rather than one student's."""
    inside = [p for p in folder.iterdir() if not p.name.startswith(".")]
    if (folder / GRADESCOPE_METADATA).is_file():
        return True
    looks_like_lab = re.compile(r"^(labs|solutions|\d\d[-_ .].*|\d\d)$")
    return len(inside) >= 2 and not any(looks_like_lab.match(p.name) or p.suffix == ".cu" for p in inside)


# ---- unpacking an upload (grader/intake/unpack.py does it safely) ----

def _wanted(rel: Path, nested: bool) -> bool:
    """Only a lab's file can be graded: .cu files, and archives that may hold them (not inside a nested one)."""
    return rel.name.endswith(".cu") or (not nested and bool(archive_suffix(rel.name)))


def extract(archive, dest, limits: Limits, budget: Budget, label: str = "", nested: bool = False,
            keep=None) -> list:
    """Unpacks the .cu files and archives of archive into dest (grader/intake/unpack.py: safe, capped); those of
    keep(relative path) when given; no archives when nested (an archive inside an upload's archive). Returns notes
    on what was left out; IntakeError when the archive cannot be read or passes a limit."""
    return unpack_archive(archive, dest, limits, budget, keep or (lambda rel: _wanted(rel, nested)), label)


def _walk(root: Path):
    """(path, relative path) of the regular files under root, not following links, hidden and build folders out;
    symbolic links to files are returned too (the caller refuses them)."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")
                         and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(files):
            path = Path(folder) / name
            yield path, path.relative_to(root)


def stage(entry: Entry, dest: Path, limits: Limits = Limits()) -> list:
    """Copies what may hold a lab's file out of an upload into dest: from a folder its .cu files and archives
    (links refused; at most limits.max_members files looked at), from an archive the same, unpacked safely; then
    each archive found is unpacked in its place (a folder of the archive's name), one level deep, into the same
    budget. Returns notes; IntakeError when the upload is unreadable."""
    budget, notes = Budget(limits.max_total_bytes), []
    src = Path(entry.path)
    dest.mkdir(parents=True, exist_ok=True)
    if entry.kind == "archive":
        notes += extract(src, dest, limits, budget, label=src.name)
    else:
        links, seen = [], 0
        for path, rel in _walk(src):
            seen += 1
            if seen > limits.max_members:
                raise IntakeError(f"{src.name} holds more than {limits.max_members} files")
            if not _wanted(rel, False):
                continue
            if path.is_symlink() or not path.is_file():
                links.append(str(rel))
                continue
            try:
                f = open(path, "rb")
            except OSError as e:  # the upload's own file: a problem of the upload (not of the grader's disk)
                raise IntakeError(f"cannot read {src.name}/{rel}: {e.strerror}") from None
            with f:
                copy_capped(f, dest / rel, limits, budget, str(rel))
        if links:
            notes.append(f"left out (link or special file): {', '.join(links[:3])}")
    for path, rel in list(_walk(dest)):
        if not archive_suffix(path.name):
            continue
        inner = path.with_name(path.name + ".unpacking")
        try:
            notes += extract(path, inner, limits, budget, label=str(rel), nested=True)
        except IntakeError as e:
            notes.append(f"could not unpack {rel}: {e}")
            shutil.rmtree(inner, ignore_errors=True)
            path.unlink()
            continue
        path.unlink()
        inner.rename(path)
    return notes


# ---- picking each lab's file ----

def collect(staged: Path, labs, dest: Path, scratch: Path, limits: Limits = Limits()) -> list:
    """grader.intake.collect.collect: copies each lab's file from staged into dest/LAB/SOURCE and says what went
    where (the same choice of files as a Gradescope submission)."""
    return collect_files(staged, labs, dest, scratch, limits)


def gather(entry: Entry, labs, folder, limits: Limits = Limits()) -> Intake:
    """Makes folder/submission, shaped like labs/, from one student's upload (IntakeError when it is unreadable).
    The staged copy is removed afterwards; the submission folder holds exactly what is graded."""
    folder = Path(folder)
    submission, staged = folder / "submission", folder / "staged"
    for old in (submission, staged):
        shutil.rmtree(old, ignore_errors=True)
    submission.mkdir(parents=True)
    try:
        notes = stage(entry, staged, limits)
        lines = collect(staged, labs, submission, folder / "unpacked", limits)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
        shutil.rmtree(folder / "unpacked", ignore_errors=True)
    found = [lab.name for lab in labs if (submission / lab.name / lab.source).is_file()]
    problems = list(notes)
    if not found:
        problems.insert(0, "no lab file found in the upload")
    return Intake(submission, found, lines + [f"  {n}" for n in notes], problems)


def files_hash(submission, labs) -> str:
    """A hash of the files graded (each lab's name and its file's bytes, or that it has none)."""
    h = hashlib.sha256()
    for lab in labs:
        path = Path(submission) / lab.name / lab.source
        h.update(f"{lab.name}/{lab.source}\0".encode())
        h.update(path.read_bytes() if path.is_file() else b"\0missing\0")
    return h.hexdigest()
