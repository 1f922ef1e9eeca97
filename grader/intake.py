"""Taking in a class's uploads: one folder or archive per student, as Gradescope and GitHub Classroom export them,
turned into folders shaped like labs/ that grader/grade.py's Grader can grade.

find_entries() lists the students of an export folder; gather() unpacks one student's upload safely and picks each
lab's one file out of it, by the rules the Gradescope autograder uses for a single upload
(tools/gradescope/autograde.py, `collect`): lab folders at any depth (labs/03-sequential/reduce.cu, a whole copy
of the kit, one top-level folder inside an archive), loose files named after their lab (03-sequential.cu), nested
archives one level deep.

Unpacking is safe: only regular files are written (no links, devices or folders named by the archive), no member
may leave the folder it is unpacked into (absolute paths, `..`), and sizes are capped (Limits) by the bytes
actually read, not by what an archive's headers claim. An upload that cannot be read at all raises IntakeError,
whose message is the reason the gradebook shows.
"""
import hashlib
import importlib.util
import os
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
AUTOGRADE = KIT / "tools" / "gradescope" / "autograde.py"
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
SKIP_DIRS = {"build", "__MACOSX", "__pycache__", "node_modules"}  # as autograde.walk skips them
GRADESCOPE_METADATA = "submission_metadata.yml"
CHUNK = 1 << 16


class IntakeError(Exception):
    """A student's upload cannot be read at all (a broken archive, over a size limit); the message says why."""


@dataclass(frozen=True)
class Limits:
    """What one student's upload may hold. Bytes are counted as they are read, so a lying header does not help."""

    max_members: int = 20000  # entries listed in one archive
    max_file_bytes: int = 50 << 20  # one file written (a .cu file or a nested archive)
    max_total_bytes: int = 200 << 20  # everything written for one student
    max_scanned_bytes: int = 2 << 30  # the sizes a tar's headers declare, all members together (read through)


@dataclass
class Budget:
    """The bytes one student's upload may still write."""

    left: int


@dataclass(frozen=True)
class Entry:
    """One student's upload in an export: a folder or an archive. name, sid and email come from Gradescope's
    submission_metadata.yml when the export has one."""

    student: str
    path: str
    kind: str  # "folder" or "archive"
    name: str = ""
    sid: str = ""
    email: str = ""


@dataclass
class Intake:
    """What gather() made of an upload: the labs/-shaped folder, the labs it found a file for, and notes for people
    (which file was graded for each lab, what was skipped and why)."""

    submission: Path
    found: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    problems: list = field(default_factory=list)  # the notes worth a line in the gradebook


# ---- the students of an export ----

def archive_suffix(name: str) -> str:
    """The archive suffix name ends with (".tar.gz"), or "" when it is not an archive's name."""
    lower = name.lower()
    return next((s for s in sorted(ARCHIVE_SUFFIXES, key=len, reverse=True) if lower.endswith(s)), "")


def student_id(name: str, strip_prefix: str = "") -> str:
    """A student's id from their upload's name: the archive suffix and strip_prefix (GitHub Classroom's
    "assignment-" before each user name) removed, and every character but letters, digits and ._@+- replaced by _,
    so that it is a safe folder name."""
    suffix = archive_suffix(name)
    stem = name[:len(name) - len(suffix)] if suffix else name
    if strip_prefix and stem.startswith(strip_prefix) and len(stem) > len(strip_prefix):
        stem = stem[len(strip_prefix):]
    stem = re.sub(r"[^A-Za-z0-9._@+-]", "_", stem).lstrip(".") or "student"
    return stem


def read_gradescope_metadata(path) -> dict:
    """{submission folder: {"name", "sid", "email"}} from Gradescope's submission_metadata.yml, read line by line
    (the standard library has no YAML parser; the file's shape is fixed): a top-level key per submission, then
    its `:submitters:` list of `- :name:`, `:sid:` and `:email:`. A group submission's people are joined with "; ".
    Anything else in the file is ignored; an unreadable file gives {}."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    found, current = {}, None
    for line in text.splitlines():
        top = re.match(r"^([^\s#:][^:]*):\s*$", line)
        if top:
            current = found.setdefault(top.group(1).strip().strip("'\""), {"name": [], "sid": [], "email": []})
            continue
        field_ = re.match(r"^\s*-?\s*:(name|sid|email):\s*(.*?)\s*$", line)
        if current is not None and field_:
            value = field_.group(2).strip("'\"")
            if value:
                current[field_.group(1)].append(value)
    return {k: {f: "; ".join(v) for f, v in fields.items()} for k, fields in found.items()}


def find_entries(folder, strip_prefix: str = "") -> tuple:
    """(entries, notes): one Entry per folder or archive at the top of an export folder, sorted by student id.

    A single folder holding everything (an export zip's one top-level folder) is looked into. Hidden files,
    submission_metadata.yml and other loose files are left out, each named in notes. Two uploads that would get
    the same id keep their whole names instead.
    """
    folder = Path(folder)
    items = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    if len(items) == 1 and items[0].is_dir() and not items[0].is_symlink() and _is_export(items[0]):
        folder, items = items[0], sorted(p for p in items[0].iterdir() if not p.name.startswith("."))
    metadata = read_gradescope_metadata(folder / GRADESCOPE_METADATA)
    notes, chosen = [], []
    for path in items:
        if path.is_symlink():
            notes.append(f"left out {path.name}: a symbolic link")
        elif path.is_dir():
            chosen.append((path, "folder"))
        elif path.is_file() and archive_suffix(path.name):
            chosen.append((path, "archive"))
        elif path.name != GRADESCOPE_METADATA:
            notes.append(f"left out {path.name}: neither a folder nor an archive")
    ids = [student_id(p.name, strip_prefix) for p, _ in chosen]
    entries = []
    for (path, kind), sid in zip(chosen, ids):
        if ids.count(sid) > 1:
            sid = re.sub(r"[^A-Za-z0-9._@+-]", "_", path.name)
        meta = metadata.get(path.name) or metadata.get(student_id(path.name)) or {}
        entries.append(Entry(sid, str(path), kind, meta.get("name", ""), meta.get("sid", ""), meta.get("email", "")))
    return sorted(entries, key=lambda e: e.student), notes


def _is_export(folder: Path) -> bool:
    """Whether a lone top-level folder is the export itself (it holds the uploads) rather than one student's."""
    inside = [p for p in folder.iterdir() if not p.name.startswith(".")]
    if (folder / GRADESCOPE_METADATA).is_file():
        return True
    looks_like_lab = re.compile(r"^(labs|solutions|\d\d[-_ .].*|\d\d)$")
    return len(inside) >= 2 and not any(looks_like_lab.match(p.name) or p.suffix == ".cu" for p in inside)


# ---- safe unpacking ----

def safe_relpath(name: str) -> Path | None:
    """An archive member's path if it stays inside the folder it is unpacked into, else None."""
    if "\0" in name or name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return None
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return Path(*parts)


def _wanted(rel: Path, nested: bool) -> bool:
    """Only a lab's file can be graded: .cu files, and archives that may hold them (not inside a nested one)."""
    return rel.name.endswith(".cu") or (not nested and bool(archive_suffix(rel.name)))


def _copy_capped(src, target: Path, limits: Limits, budget: Budget, what: str) -> None:
    """Copies the stream src to target, stopping with IntakeError once the file or the student's budget is
    exceeded (a partial file is removed)."""
    written = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(target, "wb") as out:
            while True:
                chunk = src.read(CHUNK)
                if not chunk:
                    break
                written += len(chunk)
                if written > limits.max_file_bytes:
                    raise IntakeError(f"{what} is larger than {limits.max_file_bytes >> 20} MiB")
                if written > budget.left:
                    raise IntakeError(f"the upload unpacks to more than {limits.max_total_bytes >> 20} MiB")
                out.write(chunk)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    budget.left -= written


def _place(dest: Path, rel: Path) -> Path | None:
    """Where a member goes under dest, or None when a file or folder of that name is already in the way."""
    target = dest / rel
    for parent in list(target.parents)[:len(rel.parts) - 1]:
        if parent.exists() and not parent.is_dir():
            return None
    return None if target.exists() else target


def extract(archive, dest, limits: Limits, budget: Budget, label: str = "", nested: bool = False,
            keep=None) -> list:
    """Unpacks the .cu files and archives of archive (zip or tar, told apart by content) into dest; those of
    keep(relative path) when given; no archives when nested (an archive inside an upload's archive).

    Returns notes on what was left out (unsafe paths, links, oversized files); raises IntakeError when the archive
    cannot be read or passes a limit. label names the archive in messages.
    """
    keep = keep or (lambda rel: _wanted(rel, nested))
    archive, dest = Path(archive), Path(dest)
    label = label or archive.name
    dest.mkdir(parents=True, exist_ok=True)
    skipped = {"unsafe path": [], "link or special file": [], "too large": [], "name clash": []}
    try:
        if zipfile.is_zipfile(archive):
            _extract_zip(archive, dest, limits, budget, label, keep, skipped)
        elif tarfile.is_tarfile(archive):
            _extract_tar(archive, dest, limits, budget, label, keep, skipped)
        else:
            raise IntakeError(f"{label} is not a zip or tar archive (or it is damaged)")
    except IntakeError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, tarfile.TarError, zlib.error, EOFError, OSError,
            NotImplementedError, RuntimeError, ValueError) as e:
        raise IntakeError(f"cannot unpack {label}: {type(e).__name__}: {e}") from None
    notes = []
    for why, names in skipped.items():
        if names:
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            notes.append(f"{label}: left out ({why}): {shown}")
    return notes


def _extract_zip(archive, dest, limits, budget, label, keep, skipped):
    with zipfile.ZipFile(archive) as z:
        infos = z.infolist()
        if len(infos) > limits.max_members:
            raise IntakeError(f"{label} lists {len(infos)} entries, more than {limits.max_members}")
        for info in infos:
            if info.is_dir():
                continue
            rel = safe_relpath(info.filename)
            mode = info.external_attr >> 16
            if rel is None:
                skipped["unsafe path"].append(info.filename)
            elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: made on Windows, or by zipfile.writestr
                skipped["link or special file"].append(info.filename)
            elif keep(rel):
                if info.file_size > limits.max_file_bytes:
                    skipped["too large"].append(info.filename)
                    continue
                target = _place(dest, rel)
                if target is None:
                    skipped["name clash"].append(info.filename)
                    continue
                with z.open(info) as src:
                    _copy_capped(src, target, limits, budget, f"{label}: {info.filename}")


def _extract_tar(archive, dest, limits, budget, label, keep, skipped):
    scanned, count = 0, 0
    with tarfile.open(archive, "r:*") as tar:
        for member in tar:
            count += 1
            scanned += max(member.size, 0)
            if count > limits.max_members:
                raise IntakeError(f"{label} holds more than {limits.max_members} entries")
            if scanned > limits.max_scanned_bytes:
                raise IntakeError(f"{label} declares more than {limits.max_scanned_bytes >> 30} GiB of files")
            if member.isdir():
                continue
            rel = safe_relpath(member.name)
            if rel is None:
                skipped["unsafe path"].append(member.name)
            elif not member.isreg():
                skipped["link or special file"].append(member.name)
            elif keep(rel):
                if member.size > limits.max_file_bytes:
                    skipped["too large"].append(member.name)
                    continue
                target = _place(dest, rel)
                if target is None:
                    skipped["name clash"].append(member.name)
                    continue
                src = tar.extractfile(member)
                if src is not None:
                    with src:
                        _copy_capped(src, target, limits, budget, f"{label}: {member.name}")


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
    (links refused), from an archive the same, unpacked safely; then each archive found is unpacked in its place
    (a folder of the archive's name), one level deep. Returns notes; IntakeError when the upload is unreadable."""
    budget, notes = Budget(limits.max_total_bytes), []
    src = Path(entry.path)
    dest.mkdir(parents=True, exist_ok=True)
    if entry.kind == "archive":
        notes += extract(src, dest, limits, budget, label=src.name)
    else:
        links = []
        for path, rel in _walk(src):
            if not _wanted(rel, False):
                continue
            if path.is_symlink() or not path.is_file():
                links.append(str(rel))
                continue
            with open(path, "rb") as f:
                _copy_capped(f, dest / rel, limits, budget, str(rel))
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

def autograde_module():
    """tools/gradescope/autograde.py as a module: its `collect` decides which file of an upload each lab grades."""
    if not AUTOGRADE.is_file():
        raise RuntimeError(f"{AUTOGRADE.relative_to(KIT)} is missing: grading a class needs the full kit (the "
                           "student release leaves the course staff's tools out)")
    spec = importlib.util.spec_from_file_location("ppl_autograde", AUTOGRADE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_collect = None


def collect(staged: Path, labs, dest: Path, scratch: Path) -> list:
    """autograde.collect: copies each lab's file from staged into dest/LAB/SOURCE and says what went where."""
    global _collect
    if _collect is None:
        _collect = autograde_module().collect
    return _collect(staged, labs, dest, scratch)


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
        lines = collect(staged, labs, submission, folder / "unpacked")
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
