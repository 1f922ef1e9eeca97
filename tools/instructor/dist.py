"""`make dist` and `make gradescope`: the student release of the kit and the Gradescope autograder, both made from
the tracked files (`git ls-files`, as they are in the working tree) and neither holding the reference solutions.

    python3 -m tools.instructor.dist release [--out build/dist/parallel-patterns-lab.tar.gz]
    python3 -m tools.instructor.dist gradescope [--out build/gradescope/autograder.zip] [--sm 75] [--lab 03]
    python3 -m tools.instructor.dist list       which tracked file goes where, and why the others stay out

The lab files of labs/ are the skeletons tools/author/make_skeletons.py derives from solutions/, not the working tree's
labs/, which may hold somebody's answers (a maintainer who tried a lab, a course assistant's filled-in clone).

Every tracked file is either in the release (RELEASE) or left out of it for a stated reason (LEAVE_OUT): a file in
neither stops the build, so that shipping a new file is a decision, not an accident. The release's Makefile and
README are rewritten so that they point at nothing the release lacks: the targets that need the solutions or the
course staff's tests stop with a message saying so (UNAVAILABLE), and `make test` runs the suites shipped.

An untracked file where an archive takes its files from (grader/, labs/, ...) also stops the build: a tracked file
may already use it, so leaving it out would ship a kit that does not match the working tree (`git add` it first).
Before an archive is written it is checked: no file in it holds a line of a solution region (25 characters or
more) that the labs and the harness do not already give away, and no recipe of the release's Makefile runs a file
the release lacks. Exit status: 0 written; 2 refused, the message says why.
"""
import argparse
import gzip
import io
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from tools.author import make_skeletons

from grader.patterns import KIT
RELEASE_NAME = "parallel-patterns-lab"
DEFAULT_RELEASE = Path("build/dist") / f"{RELEASE_NAME}.tar.gz"
DEFAULT_ZIP = Path("build/gradescope/autograder.zip")

# What the student release holds: folders (a trailing /) and files.
RELEASE = (
    "README.md", "Makefile", ".gitignore", "docs/", "labs/", "handouts/", "harness/", "patterns/", "mk/", "grader/",
    "datasets/",
    "tests/run.py", "tests/timing.py", "tests/harness/", "sim/", "requirements.txt",
    "tools/__init__.py", "tools/setup.sh", "tools/student/",
    "tools/author/__init__.py", "tools/author/figures.py", "tools/author/ladder_figure.py", "tools/author/svg.py",
    "tools/author/render_handouts.py",
    "tools/author/gen_datasets.c", "tools/author/gen_datasets.h", "tools/author/Makefile",
)
# What it leaves out, and why.
LEAVE_OUT = {
    "solutions/": "the reference solutions",
    "tools/instructor/": "the course staff's tools: packaging (dist.py, gradescope/), calibrate, regrade-bench and "
                         "class-uploads, and the known-wrong and near-threshold submissions made from the solutions "
                         "(variants/)",
    "tools/author/make_skeletons.py": "derives labs/ from solutions/",
    "tools/author/new_lab.py": "starts a new lab from a reference solution (make new-lab, for instructors)",
    "tools/author/sim_compare.py": "runs the reference solutions on the simulator and under Nsight Compute, side by "
                                   "side",
    "tools/author/sim_table.py": "the table of make sim-compare, which runs the reference solutions",
    "tools/author/cuda12_check.sh": "builds and grades the reference solutions and runs the simulator's tests with "
                                    "CUDA 12",
    "tests/grader/": "the grader's tests build and grade the reference solutions",
    "tests/gpu/": "end-to-end tests that grade the reference solutions",
    "tests/tools/": "the tools' tests: they profile, package and grade the reference solutions and check labs/ and "
                    "the handouts against them",
    "tests/attacks/": "hostile submissions and the verdict the grader must give each; several carry code of the "
                      "reference solutions",
    "tests/fresh/": "the kit's commands on fresh Debian roots: they grade the reference solutions and the known-wrong "
                    "submissions (as root, with mmdebstrap)",
    "tests/sim/": "the simulator's own tests (their kernels include the labs' answers); they grade the reference "
                  "solutions and the known-wrong submissions on the simulator",
    ".ci/": "the kit's CI, which runs every suite, the solutions' included",
    "course/": "the course's own datasets, hidden tests and overrides (course/README.md): the Gradescope autograder "
               "carries them, the students never",
}
# The test suites of tests/run.py that the release ships, for its `make test`.
RELEASE_SUITES = ("harness", "build")

# What the Gradescope autograder holds besides its two scripts: what the grader (python3 -m grader, run by
# grader/gradescope.py) needs to build and run a lab, on a GPU or, on a runner without one, on the simulator (sim/).
AUTOGRADER = ("Makefile", "harness/", "patterns/", "mk/", "grader/", "datasets/", "labs/", "sim/",
              "tools/instructor/gradescope/")
# The CUDA toolkit setup.sh installs from NVIDIA's package repository when the image has no nvcc: a version of the
# cuda-nvcc-X-Y packages for Ubuntu 22.04 (Gradescope's base image). make gradescope CUDA=12-8 picks another.
DEFAULT_CUDA = "12-8"
AUTOGRADER_SCRIPTS = ("tools/instructor/gradescope/setup.sh",  # also at the zip's root
                      "tools/instructor/gradescope/run_autograder")

# Top-level make targets the release lacks, and what to say instead.
UNAVAILABLE = {
    "skeletons": "it rederives labs/ from the reference solutions (solutions/), which stay with the course staff",
    "new-lab": "it starts a new lab from a reference solution (solutions/), which stay with the course staff",
    "regrade-bench": "it grades the reference solutions again and again, and they stay with the course staff",
    "test-drift": "it checks labs/ against solutions/, which stay with the course staff",
    "test-grader": "the grader's tests need the reference solutions; make test runs this release's tests",
    "test-gpu": "the end-to-end tests grade the reference solutions; make test runs this release's tests",
    "test-classroom": "the class grading tests use the course staff's tools; make test runs this release's tests",
    "test-student": "the tools' tests profile the reference solutions; make test runs this release's tests",
    "test-instructor": "the course staff's tools are not in the release; make test runs this release's tests",
    "test-author": "they check labs/ and the handouts against solutions/; make test runs this release's tests",
    "test-sim": "the simulator's tests grade the reference solutions; make sim LAB=NN runs your own lab on it",
    "test-attacks": "the hostile submissions carry code of the reference solutions; make test runs this release's "
                    "tests",
    "dist": "the course staff make student releases from the full kit",
    "gradescope": "the course staff make the autograder from the full kit",
    "grade-class": "grading a whole class is the course staff's; grade your own work with make grade",
    "grade-class-slurm": "grading a whole class is the course staff's; grade your own work with make grade",
    "class-uploads": "it makes a synthetic class from the reference solutions, which stay with the course staff",
    "similarity": "comparing a class's files is the course staff's; grade your own work with make grade",
    "rescore": "scoring a class again is the course staff's; grade your own work with make grade",
    "calibrate": "it times the reference solutions, which stay with the course staff",
    "bench-grader": "it times the grader on the reference solutions, which stay with the course staff",
    "sim-compare": "it compares the simulator with Nsight Compute on the reference solutions, which stay with "
                   "the course staff; make sim LAB=NN shows the simulator's counts of your own lab",
}

BEGIN = re.compile(r"^\s*// @@ BEGIN SOLUTION")
END = re.compile(r"^\s*// @@ END SOLUTION")
MIN_LEAK = 25  # characters of a stripped line: shorter ones (`}`, `__syncthreads();`) are not distinctive


class DistError(Exception):
    """The archive cannot be made as asked; the message says why and what to change."""


# ---- the tracked files ----

def git(*args, kit=KIT) -> str:
    try:
        return subprocess.run(["git", *args], cwd=kit, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        raise DistError("git is not installed: make dist builds from the tracked files of a git checkout") from None
    except subprocess.CalledProcessError as e:
        raise DistError(f"git {' '.join(args)}: {e.stderr.strip() or 'failed'} (make dist needs a git checkout "
                        "of the kit)") from None


def tracked_files(kit=KIT) -> dict:
    """{path: executable?} for every tracked file that exists in the working tree."""
    files = {}
    for entry in git("ls-files", "-s", "-z", kit=kit).split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        if (Path(kit) / path).is_file():
            files[path] = meta.split()[0] == "100755"
    return files


def stray_files(rules, kit=KIT) -> None:
    """DistError naming the untracked (and not ignored) files where an archive takes its files from: leaving them
    out would ship a kit that does not match the working tree (a tracked file may already use them)."""
    untracked = git("ls-files", "-z", "--others", "--exclude-standard", kit=kit).split("\0")
    stray = sorted(p for p in untracked if p and matches(p, rules))
    if stray:
        raise DistError("untracked files where the archive takes its files from: " + ", ".join(stray)
                        + ". The archive holds tracked files only: git add them (or remove them) first")


def matches(path: str, rules) -> str | None:
    """The rule (a folder ending in / or a file) of rules that covers path, else None."""
    for rule in rules:
        if path == rule or (rule.endswith("/") and path.startswith(rule)):
            return rule
    return None


def classify(files) -> tuple:
    """(paths in the release, {path: why it is left out}); DistError naming every file in neither list."""
    kept, left = [], {}
    unknown = []
    for path in sorted(files):
        shipped, withheld = matches(path, RELEASE), matches(path, LEAVE_OUT)
        if shipped and (not withheld or len(shipped) > len(withheld)):  # the more specific rule wins
            kept.append(path)
        elif withheld:
            left[path] = LEAVE_OUT[withheld]
        else:
            unknown.append(path)
    if unknown:
        raise DistError("tracked files that are neither in the student release nor left out of it: "
                        + ", ".join(unknown) + ". Add each (or its folder) to RELEASE or LEAVE_OUT in "
                        "tools/instructor/dist.py")
    return kept, left


def skeletons(kit=KIT) -> dict:
    """{labs/...: bytes}: the skeletons derived from solutions/, which the archives ship as labs/."""
    try:
        return {f"labs/{rel.as_posix()}": text.encode()
                for rel, text in make_skeletons.lab_files(Path(kit) / "solutions")}
    except make_skeletons.MarkerError as e:
        raise DistError(f"solutions/: {e}") from None


def commit_label(kit=KIT, paths=()) -> tuple:
    """(short commit id, '-dirty' appended when any of paths has uncommitted changes; commit time, seconds)."""
    head = git("rev-parse", "--short", "HEAD", kit=kit).strip()
    when = int(git("log", "-1", "--format=%ct", kit=kit).strip())
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", *paths, kit=kit).strip() if paths else ""
    return head + ("-dirty" if dirty else ""), when


# ---- the release's Makefile and README ----

RELEASE_PREAMBLE = """\

# --- Student release (made by `make dist`, tools/instructor/dist.py): no reference solutions (solutions/) here. ---
RELEASE := student
ifneq ($(filter solutions solutions/ ./solutions ./solutions/,$(SUBMISSION)),)
  ifeq ($(wildcard $(SUBMISSION)),)
    $(error SUBMISSION=$(SUBMISSION): this is the student release of the kit, which has no reference solutions \
(solutions/ stays with the course staff). Grade your own work with `make grade` (SUBMISSION=labs, the default))
  endif
endif
ifneq ($(LADDER),)
  $(error LADDER=$(LADDER): redrawing the ladder chart needs make bench's timings of the reference solutions, \
which the student release does not have; `make figures` without LADDER redraws the other figures)
endif
"""


def _rule_targets(line: str):
    """The targets of a make rule line (`a b: deps`), or None for any other line (assignments, recipes, comments)."""
    if line.startswith(("\t", "#", " ")) or ":" not in line:
        return None
    head, _, rest = line.partition(":")
    if rest.startswith("=") or re.search(r"[=$(]", head) or head.startswith("."):
        return None
    return head.split()


def _release_help(line: str) -> str:
    """A `make help` line without the options the release lacks, its description kept in the same column."""
    m = re.match(r'(## make .*?)(  +)(\S.*)$', line)
    if not m:
        return line
    usage = m.group(1).replace("labs|solutions|DIR", "labs|DIR").replace(" [LADDER=build/bench/ladder.md]", "")
    return usage.ljust(len(m.group(1)) + len(m.group(2))) + m.group(3)


def release_makefile(text: str) -> str:
    """The kit's Makefile as the student release has it (see the module's docstring)."""
    lines = text.splitlines()
    out, skipping, found = [], False, set()
    for line in lines:
        if skipping and line.startswith("\t"):
            continue
        skipping = False
        targets = _rule_targets(line)
        if targets is not None:
            gone = [t for t in targets if t in UNAVAILABLE]
            found.update(gone)
            if gone:
                kept = [t for t in targets if t not in UNAVAILABLE]
                if not kept:
                    skipping = True
                    continue
                line = " ".join(kept) + ":" + line.partition(":")[2]
        help_line = re.match(r"## make ([\w-]+)", line)  # the Makefile's help lines (make help prints them)
        if help_line and help_line.group(1) in UNAVAILABLE:
            continue
        if help_line:
            line = _release_help(line)
        line = line.replace("wildcard solutions/", "wildcard labs/")
        if line in ("\t$(PYTHON) tests/run.py", "\t$(PYTHON) tests/run.py --all"):  # make test, make test-all
            line += " --only " + ",".join(RELEASE_SUITES)
        out.append(line)
        if line.startswith("include mk/cuda.mk"):
            out.extend(RELEASE_PREAMBLE.splitlines())
    missing = sorted(set(UNAVAILABLE) - found)
    if missing:
        raise DistError(f"the Makefile has no rule for {', '.join(missing)} (named in UNAVAILABLE in "
                        "tools/instructor/dist.py): update tools/instructor/dist.py")
    if not any(line.startswith("include mk/cuda.mk") for line in lines):
        raise DistError("the Makefile no longer includes mk/cuda.mk, after which tools/instructor/dist.py puts the "
                        "release's guards: update tools/instructor/dist.py")
    out += ["", "# --- Not in the student release (tools/instructor/dist.py): they need what stays with the course "
            "staff. ---"]
    for target, why in UNAVAILABLE.items():
        out += [f"{target}:", f"\t$(error make {target} is not in the student release of the kit: {why})"]
    return "\n".join(out) + "\n"


RELEASE_NOTE = """\
## This release

This is the student release of the kit, made by `make dist` from commit {commit}. The reference solutions
(`solutions/`), the known-wrong submissions and the course staff's tests and packaging are not in it; the commands
that need them (`make grade SUBMISSION=solutions`, the whole reference ladder of `make bench` without `LAB=`,
`make skeletons`, `make figures LADDER=...`) say so; `make bench` in a lab's folder times your kernel on the ladder,
against the reference figures in `handouts/figures/ladder.json`. `make test` runs the tests that make sense here: the harness's Check tests and a build of every lab.
`grader/labs.toml` holds the points and speedup thresholds the course grades with, and `make grade` runs the
course's grader on your labs; `docs/DESIGN.md` says how it builds, checks and times your kernels. Build for another
GPU than the one in this machine with `SM=NN` (e.g. `make grade SM=75` for a T4).

"""
# Rows of the README's layout table (by their first cell) as the release has them; None drops the row.
RELEASE_LAYOUT = {
    "`labs/`": "the skeletons you fill in",
    "`solutions/`": None,
    "`course/`": None,
    "`tests/`": "Check tests of the harness; `tests/run.py` runs them and builds every lab (`make test`)",
    "`mk/`, `tools/`": "make fragments; `make check`, `make profile`, the figures, `make handouts` and the dataset "
                       "generator",
}
# Sections of the README (by their heading's words) that the release leaves out, with every subsection.
README_DROPPED = ("Instructors",)
# Words that must not stay in the release's README: they name what it lacks.
README_FORBIDDEN = ("solutions/", "SUBMISSION=solutions", "make skeletons", "tools/instructor/variants", "make dist",
                    "make gradescope", "LADDER=")


def release_readme(text: str, commit: str) -> str:
    """The kit's README as the student release has it: the instructors' section out, the layout table trimmed,
    and a section saying what this release is. DistError if a line still names something the release lacks."""
    out, dropping, placed = [], 0, False
    for line in text.splitlines():
        heading = re.match(r"^(#+)\s+(.*)", line)
        if heading:
            level = len(heading.group(1))
            if dropping and level > dropping:
                continue
            dropping = 0
            if level == 2 and not placed and (heading.group(2).startswith(README_DROPPED)
                                              or heading.group(2) == "Layout"):
                out.extend(RELEASE_NOTE.format(commit=commit).splitlines())
                placed = True
            if level >= 2 and heading.group(2).startswith(README_DROPPED):
                dropping = level
                continue
        elif dropping:
            continue
        row = re.match(r"^\| ([^|]+?) \|", line)
        if row and row.group(1) in RELEASE_LAYOUT:
            what = RELEASE_LAYOUT[row.group(1)]
            if what is None:
                continue
            line = f"| {row.group(1)} | {what} |"
        out.append(line)
    if not placed:
        out += [""] + RELEASE_NOTE.format(commit=commit).splitlines()
    note = set(RELEASE_NOTE.format(commit=commit).splitlines())
    stale = [ln for ln in out if ln not in note and any(word in ln for word in README_FORBIDDEN)]
    if stale:
        raise DistError("the release's README would still name what the release lacks: "
                        + " | ".join(s.strip() for s in stale)
                        + ". Update RELEASE_LAYOUT or README_DROPPED in tools/instructor/dist.py, or the README")
    return "\n".join(out).rstrip("\n") + "\n"


# ---- checks ----

def solution_lines(kit=KIT) -> dict:
    """{stripped line: solution file} for every distinctive line of a solution region: MIN_LEAK characters or more,
    not in the lab's own blank file, and not given away elsewhere by the kit (any skeleton or file of harness/ or
    patterns/: a later lab's skeleton may start from an earlier lab's answer, and the reduction's baseline,
    patterns/reduce/baseline.cu, is lab 01's kernel)."""
    kit = Path(kit)
    given = set()
    for path in [*(kit / "harness").rglob("*"), *(kit / "patterns").rglob("*")]:
        if path.is_file() and "build" not in path.relative_to(kit).parts:
            given.update(ln.strip() for ln in _text(path).splitlines())
    for text in skeletons(kit).values():
        given.update(ln.strip() for ln in text.decode().splitlines())
    lines = {}
    for path in sorted((kit / "solutions").rglob("*")):
        if not path.is_file() or "build" in path.relative_to(kit).parts:
            continue
        inside = False
        for line in _text(path).splitlines():
            if BEGIN.match(line):
                inside = True
            elif END.match(line):
                inside = False
            elif inside and len(line.strip()) >= MIN_LEAK and line.strip() not in given:
                lines.setdefault(line.strip(), str(path.relative_to(kit)))
    return lines


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return ""


def find_leaks(contents: dict, secret: dict) -> list:
    """'path:line: ... (from solutions/...)' for every line of contents ({path: bytes}) holding a secret line."""
    leaks = []
    for path, data in sorted(contents.items()):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for s, origin in secret.items():
                if s in line:
                    leaks.append(f"{path}:{number}: {s} (from {origin})")
    return leaks


RECIPE_PATH = re.compile(r"(?<![\w./$-])((?:tools|tests|grader|harness|mk|labs|datasets)/[\w./-]*\w)")
RECIPE_MODULE = re.compile(r"(?<![\w.])-m ((?:tools|tests|grader)(?:\.\w+)*)")


def module_files(module: str) -> tuple:
    """The files `python3 -m module` may run: module.py, or a package's __main__.py."""
    path = module.replace(".", "/")
    return (f"{path}.py", f"{path}/__main__.py")


def missing_in_recipes(makefile: str, paths) -> list:
    """Kit paths that a recipe of makefile names (tests/grader, -m tools.student.bench) and paths lacks."""
    have = set(paths)
    folders = {p.rsplit("/", k)[0] for p in have for k in range(1, p.count("/") + 1)}
    missing = []
    for line in makefile.splitlines():
        if not line.startswith("\t") or "$(error" in line:
            continue
        for path in RECIPE_PATH.findall(line):
            if path not in have and path not in folders:
                missing.append(f"{path} (in: {line.strip()})")
        for module in RECIPE_MODULE.findall(line):
            if not any(f in have for f in module_files(module)):
                missing.append(f"{module_files(module)[0]} (in: {line.strip()})")
    return missing


# ---- the archives ----

def release_contents(kit=KIT) -> tuple:
    """({path: bytes}, {path: executable?}, commit, commit time) of the student release, checked."""
    kit = Path(kit)
    files = tracked_files(kit)
    kept, _ = classify(files)
    stray_files(RELEASE, kit)
    derived = skeletons(kit)
    commit, when = commit_label(kit, [p for p in kept if p not in derived] + ["solutions"])
    contents = {p: derived[p] if p in derived else (kit / p).read_bytes() for p in kept}
    contents["Makefile"] = release_makefile(contents["Makefile"].decode()).encode()
    contents["README.md"] = release_readme(contents["README.md"].decode(), commit).encode()
    contents.update(classroom_files(contents, kit))
    shipped = [p for p in contents if matches(p, LEAVE_OUT)]
    if shipped:
        raise DistError(f"refusing to ship files that are left out: {', '.join(shipped)}")
    check_leaks(contents, kit)
    missing = missing_in_recipes(contents["Makefile"].decode(), contents)
    if missing:
        raise DistError("the release's Makefile runs files the release lacks: " + "; ".join(missing)
                        + ". Ship them (RELEASE) or add the target to UNAVAILABLE in tools/instructor/dist.py")
    return contents, {p: files.get(p, False) for p in contents}, commit, when


def classroom_files(contents: dict, kit=KIT) -> dict:
    """GitHub Classroom's workflow, .github/workflows/classroom.yml, and its pin, .github/classroom/grader.sha256:
    the checksums of the release's grader files (contents, as shipped), whose own checksum the workflow holds
    (tools/student/classroom/)."""
    from grader.config import load_config
    from tools.student import classroom
    pin = classroom.manifest(contents, load_config(Path(kit) / "grader" / "labs.toml"))
    flow = classroom.workflow(contents[classroom.WORKFLOW_TEMPLATE].decode(), pin)
    return {classroom.MANIFEST: pin, classroom.WORKFLOW: flow.encode()}


def check_leaks(contents: dict, kit=KIT) -> None:
    """DistError if contents holds a distinctive line of a solution region."""
    leaks = find_leaks(contents, solution_lines(kit))
    if leaks:
        raise DistError("refusing to ship code of the reference solutions:\n  " + "\n  ".join(leaks[:20]))


def write_tar(out: Path, top: str, contents: dict, executable: dict, when: int) -> None:
    """A reproducible .tar.gz: sorted entries under top/, owner root, modes 644/755, the commit's time."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=when) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(contents):
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size, info.mtime = len(contents[path]), when
            info.mode = 0o755 if executable.get(path) else 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(contents[path]))
    tmp.replace(out)


def write_zip(out: Path, contents: dict, executable: dict, when: int) -> None:
    """A reproducible .zip with the given paths at its root."""
    import time
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    stamp = time.gmtime(max(when, 315532800))[:6]  # zip dates start in 1980
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(contents):
            info = zipfile.ZipInfo(path, stamp)
            info.external_attr = ((0o755 if executable.get(path) else 0o644) | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, contents[path])
    tmp.replace(out)


def make_release(out: Path, kit=KIT) -> str:
    contents, executable, commit, when = release_contents(kit)
    top = out.name.removesuffix(".gz").removesuffix(".tgz").removesuffix(".tar")
    write_tar(out, top, contents, executable, when)
    _, left = classify(tracked_files(kit))
    return (f"wrote {out}: {len(contents)} files from commit {commit}, unpacking into {top}/; left out "
            f"{len(left)} files ({', '.join(sorted({r for p in left for r in [matches(p, LEAVE_OUT)]}))})")


def course_files(kit=KIT) -> dict:
    """{course/...: bytes}: every regular file of the kit's course/ folder as it is in the working tree, tracked or
    not (git ignores a course's data: course/README.md), links and build folders left out."""
    folder = Path(kit) / "course"
    if not folder.is_dir():
        return {}
    return {p.relative_to(kit).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink() and "build" not in p.relative_to(folder).parts
            and "__pycache__" not in p.parts}


def make_autograder(out: Path, sm: str = "", lab: str = "", kit=KIT, cuda: str = DEFAULT_CUDA,
                    class_out=None) -> str:
    """The Gradescope autograder zip: setup.sh and run_autograder at its root, the kit files grade.py needs (the
    simulator's too), the course's own folder (course/), and autograder.env with the build settings (SM, LAB,
    CUDA: the toolkit setup.sh installs when the image has none). class_out: a class graded on the course's GPU,
    whose results the zip answers its submissions with (grader/classroom/roundtrip.py)."""
    if sm and not re.fullmatch(r"[1-9][0-9]", sm):
        raise DistError(f"SM={sm}: expected a compute capability like 75 (T4), 80 (A100), 86, 89 or 90 (H100)")
    if not re.fullmatch(r"1[2-9]-[0-9]", cuda):
        raise DistError(f"CUDA={cuda}: expected a toolkit version as NVIDIA's Ubuntu packages name it, like 12-8 "
                        f"(cuda-nvcc-12-8) or 13-0")
    if lab and not re.fullmatch(r"[0-9][0-9][a-z0-9-]*", lab):
        raise DistError(f"LAB={lab}: expected a lab number or name, like 03 or 03-sequential")
    release, executable, commit, when = release_contents(kit)
    if lab and not any(p.startswith(f"labs/{lab}") for p in release):
        raise DistError(f"LAB={lab}: no lab of labs/ starts with {lab}")
    contents = {p: data for p, data in release.items() if matches(p, AUTOGRADER)}
    kit = Path(kit)
    stray_files(AUTOGRADER, kit)
    for path, is_executable in tracked_files(kit).items():  # the autograder's own scripts, left out of the release
        if path.startswith("tools/instructor/gradescope/"):
            contents[path], executable[path] = (kit / path).read_bytes(), is_executable
    contents.update(course_files(kit))
    answered = ""
    if class_out:
        from grader.classroom import roundtrip
        try:
            results = roundtrip.bundle(class_out)
        except roundtrip.RoundTripError as e:
            raise DistError(str(e)) from None
        contents.update(results)
        answered = f"; answers {len(results)} graded submissions with the course GPU's results from {class_out}"
    for script in AUTOGRADER_SCRIPTS:
        if script not in contents:
            raise DistError(f"{script} is missing")
        name = Path(script).name
        contents[name], executable[name] = contents[script], True
    contents["autograder.env"] = (f"# Made by `make gradescope` (tools/instructor/dist.py) from commit {commit}.\n"
                                  f"# SM: the GPU architecture to build for (empty: the runner's own GPU).\n"
                                  f"# LAB: the labs to grade, by prefix (empty: every lab).\n"
                                  f"# CUDA: the toolkit setup.sh installs when the image has no nvcc.\n"
                                  f"SM={sm}\nLAB={lab}\nCUDA={cuda}\n").encode()
    check_leaks(contents, kit)
    write_zip(out, contents, executable, when)
    what = f"lab {lab}" if lab else "every lab"
    arch = f"sm_{sm}" if sm else "the runner's GPU (-arch=native)"
    return f"wrote {out}: {len(contents)} files from commit {commit}; grades {what}, builds for {arch}{answered}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rel = sub.add_parser("release", help="the student release (.tar.gz)")
    rel.add_argument("--out", type=Path, default=DEFAULT_RELEASE)
    gs = sub.add_parser("gradescope", help="the Gradescope autograder (.zip)")
    gs.add_argument("--out", type=Path, default=DEFAULT_ZIP)
    gs.add_argument("--sm", default="", help="compute capability of the runner's GPU (75 for a T4); "
                                             "default: whatever GPU the runner has")
    gs.add_argument("--lab", default="", help="grade only the labs whose name starts with this (default: all)")
    gs.add_argument("--cuda", default=DEFAULT_CUDA, help="the CUDA toolkit setup.sh installs when the image has "
                                                         "none, as NVIDIA's packages name it (default %(default)s)")
    gs.add_argument("--class", dest="class_out", help="a class folder graded by make grade-class on the course's "
                                                      "GPU: the zip answers its submissions with those results "
                                                      "(grader/classroom/roundtrip.py)")
    sub.add_parser("list", help="which tracked files the release holds and which it leaves out")
    args = parser.parse_args(argv)
    try:
        if args.command == "release":
            print(make_release(args.out))
        elif args.command == "gradescope":
            print(make_autograder(args.out, args.sm, args.lab, cuda=args.cuda, class_out=args.class_out))
        else:
            kept, left = classify(tracked_files())
            for path in kept:
                print(f"in        {path}")
            for path, why in left.items():
                print(f"left out  {path}  ({why})")
    except DistError as e:
        print(f"dist: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
