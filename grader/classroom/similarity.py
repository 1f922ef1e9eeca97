"""Which students of a class share code, lab by lab: `make similarity SUBMISSIONS=DIR [LAB=03]`, and a step of
`make grade-class` (on the files it graded, OUT/students/STUDENT/submission/).

    python3 -m grader.classroom.similarity SUBMISSIONS [--out build/class] [--lab 03] [--threshold 0.5]
    python3 -m grader.classroom.similarity --graded OUT [--lab 03]     the files a grade-class run graded

How: copydetect (PyPI; the winnowing fingerprints of Schleimer, Wilkerson and Aiken's MOSS paper, SIGMOD 2003)
compares the students' files of each lab after its tokenizer has replaced every name with one letter (renamed
variables change nothing) and dropped comments and spaces; reordered statements still share their fingerprints.
What the kit gave every student is boilerplate and never counts as shared: the lab's skeleton (labs/LAB/FILE) and,
where the kit has it, the reference solution (solutions/LAB/FILE). The blanks of a lab are a few lines, and the
right answer to them is much the same in everyone's hands: code shared beyond the reference solution is what
points at copying (a bug two students share, the same unusual restructuring).

Files that are identical (line endings and trailing spaces aside) form one group, compared once and listed once
with all their students, never as every pair of them; a group identical to the reference solution, or to the
untouched skeleton, says so. Pairs of groups whose shared code is more than THRESHOLD of either file's own code
(what is left after the boilerplate) go into OUT/similarity.html, side by side with the shared code highlighted,
and into OUT/similarity.csv. A file with too little code of its own to fingerprint (noise_t characters of
tokenized code) cannot be compared: the page counts such files per lab.

A file larger than labs.toml's [limits] lab_file_kib (256 KiB; the grader refuses such a file unread) is left out,
read no further than the cap, and the page names it with its size: copydetect's fingerprints and highlighted pages
grow far faster than the file (a 22.7 MB upload took 8.7 GB and 335 s), and no honest lab file is that large.

The files are student text: the page escapes every character of it and allows no scripts (report_html.CSP).
Exit status: 0 the report was written; 2 bad usage, or copydetect is not installed (the message says how).
"""
import argparse
import csv
import io
import logging
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.classroom import intake
from grader.classroom.records import list_students
from grader.config import ConfigError, DEFAULT_PATH, Limits, load_config
from grader.report.report_html import CSP, STYLE, esc

KIT = Path(__file__).resolve().parents[2]
THRESHOLD = 0.5  # a pair is reported where another file holds more than this share of a file's own code
NOISE = 25  # copydetect's noise threshold: the shortest match, in characters of tokenized code, that counts
PAGE, TABLE = "similarity.html", "similarity.csv"
EXIT_OK, EXIT_BROKEN = 0, 2


class SimilarityError(Exception):
    """The comparison cannot run (copydetect missing, no files); the message says what to do."""


@dataclass
class Group:
    """Students whose files of a lab are identical; path is one of them (all hold the same text)."""

    students: list
    path: Path
    text: str
    reference: bool = False  # identical to the reference solution
    skeleton: bool = False  # identical to the lab's skeleton: nothing filled in

    @property
    def label(self) -> str:
        return ", ".join(self.students)


@dataclass
class Pair:
    """Two groups of a lab that share code: a's and b's share of their own code held by the other, the length of
    what they share (characters of tokenized code), and each file's text as HTML with the shared code marked."""

    a: Group
    b: Group
    share_a: float
    share_b: float
    shared: int
    html_a: str = ""
    html_b: str = ""


@dataclass
class LabResult:
    """What the comparison found in one lab."""

    lab: str
    source: str
    groups: list = field(default_factory=list)
    pairs: list = field(default_factory=list)
    too_small: list = field(default_factory=list)  # students whose file has no code of its own to fingerprint
    too_large: list = field(default_factory=list)  # (student, bytes) of files over the cap, left out (read_capped)
    boilerplate: list = field(default_factory=list)  # what counted as given: "skeleton", "reference solution"


def normalized(text: str) -> str:
    """The text two files must share to count as identical: line endings and trailing spaces aside."""
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip("\n")


def read_capped(path: Path, cap: int) -> str | None:
    """The file's text (UTF-8, a byte that is not replaced), or None when it is larger than cap bytes: never more
    than cap + 1 bytes are read."""
    with open(path, "rb") as f:
        data = f.read(cap + 1)
    return None if len(data) > cap else data.decode("utf-8", errors="replace")


def lab_files(folders: dict, lab) -> dict:
    """{student: its file of lab} among folders ({student: a labs/-shaped folder}); students without one are left
    out."""
    found = {}
    for student, folder in sorted(folders.items()):
        path = Path(folder) / lab.name / lab.source
        if path.is_file() and not path.is_symlink():
            found[student] = path
    return found


def kit_file(kit: Path, part: str, lab) -> Path | None:
    path = Path(kit) / part / lab.name / lab.source
    return path if path.is_file() else None


def identical_groups(files: dict, skeleton: str | None, reference: str | None, cap: int | None = None,
                     too_large: list | None = None) -> list:
    """The students' files (files: {student: path}) grouped by their normalized text, largest group first. A file
    over cap bytes is left out, its (student, size) appended to too_large."""
    by_text = {}
    for student, path in files.items():
        text = read_capped(path, cap) if cap is not None else path.read_bytes().decode("utf-8", errors="replace")
        if text is None:
            if too_large is not None:
                too_large.append((student, path.stat().st_size))
            continue
        by_text.setdefault(normalized(text), []).append((student, path, text))
    groups = []
    for key, members in by_text.items():
        students = sorted(s for s, _, _ in members)
        _, path, text = min(members)
        groups.append(Group(students, path, text, reference=reference is not None and key == normalized(reference),
                            skeleton=skeleton is not None and key == normalized(skeleton)))
    return sorted(groups, key=lambda g: (-len(g.students), g.students))


def _detector_class():
    try:
        from copydetect import CopyDetector
    except ImportError:
        raise SimilarityError("copydetect is not installed: python3 -m pip install -r requirements.txt (or make "
                              "setup-grade)") from None
    return CopyDetector


def compare(groups: list, boilerplate: list, source: str, threshold: float = THRESHOLD, noise: int = NOISE,
            scratch: Path | None = None) -> tuple:
    """(pairs above threshold, groups too small to compare) among groups (one file each: the skeleton's groups are
    left out), boilerplate being the texts every student was given. The files are compared as UTF-8 copies in
    scratch, named SOURCE so that copydetect picks the lexer by their extension."""
    detector_class = _detector_class()
    own = tempfile.TemporaryDirectory() if scratch is None else None
    scratch = Path(own.name if own else scratch)
    try:
        paths = {}
        for k, text in enumerate(boilerplate):
            path = scratch / "boilerplate" / str(k) / source
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            paths[str(path)] = None
        compared = [g for g in groups if not g.skeleton]
        for k, group in enumerate(compared):
            path = scratch / "groups" / str(k) / source
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(group.text, encoding="utf-8", errors="replace")
            paths[str(path)] = group
        detector = detector_class(noise_t=noise, guarantee_t=noise, display_t=threshold, silent=True,
                                  autoopen=False, truncate=True, out_file=str(scratch / "unused.html"))
        for path, group in paths.items():
            detector.add_file(path, "boilerplate" if group is None else "testref")
        if len(compared) < 2:
            return [], [g for g in compared if _coverage(detector, paths, g) == 0]
        quiet = logging.getLogger()
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # copydetect warns through the root logger about every empty slice
        try:
            detector.run()
            found = detector.get_copied_code_list()
        finally:
            quiet.setLevel(level)
        pairs = []
        for share_a, share_b, path_a, path_b, html_a, html_b, shared in found:
            a, b = paths[path_a], paths[path_b]
            if a.students > b.students:
                a, b, share_a, share_b, html_a, html_b = b, a, share_b, share_a, html_b, html_a
            pairs.append(Pair(a, b, float(share_a), float(share_b), int(shared), html_a, html_b))
        small = [g for g in compared if _coverage(detector, paths, g) == 0]
        return sorted(pairs, key=lambda p: (-max(p.share_a, p.share_b), -p.shared, p.a.students)), small
    finally:
        if own:
            own.cleanup()


def _coverage(detector, paths: dict, group: Group) -> float:
    """How much of a group's file is its own code (0: too little to fingerprint, or not compared)."""
    path = next(p for p, g in paths.items() if g is group)
    data = detector.file_data.get(path)
    if data is None:
        from copydetect import CodeFingerprint
        data = CodeFingerprint(path, detector.conf.noise_t, detector.conf.window_size)
    return float(data.token_coverage)


def analyse(folders: dict, labs, kit=KIT, threshold: float = THRESHOLD, noise: int = NOISE,
            use_solution: bool = True, cap: int = Limits().lab_file_bytes) -> list:
    """A LabResult per lab of labs: the identical groups and the pairs that share code, for folders ({student: a
    labs/-shaped folder of their files}); files over cap bytes are left out (LabResult.too_large)."""
    results = []
    for lab in labs:
        files = lab_files(folders, lab)
        skeleton_path = kit_file(kit, "labs", lab)
        reference_path = kit_file(kit, "solutions", lab) if use_solution else None
        skeleton = skeleton_path.read_text(encoding="utf-8") if skeleton_path else None
        reference = reference_path.read_text(encoding="utf-8") if reference_path else None
        too_large = []
        result = LabResult(lab.name, lab.source, identical_groups(files, skeleton, reference, cap, too_large),
                           too_large=too_large)
        result.boilerplate = [name for name, text in (("the skeleton", skeleton), ("the reference solution",
                                                                                    reference)) if text]
        given = [text for text in (skeleton, reference) if text]
        result.pairs, small = compare(result.groups, given, lab.source, threshold, noise)
        result.too_small = sorted(s for g in small for s in g.students if not g.reference)
        results.append(result)
    return results


# ---- the report ----

PAGE_STYLE = STYLE + """
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 0.8em; margin: 0.4em 0 1.4em; }
.pair pre { max-height: 32em; overflow: auto; font-size: 0.82em; margin: 0; }
.highlight-red { background: #f6c7c3; } .highlight-green { background: #cdeccd; }
.who { font-weight: bold; } .share { font-variant-numeric: tabular-nums; }
"""


def _percent(x: float) -> str:
    return f"{100 * x:.0f}%"


def group_line(group: Group) -> str:
    what = " (identical to the reference solution)" if group.reference else (
        " (the skeleton, nothing filled in)" if group.skeleton else "")
    count = f"{len(group.students)} students" if len(group.students) > 1 else "1 student"
    return f"{count}{what}: {group.label}"


def lab_section(result: LabResult, threshold: float) -> str:
    parts = [f"<h2>{esc(result.lab)} <small>({esc(result.source)})</small></h2>"]
    files = sum(len(g.students) for g in result.groups)
    given = " and ".join(result.boilerplate) or "nothing (no skeleton or solution in the kit)"
    parts.append(f"<p class=\"meta\">{files} files; boilerplate: {esc(given)}. {len(result.pairs)} pair"
                 f"{'s' if len(result.pairs) != 1 else ''} share more than {_percent(threshold)} of one file's own "
                 f"code.</p>")
    same = [g for g in result.groups if len(g.students) > 1]
    if same:
        items = "".join(f"<li>{esc(group_line(g))}</li>" for g in same)
        parts.append(f"<h3>Identical files</h3><ul>{items}</ul>")
    if result.too_large:
        big = ", ".join(f"{student} ({size / (1 << 20):.1f} MiB)" if size >= 1 << 20 else
                        f"{student} ({size >> 10} KiB)" for student, size in result.too_large)
        parts.append(f"<p class=\"meta\">Left out, larger than a lab file may be (grader/labs.toml [limits] "
                     f"lab_file_kib; the grader refuses them unread): {esc(big)}.</p>")
    if result.too_small:
        parts.append(f"<p class=\"meta\">Too little code of their own to compare (beyond the boilerplate): "
                     f"{esc(', '.join(result.too_small))}.</p>")
    for k, pair in enumerate(result.pairs, 1):
        parts.append(f"<h3>Pair {k}: <span class=\"share\">{_percent(pair.share_a)} / {_percent(pair.share_b)}"
                     f"</span>, {pair.shared} characters of tokenized code shared</h3>")
        parts.append("<div class=\"pair\">")
        for group, text, share in ((pair.a, pair.html_a, pair.share_a), (pair.b, pair.html_b, pair.share_b)):
            parts.append(f"<div><p class=\"who\">{esc(group_line(group))}</p><p class=\"meta\">{_percent(share)} "
                         f"of this file's own code is in the other</p><pre>{text}</pre></div>")
        parts.append("</div>")
    return "\n".join(parts)


def page(results: list, threshold: float, title: str = "Similarity") -> str:
    """The report as an HTML page. The files' text in it is copydetect's highlight_overlap output with
    escape_html=True (markupsafe); everything else is escaped here."""
    body = "\n".join(lab_section(r, threshold) for r in results)
    pairs = sum(len(r.pairs) for r in results)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}</title>
<style>{PAGE_STYLE}</style>
</head>
<body>
<h1>{esc(title)}</h1>
<p class="meta">{pairs} pair{'s' if pairs != 1 else ''} in {len(results)} lab{'s' if len(results) != 1 else ''}.
Red and green mark the code the two files share, after names are made alike and comments and spaces dropped
(copydetect). A pair is a lead to read, not a verdict: small blanks have few right answers.</p>
{body}
</body>
</html>
"""


def table(results: list) -> str:
    """similarity.csv: one row per pair (the two groups' students, their shares, the characters shared)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["lab", "students_a", "students_b", "share_a", "share_b", "shared_chars"])
    for r in results:
        for p in r.pairs:
            writer.writerow([r.lab, " ".join(p.a.students), " ".join(p.b.students), f"{p.share_a:.3f}",
                             f"{p.share_b:.3f}", p.shared])
    return buf.getvalue()


def write_report(results: list, out, threshold: float = THRESHOLD) -> Path:
    """Writes OUT/similarity.html and OUT/similarity.csv (atomically); returns the page's path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in ((PAGE, page(results, threshold)), (TABLE, table(results))):
        tmp = out / (name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out / name)
    return out / PAGE


def graded_folders(out) -> dict:
    """{student: OUT/students/STUDENT/submission} of a grade-class run."""
    root = Path(out) / "students"
    return {p.parent.name: p for p in sorted(root.glob("*/submission")) if p.is_dir()} if root.is_dir() else {}


def summary(results: list) -> str:
    """One line for a log: pairs per lab, and the files left out for their size."""
    return "; ".join(f"{r.lab}: {len(r.pairs)} pair{'s' if len(r.pairs) != 1 else ''}"
                     + (f" ({len(r.too_large)} file{'s' if len(r.too_large) != 1 else ''} over the size cap left "
                        f"out: {', '.join(s for s, _ in r.too_large)})" if r.too_large else "") for r in results)


def run(folders: dict, labs, out, threshold: float = THRESHOLD, noise: int = NOISE, kit=KIT,
        cap: int = Limits().lab_file_bytes) -> tuple:
    """Compares, writes the report into out; returns (the page's path, the LabResults). cap: labs.toml's
    lab_file_kib, in bytes."""
    results = analyse(folders, labs, kit, threshold, noise, cap=cap)
    return write_report(results, out, threshold), results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m grader.classroom.similarity",
                                     description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("submissions", nargs="?",
                        help="a folder with one upload per student (as grade-class takes)")
    parser.add_argument("--graded", help="compare the files a grade-class run in this folder graded instead")
    parser.add_argument("--out", default="build/class", help="where similarity.html and .csv go (default: "
                                                           "build/class; with --graded, that folder)")
    parser.add_argument("--lab", help="only these labs (03, or 03,05)")
    parser.add_argument("--threshold", type=float, default=THRESHOLD,
                        help=f"report a pair where one file holds more than this share of the other's own code "
                             f"(default {THRESHOLD})")
    parser.add_argument("--noise", type=int, default=NOISE, help=f"copydetect's noise threshold (default {NOISE})")
    parser.add_argument("--strip-prefix", default="", help="as grade-class's --strip-prefix")
    parser.add_argument("--config", default=str(DEFAULT_PATH), help="the labs file (default: grader/labs.toml)")
    args = parser.parse_args(argv)
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    if bool(args.submissions) == bool(args.graded):
        parser.error("give SUBMISSIONS (a folder of uploads) or --graded OUT (a grade-class run), one of them")
    if not 0 < args.threshold <= 1:
        parser.error("--threshold must be above 0 and at most 1")
    scratch = None
    try:
        config = load_config(args.config)
        labs = config.select(args.lab)
        if args.graded:
            out, folders = Path(args.graded), graded_folders(args.graded)
            if not folders:
                raise SimilarityError(f"{args.graded}: no graded students (OUT/students/*/submission): run make "
                                      f"grade-class first, or give SUBMISSIONS")
        else:
            out = Path(args.out)
            scratch = Path(tempfile.mkdtemp(prefix="similarity-"))
            folders = {}
            for entry in list_students(args.submissions, scratch, args.strip_prefix, log):
                try:
                    folders[entry.student] = intake.gather(entry, labs, scratch / entry.student).submission
                except intake.IntakeError as e:
                    log(f"similarity: {entry.student}: left out, the upload cannot be read: {e}")
        path, results = run(folders, labs, out, args.threshold, args.noise, cap=config.limits.lab_file_bytes)
    except (ConfigError, ValueError, intake.IntakeError, SimilarityError) as e:
        print(f"similarity: {e}", file=sys.stderr)
        return EXIT_BROKEN
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    log(f"similarity: {summary(results)}; report: {path} (pairs: {path.with_name(TABLE)})")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
