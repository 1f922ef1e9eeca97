"""Derive the blank lab files in labs/ from the filled ones in solutions/, never losing a student's work.

Every region

    // @@ BEGIN SOLUTION (about N lines): what belongs here
    ...
    // @@ END SOLUTION

becomes the single line `// @@ TODO (about N lines): what belongs here`, at the same indentation; every other line
is copied as it is, and so are the files that hold no region (Makefiles, READMEs).

    python3 -m tools.author.make_skeletons            `make skeletons`: rederive labs/
    python3 -m tools.author.make_skeletons --force    `make skeletons FORCE=1`: the same, replacing edited files too
    python3 -m tools.author.make_skeletons --out DIR  write the skeletons into DIR, a folder shaped like labs/ (the tests)
    python3 -m tools.author.make_skeletons --check    the drift check of `make test`: writes nothing

Writing labs/, a file is replaced only while it is still a blank skeleton: the skeleton of solutions/ as it is now,
or of solutions/ as committed (HEAD; a maintainer who edited a solution rederives its blank). Any other file holds
edits, a student's work most likely: then nothing at all is written, the files are named, and exit status is 1.
`--force` replaces them too, after copying each to backups/skeletons-YYYYMMDD-HHMMSS/labs/... at the kit's root
(outside build/, which `make clean` removes; git ignores backups/). No file is ever deleted.

The drift check compares the skeletons derived from solutions/ with labs/, and must not fail in a student's copy,
whose labs/ are filled in (committed or not). For each file of solutions/:
  - labs/ holds the skeleton: fine.
  - labs/ holds the skeleton of the committed solution (HEAD), not of the edited one: drift (run `make skeletons`).
  - labs/ holds anything else, edits: the check looks at the kit's own commits instead. The skeleton must be the
    labs/ file as committed at the last commit that changed the solution file, or at some commit since (a student
    never commits to solutions/, so that commit is the kit's); otherwise it is drift. Edits of a file not under git,
    or outside a git checkout, are reported and not judged.
  - `--strict`, or the environment variable CI that CI services set: labs/ must hold the skeleton, edits or not
    (the kit's own repository, checked in a fresh clone).
A file of labs/ with no counterpart in solutions/ (a student's notes) is named, and is drift only with --strict.
Exit status of --check: 0 no drift, 1 drift (the files listed, with a diff), 2 unpaired markers.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.patterns import KIT

BEGIN = re.compile(r"^(?P<indent>\s*)// @@ BEGIN SOLUTION(?P<rest>.*)$")
END = re.compile(r"^\s*// @@ END SOLUTION\s*$")
BACKUPS = "backups"


class MarkerError(ValueError):
    """A solution file whose markers do not pair up."""


def blank_out(text: str, name: str = "<text>") -> str:
    """Return text with every solution region replaced by its TODO line."""
    out, region_start = [], None
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        begin = BEGIN.match(line)
        if begin:
            if region_start is not None:
                raise MarkerError(f"{name}:{number}: BEGIN SOLUTION inside the region opened at line {region_start}")
            region_start = number
            out.append(f"{begin['indent']}// @@ TODO{begin['rest']}\n")
        elif END.match(line):
            if region_start is None:
                raise MarkerError(f"{name}:{number}: END SOLUTION without a BEGIN SOLUTION")
            region_start = None
        elif region_start is None:
            out.append(line)
    if region_start is not None:
        raise MarkerError(f"{name}:{region_start}: BEGIN SOLUTION never closed")
    return "".join(out)


def lab_files(solutions: Path):
    """Yield (path relative to solutions/, its blanked text) for every file of every lab."""
    for path in sorted(solutions.rglob("*")):
        if path.is_file() and "build" not in path.relative_to(solutions).parts:
            rel = path.relative_to(solutions)
            yield rel, blank_out(path.read_text(), str(path))


def derive(dest: Path, solutions: Path = KIT / "solutions") -> Path:
    """Write the skeletons of solutions into dest (a folder shaped like labs/, made if missing) and return dest.
    Each file is written whole and renamed into place, so two derivations into one folder never mix."""
    dest = Path(dest)
    for rel, text in lab_files(Path(solutions)):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    return dest


# ---- what git knows: the kit's committed files ----

def git(kit: Path, *args) -> str | None:
    """git's output in kit, or None (no git, not a checkout, no such file or commit)."""
    try:
        proc = subprocess.run(["git", "-C", str(kit), *args], capture_output=True, text=True)
    except OSError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def committed(kit: Path, commit: str, rel: str) -> str | None:
    """The text of rel (relative to the kit's root, which may lie inside a larger repository) at commit."""
    return git(kit, "show", f"{commit}:./{rel}")


def committed_blank(kit: Path, rel: Path) -> str | None:
    """The skeleton of solutions/rel as committed at HEAD, or None."""
    text = committed(kit, "HEAD", f"solutions/{rel.as_posix()}")
    try:
        return blank_out(text) if text is not None else None
    except MarkerError:
        return None


def kit_committed_skeletons(kit: Path, rel: Path) -> list:
    """labs/rel as committed at the last commit that changed solutions/rel, and at each commit since that changed
    labs/rel: the kit's own skeleton is among them (a student commits to labs/ only)."""
    last = git(kit, "log", "-1", "--format=%H", "HEAD", "--", f"solutions/{rel.as_posix()}")
    if not last or not last.strip():
        return []
    last = last.strip()
    since = (git(kit, "log", "--format=%H", f"{last}..HEAD", "--", f"labs/{rel.as_posix()}") or "").split()
    texts = [committed(kit, c, f"labs/{rel.as_posix()}") for c in [last] + since]
    return [t for t in texts if t is not None]


# ---- make skeletons ----

def edited_files(labs: Path, expected: dict, kit: Path) -> list:
    """The files of labs/ that exist, differ from their skeleton, and are not a blank skeleton of the committed
    solutions either: somebody's work."""
    edited = []
    for rel, text in expected.items():
        target = labs / rel
        if not target.is_file():
            continue
        current = target.read_text(errors="replace")
        if current != text and current != committed_blank(kit, rel):
            edited.append(rel)
    return edited


def backup_folder(root: Path) -> Path:
    """A new folder root/backups/skeletons-YYYYMMDD-HHMMSS[-N]."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1, 1000):
        folder = root / BACKUPS / (f"skeletons-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            continue
    raise RuntimeError(f"no free backup folder under {root / BACKUPS}")


def shown(path: Path, base: Path) -> str:
    try:
        return str(path.resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)


def write_labs(labs: Path, expected: dict, kit: Path, force: bool) -> int:
    edited = edited_files(labs, expected, kit)
    root = labs.parent
    if edited and not force:
        print(f"make_skeletons: {len(edited)} file(s) of labs/ hold edits (your work?): they differ from the blank "
              f"skeleton this would write:", file=sys.stderr)
        for rel in edited:
            print(f"  labs/{rel.as_posix()}", file=sys.stderr)
        print("Nothing was written. To replace them with blank skeletons anyway, keeping a copy of each under "
              f"{BACKUPS}/skeletons-<date>-<time>/: make skeletons FORCE=1", file=sys.stderr)
        return 1
    backup = backup_folder(root) if edited else None
    for rel in edited:
        copy = backup / "labs" / rel
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(labs / rel, copy)
        print(f"kept a copy of labs/{rel.as_posix()} in {shown(copy, root)}")
    for rel, text in expected.items():
        target = labs / rel
        if target.is_file() and target.read_text(errors="replace") == text:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        print(f"wrote labs/{rel.as_posix()}")
    if backup:
        print(f"Your edited files are in {shown(backup, root)}/labs/; to put them all back: "
              f"cp -r {shown(backup, root)}/labs/. labs/")
    return 0


# ---- the drift check ----

def check_labs(labs: Path, expected: dict, kit: Path, strict: bool) -> int:
    drift, notes = [], []
    for rel, text in expected.items():
        target = labs / rel
        current = target.read_text(errors="replace") if target.is_file() else None
        if current == text:
            continue
        name = f"labs/{rel.as_posix()}"
        if current is None or strict or current == committed_blank(kit, rel):
            drift.append((rel, current))
            continue
        kit_versions = kit_committed_skeletons(kit, rel)
        if not kit_versions:
            notes.append(f"{name} holds edits and is not under git here: not judged")
        elif text in kit_versions:
            notes.append(f"{name} holds edits (your work?); the kit's committed skeleton matches solutions/")
        else:
            drift.append((rel, kit_versions[-1]))
    extra = sorted(p.relative_to(labs) for p in labs.rglob("*")
                   if p.is_file() and "build" not in p.relative_to(labs).parts
                   and p.relative_to(labs) not in expected)
    for note in notes:
        print(note)
    for rel, current in drift:
        diff = difflib.unified_diff((current or "").splitlines(True), expected[rel].splitlines(True),
                                    f"labs/{rel.as_posix()}", f"derived from solutions/{rel.as_posix()}")
        sys.stdout.writelines(list(diff)[:40])
    for rel in extra:
        print(f"labs/{rel.as_posix()} has no counterpart in solutions/")
    if drift or (extra and strict):
        print(f"labs/ has drifted from solutions/ in {len(drift) + (len(extra) if strict else 0)} file(s): run "
              "`make skeletons` to rederive them (it replaces only files that are still blank skeletons, and "
              "names any that hold edits)", file=sys.stderr)
        return 1
    print(f"labs/ matches solutions/ ({len(expected)} files{', ' + str(len(notes)) + ' with edits' if notes else ''})")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solutions", type=Path, default=KIT / "solutions")
    parser.add_argument("--labs", type=Path, default=KIT / "labs")
    parser.add_argument("--check", action="store_true", help="report drift instead of writing")
    parser.add_argument("--strict", action="store_true", default=bool(os.environ.get("CI")),
                        help="with --check: labs/ must hold the skeletons even where edited (default when CI is set)")
    parser.add_argument("--force", action="store_true",
                        help=f"replace edited files too, keeping a copy of each under {BACKUPS}/")
    parser.add_argument("--out", type=Path, help="write the skeletons into this folder instead of labs/")
    args = parser.parse_args(argv)
    kit = args.solutions.resolve().parent
    try:
        expected = dict(lab_files(args.solutions))
        if args.out:
            if args.out.resolve() == args.labs.resolve():
                parser.error("--out is labs/ itself: leave --out out, so that edited files are kept")
            derive(args.out, args.solutions)
            print(f"wrote {len(expected)} files into {args.out}")
            return 0
    except MarkerError as err:
        print(f"make_skeletons: {err}", file=sys.stderr)
        return 2
    if args.check:
        return check_labs(args.labs, expected, kit, args.strict)
    return write_labs(args.labs, expected, kit, args.force)


if __name__ == "__main__":
    sys.exit(main())
