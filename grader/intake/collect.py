"""Gathering a submission: each lab's one file found in what a student uploaded (their labs/ folder, their whole copy
of the kit, lab folders or loose files named after their lab, archives of any of these), copied into a folder shaped
like labs/. The Gradescope autograder (grader/gradescope.py), the class grader's intake (grader/classroom/intake.py)
and GitHub Classroom's run (tools/student/classroom) all gather with collect().
"""
import os
import re
import shutil
from pathlib import Path

from grader.intake.unpack import Budget, Limits, UnpackError, archive_suffix, extract

SKIP_DIRS = {"build", "__MACOSX", "__pycache__", "node_modules"}
MAX_DEPTH = 8


def walk(root: Path):
    """(path, parts relative to root) of every file under root, build outputs and hidden folders left out."""
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")
                         and len(rel.parts) < MAX_DEPTH)
        for name in sorted(files):
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                yield path, rel.parts + (name,)


def _number(name: str) -> str | None:
    """The lab number a file or folder name starts with (03-sequential, 03, lab03, Lab_03_reduce), else None."""
    m = re.match(r"^(?:lab[-_ ]?)?(\d\d)(?:$|[-_ .])", name, re.I)
    return m.group(1) if m else None


def place(parts: tuple, labs) -> tuple:
    """(lab, rank) for a .cu file at parts, rank 0 best; or (None, why it was not taken)."""
    name, parent = parts[-1], (parts[-2] if len(parts) > 1 else "")
    by_number = {lab.name[:2]: lab for lab in labs}
    folder_number = _number(parent) if parent else None
    folder_lab = by_number.get(folder_number or "")
    if folder_lab and name == folder_lab.source:
        return folder_lab, 0
    if folder_number and not folder_lab:
        return None, f"lab {folder_number} is not graded by this assignment"
    stem_number = _number(name[:-3])
    if stem_number:
        if stem_number in by_number:
            return by_number[stem_number], 1
        return None, f"lab {stem_number} is not graded by this assignment"
    same_name = [lab for lab in labs if lab.source == name]
    if len(same_name) == 1:
        return same_name[0], 2
    if folder_lab:
        return folder_lab, 3
    if same_name:
        return None, (f"{len(same_name)} labs use {name}: put it in its lab's folder "
                      f"({same_name[0].name}/{name}) or name it after its lab ({same_name[0].name}.cu)")
    return None, "no lab in its name or its folder's name"


def collect(submission: Path, labs, dest: Path, scratch: Path, limits=None) -> list:
    """Copies each lab's file from submission into dest/LAB/SOURCE; returns lines saying what went where.

    Each archive in submission is unpacked into scratch by grader/intake/unpack.py (safe; its .cu files only, so
    archives inside it are not unpacked: one level), all of them within one budget of limits.max_total_bytes (default
    grader.intake.unpack.Limits()): a nested archive bomb stops at that cap with a note, and the rest is still graded.
    A .cu file over limits.max_file_bytes is not taken."""
    limits = limits or Limits()
    budget = Budget(limits.max_total_bytes)
    roots = [(submission, "")]
    notes = []
    for path, parts in list(walk(submission)):
        if archive_suffix(path.name):
            shown = "/".join(parts)
            into = scratch / shown
            try:
                notes += [f"  {n}" for n in extract(path, into, limits, budget, lambda rel: rel.name.endswith(".cu"),
                                                   label=shown)]
            except UnpackError as e:
                notes.append(f"  could not unpack {shown}: {e}")
                shutil.rmtree(into, ignore_errors=True)
                continue
            roots.append((into, shown + ": "))
            if next(walk(into), None) is None:
                notes.append(f"  {shown} holds no .cu file")
    chosen, ignored = {}, []
    for root, label in roots:
        for path, parts in walk(root):
            if not path.name.endswith(".cu"):
                continue
            lab, rank = place(parts, labs)
            shown = label + "/".join(parts)
            if lab is None:
                ignored.append(f"  ignored {shown}: {rank}")
                continue
            if path.stat().st_size > limits.max_file_bytes:
                ignored.append(f"  ignored {shown}: larger than {limits.max_file_bytes >> 20} MiB")
                continue
            key = (rank, len(parts), "labs" not in parts[:-1], shown)
            chosen.setdefault(lab.name, []).append((key, path, shown))
    lines = ["Files graded:"]
    for lab in labs:
        found = sorted(chosen.get(lab.name, []))
        if not found:
            lines.append(f"  {lab.name}: no file found (upload labs/{lab.name}/{lab.source}, or {lab.name}.cu)")
            continue
        (key, path, shown), others = found[0], found[1:]
        target = dest / lab.name / lab.source
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        lines.append(f"  {lab.name}/{lab.source} <- {shown}")
        for _, other, other_shown in others:
            if other.read_bytes() != path.read_bytes():
                lines.append(f"    (also found {other_shown}, not graded: the file above was taken)")
    return lines + notes + ignored


# ---- results ----
