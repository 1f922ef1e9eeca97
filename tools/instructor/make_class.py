"""A synthetic class to grade: N student uploads made from the reference solutions, the known-wrong submissions
(tools/instructor/variants/mutations.toml) and the blank labs, in the shapes Gradescope and GitHub Classroom
export, for testing and timing `make grade-class` and `make similarity`.

    python3 -m tools.instructor.make_class [--out build/class-uploads] [--students 20] [--labs 03]

Each student's file for a lab is one of: the solution; the blank lab (labs/); a known-wrong submission of that lab
(drop-one, infinite-loop, reads-expected for lab 03, ...); `syntax-error` (the solution with an #error line: no
build); `missing` (no file for that lab). Student 0 hands in every solution, student 1 every blank lab, every third
student from student 2 a wrong file per lab (each in turn), the others the solutions. Uploads come as folders (a
labs/ tree, a copy of the kit's top level, loose files named after their lab, a zip inside a folder), zip files
(lab folders at the top, or one top-level folder) and tar files (.tar, .tar.gz). From 8 students on, the last two
cannot be graded as they are: a truncated zip (unreadable) and an archive holding only a README (no files); from 6
on, one zip also holds a member that tries to escape (../), which must be left out. From 13 students on, two copy
another's known-wrong files in disguise (tools/instructor/variants/disguise.py: variables renamed, independent
declarations swapped; each copier disguised differently): student10 copies student03, student11 copies student06,
lab by lab where the original's file is a known-wrong one (elsewhere they hand in the solution). The grader scores
a copy as its original; make similarity should pair each with its original, and list the students who hand in
the solution as one group of identical files.

Writes the uploads into OUT (emptied first) and OUT-key.csv beside it: per student the upload, its shape, what each
lab's file is, what the grader should make of it and whom it copies (copy_of). Expect the infinite-loop file to
cost the grader's --timeout (give `TIMEOUT=30` to make grade-class to keep a class quick).
"""
import argparse
import csv
import io
import re
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

from grader.config import lab_of
from grader.patterns import KIT, lab_dirs
from tools.author.make_skeletons import blank_out
from tools.instructor.variants.disguise import disguise
from tools.instructor.variants.wrong import mutated_text, mutations

SHAPES = ("folder", "zip-flat", "tar.gz-top", "loose", "zip-top", "tar", "kit-copy", "nested-zip")
EXPECT = {"solution": "full marks (performance by this GPU's thresholds)", "blank": "0: wrong answers",
          "syntax-error": "0: NO BUILD", "missing": "0: no file"}
COPIES = {9: 2, 10: 5}  # copier's index: original's index (student10 copies student03), from 13 students on
MIN_COPYING_CLASS = 13  # below, student11 would be the upload with no lab files


def lab_files(labs_filter: str) -> dict:
    """{lab name: its one file's name} of the labs labs_filter picks (03,06 or 3: grader.patterns.select_labs)."""
    found = {lab.name: lab_of(lab).source for lab in lab_dirs(KIT / "solutions", labs_filter)}
    if not found:
        raise SystemExit(f"make_class: LAB={labs_filter} picks no lab of solutions/")
    return found


def wrong_variants(lab: str) -> list:
    """The wrong files a lab can be handed in as: its known-wrong submissions, then the generic ones."""
    return sorted(name for name, m in mutations().items() if m["lab"] == lab) + ["syntax-error", "blank", "missing"]


def expected(variant: str) -> str:
    """What the grader should say of a variant, in short (a known-wrong one's from its "Expected verdict")."""
    if variant in EXPECT:
        return EXPECT[variant]
    says = " ".join(mutations()[variant]["says"].split())
    found = re.search(r"Expected verdict[^:]*: (.*)", says)
    verdict = found.group(1) if found else says
    return verdict if len(verdict) <= 100 else verdict[:97] + "..."


def file_text(lab: str, source: str, variant: str) -> str | None:
    """The text a student hands in for lab, or None for no file."""
    if variant == "missing":
        return None
    if variant == "blank":  # the skeleton derived from the solution: labs/ may hold someone's answers
        return blank_out((KIT / "solutions" / lab / source).read_text())
    if variant in ("solution", "syntax-error"):
        text = (KIT / "solutions" / lab / source).read_text()
        if variant == "syntax-error":
            text += '\n#error "WRONG ON PURPOSE (tools/instructor/make_class.py): this file does not compile"\n'
        return text
    return mutated_text(variant)


def plan(students: int, labs: dict) -> list:
    """(student id, shape, {lab: variant}, special) for each student; special: "" or the kind of broken upload."""
    rows = []
    names = list(labs)
    for i in range(students):
        special = ""
        if students >= 8 and i == students - 1:
            special = "truncated-zip"
        elif students >= 8 and i == students - 2:
            special = "no-lab-files"
        elif students >= 6 and i == 4:
            special = "escaping-member"
        variants = {}
        for k, lab in enumerate(names):
            if i == 0:
                variants[lab] = "solution"
            elif i == 1:
                variants[lab] = "blank"
            elif i % 3 == 2:
                wrong = wrong_variants(lab)
                variants[lab] = wrong[(i // 3 + k) % len(wrong)]
            else:
                variants[lab] = "solution"
        shape = {"truncated-zip": "zip-flat", "no-lab-files": "tar.gz-top", "escaping-member": "zip-flat"}.get(
            special, SHAPES[i % len(SHAPES)])
        rows.append((f"student{i + 1:02d}", shape, variants, special))
    return rows


def copy_plan(rows: list) -> dict:
    """{copier: (original, {lab: the original's known-wrong variant}, which disguise)} for a class of rows
    (plan()); the copiers' rows are changed to say what they hand in: those variants, "solution" elsewhere."""
    if len(rows) < MIN_COPYING_CLASS:
        return {}
    copies = {}
    for which, (copier, original) in enumerate(sorted(COPIES.items())):
        student, shape, variants, special = rows[copier]
        source = rows[original][2]
        copied = {lab: v for lab, v in source.items() if v in mutations()}
        variants.update({lab: copied.get(lab, "solution") for lab in variants})
        copies[student] = (rows[original][0], copied, which)
    return copies


def copied_texts(labs: dict, copied: dict, which: int) -> dict:
    """{lab: the disguised text} of a copier's copied labs."""
    return {lab: disguise(file_text(lab, labs[lab], variant), which)[0] for lab, variant in copied.items()}


def files_of(student: str, shape: str, labs: dict, variants: dict, texts=None) -> dict:
    """{path inside the upload: text} for a student's lab files in the given shape; texts ({lab: text}) replaces
    what their variants say for those labs."""
    files = {}
    for lab, source in labs.items():
        text = (texts or {}).get(lab) or file_text(lab, source, variants[lab])
        if text is None:
            continue
        if shape == "loose":
            files[f"{lab}.cu"] = text
        elif shape in ("folder", "tar"):
            files[f"labs/{lab}/{source}"] = text
        elif shape == "kit-copy":
            files[f"labs/{lab}/{source}"] = text
            files["README.md"] = "# my copy of the kit\n"
            files[f"labs/{lab}/build/old.cu"] = "// a build leftover: not graded\n"
        elif shape in ("zip-top", "tar.gz-top"):
            files[f"{student}-repo/labs/{lab}/{source}"] = text
        else:  # zip-flat, nested-zip
            files[f"{lab}/{source}"] = text
    return files


def zip_bytes(files: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in sorted(files.items()):
            z.writestr(name, text)
    return buf.getvalue()


def write_tar(path: Path, files: dict, mode: str) -> None:
    with tarfile.open(path, mode) as tar:
        for name, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))


def write_upload(out: Path, student: str, shape: str, files: dict, special: str) -> str:
    """Writes one upload into out; returns its file or folder name."""
    if special == "truncated-zip":
        data = zip_bytes(files or {"x.cu": "x"})
        (out / f"{student}.zip").write_bytes(data[:len(data) // 2])
        return f"{student}.zip"
    if special == "no-lab-files":
        files = {f"{student}-repo/README.md": "I forgot to add my files\n"}
    if special == "escaping-member":
        files = dict(files, **{"../../escaped.cu": "// must never be written outside the upload\n"})
    if shape in ("folder", "loose", "kit-copy", "nested-zip"):
        folder = out / student
        if shape == "nested-zip":
            folder.mkdir(parents=True)
            (folder / "submission.zip").write_bytes(zip_bytes(files))
        for name, text in files.items():
            if shape != "nested-zip":
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_text(text)
        return student
    if shape.startswith("zip"):
        (out / f"{student}.zip").write_bytes(zip_bytes(files))
        return f"{student}.zip"
    name = f"{student}.tar.gz" if shape == "tar.gz-top" else f"{student}.tar"
    write_tar(out / name, files, "w:gz" if shape == "tar.gz-top" else "w")
    return name


def make_class(out: Path, students: int, labs_filter: str = "") -> Path:
    """Writes the class into out and its key beside it; returns the key's path."""
    labs = lab_files(labs_filter)
    out = Path(out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    rows = plan(students, labs)
    copies = copy_plan(rows)
    key = out.with_name(out.name + "-key.csv")
    with open(key, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "upload", "shape", *labs, "expected", "copy_of"])
        for student, shape, variants, special in rows:
            original, copied, which = copies.get(student, ("", {}, 0))
            texts = copied_texts(labs, copied, which)
            upload = write_upload(out, student, shape, files_of(student, shape, labs, variants, texts), special)
            if special == "truncated-zip":
                what = "status unreadable (a truncated zip), 0 points"
            elif special == "no-lab-files":
                what = "status no files, 0 points"
            elif all(v == "missing" for v in variants.values()):
                what = "status no files, 0 points"
            else:
                what = "; ".join(f"{lab}: {expected(v)}" for lab, v in variants.items())
                if special == "escaping-member":
                    what += "; ../../escaped.cu left out (unsafe path)"
            if copied:
                what += f"; copies {original} ({', '.join(copied)}) in disguise: make similarity pairs them"
            writer.writerow([student, upload, shape, *(("-" if special in ("truncated-zip", "no-lab-files")
                                                         else variants[lab]) for lab in labs), what,
                             original if copied else ""])
    return key


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=KIT / "build" / "class-uploads",
                        help="the folder of uploads to write (emptied first; default build/class-uploads)")
    parser.add_argument("--students", type=int, default=20, help="how many students (default 20)")
    parser.add_argument("--labs", "--lab", default="", help="comma-separated lab prefixes (03 or 01,03); default "
                                                            "every lab")
    args = parser.parse_args(argv)
    if args.students < 1:
        parser.error("--students must be at least 1")
    key = make_class(args.out, args.students, args.labs)
    print(f"wrote {args.students} uploads to {args.out} and what to expect of each to {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
