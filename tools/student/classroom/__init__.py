"""GitHub Classroom's autograding of a student's repository (a clone of the student release): grades the labs on
the kit's simulator with the grader the release pinned, and hands the points to GitHub Classroom's reporter.

    python3 -m tools.student.classroom grade [--repository DIR] [--output FILE] [--out build/classroom]
    python3 -m tools.student.classroom verify [--repository DIR]

The release's workflow, .github/workflows/classroom.yml (made by `make dist` from workflow.yml here), runs `grade`
on every push, then classroom-resources/autograding-grading-reporter, which reads the step output `result`: base64
of the JSON that GitHub's own graders write (autograding-command-grader): {"version": 1, "status": "pass", "fail"
or "error", "max_score": N, "tests": [{"name", "status", "score", "message", "test_code", "filename", "line_no",
"duration"}]}. GitHub Classroom records the sum of the tests' scores over max_score.

The pin. `make dist` writes .github/classroom/grader.sha256 (sha256sum's format): a checksum of every file of the
release that grading reads, the lab files students edit left out (PINNED_OUT), and puts that file's own checksum in
the workflow. The workflow checks both with sha256sum before anything of the repository runs, copies the files
listed out of the checkout, checks the copy, and runs this module from the copy (python3 -I, the repository as
--repository): no file of the repository is imported, so a file added beside the pinned ones (a base64.py that
shadows the standard library, a cached .pyc) changes nothing. `grade` checks the repository again (naming what
changed), then copies only the files listed, and each lab's one file gathered from labs/ as the Gradescope
autograder gathers it, into a clean folder and grades there, so that a grader file edited, or a file added beside
them (a sitecustomize.py, a Makefile include), changes nothing. The limit: the workflow file itself
is in the student's repository, and a student who edits it can report any points; the checks make an edited grader
fail loudly, they cannot stop that. Mark .github/ (and the pinned folders) as protected paths of the assignment,
and take the grade of record from `make grade-class` on the repositories (README.md, "GitHub Classroom").

Exit status of grade: 0 when the result was written (the reporter decides pass or fail from it), 2 bad usage.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parents[3]
MANIFEST = ".github/classroom/grader.sha256"
WORKFLOW = ".github/workflows/classroom.yml"
WORKFLOW_TEMPLATE = "tools/student/classroom/workflow.yml"
PIN_MARK = "@GRADER_SHA256@"  # where make dist writes the manifest's checksum into the workflow
RUNNER = "labs"  # the reporter's runner id: the step's id, and LABS_RESULTS in its environment
# What the pin leaves out, beside each lab's own file: what students may edit or what grading never reads.
PINNED_OUT = (".github/", "handouts/", "docs/", ".gitignore")


class PinError(Exception):
    """The repository's grader is not the release's; the message names what differs."""


# ---- the pin (make dist writes it: tools/instructor/dist.py) ----

def student_files(config) -> set:
    """The lab files students edit: labs/LAB/SOURCE of every lab of config (grader.config.Config)."""
    return {f"labs/{lab.name}/{lab.source}" for lab in config.labs}


def pinned(paths, config) -> list:
    """The paths of a release that grading reads and students do not edit, sorted: every path but the lab files,
    Markdown and PINNED_OUT."""
    mine = student_files(config)
    return sorted(p for p in paths if p not in mine and not p.endswith(".md") and not p.startswith(PINNED_OUT))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest(contents: dict, config) -> bytes:
    """The pin of a release's contents ({path: bytes}): a line "SHA256  PATH" per pinned path (sha256sum's
    format, so that `sha256sum --check` reads it)."""
    return "".join(f"{sha256(contents[p])}  {p}\n" for p in pinned(contents, config)).encode()


def workflow(template: str, pin: bytes) -> str:
    """The release's workflow: the template with the manifest's checksum in place of PIN_MARK."""
    if template.count(PIN_MARK) != 1:
        raise ValueError(f"{WORKFLOW_TEMPLATE} must hold {PIN_MARK} once, where the grader's checksum goes")
    return template.replace(PIN_MARK, sha256(pin))


def pinned_digest(repo: Path) -> str:
    """The manifest's checksum the repository's workflow holds; PinError when it holds none."""
    try:
        text = (repo / WORKFLOW).read_text(encoding="utf-8")
    except OSError as e:
        raise PinError(f"{WORKFLOW} is missing ({e.strerror}): this repository is not a copy of the release") from None
    for line in text.splitlines():
        key, _, value = line.strip().partition(":")
        if key == "PPL_GRADER_SHA256":
            return value.strip().strip("\"'")
    raise PinError(f"{WORKFLOW} holds no PPL_GRADER_SHA256: it is not the release's")


def verify(repo: Path) -> list:
    """The paths of the release's manifest, once every pinned file of repo is checked against it and the manifest
    against the workflow's checksum; PinError naming the files that differ or are missing."""
    try:
        pin = (repo / MANIFEST).read_bytes()
    except OSError as e:
        raise PinError(f"{MANIFEST} is missing ({e.strerror}): restore it from the release") from None
    if sha256(pin) != pinned_digest(repo):
        raise PinError(f"{MANIFEST} is not the release's (its checksum is not the one {WORKFLOW} holds): restore "
                       f"it from the release")
    paths, changed = [], []
    for line in pin.decode("utf-8", "replace").splitlines():
        digest, _, path = line.partition("  ")
        paths.append(path)
        file = repo / path
        if file.is_symlink() or not file.is_file():
            changed.append(f"{path} (missing)")
        elif sha256(file.read_bytes()) != digest:
            changed.append(path)
    if changed:
        more = f" and {len(changed) - 10} more" if len(changed) > 10 else ""
        raise PinError(f"the grader's files differ from the release's: {', '.join(changed[:10])}{more}. Edit only "
                       f"your labs' files (git checkout the others: git diff names them); this grading gives 0")
    return paths


# ---- grading ----

def clean_copy(repo: Path, paths: list, dest: Path) -> Path:
    """dest, emptied, holding the pinned files of repo (paths) and nothing else."""
    shutil.rmtree(dest, ignore_errors=True)
    for path in paths:
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo / path, target)
        shutil.copymode(repo / path, target)
    return dest


def gather(repo: Path, kit: Path) -> list:
    """Each lab's one file of repo/labs, gathered into kit/labs as the Gradescope autograder gathers a submission
    (grader/gradescope.py's collect: regular .cu files only, links skipped); the lines saying what went where."""
    from grader.config import load_config
    from grader.intake.collect import collect
    labs = load_config(kit / "grader" / "labs.toml").labs
    scratch = kit / "build" / "classroom-unpacked"
    try:
        return collect(repo / "labs", labs, kit / "labs", scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_grader(kit: Path, results: Path) -> int:
    """Sets up kit (tools/setup.sh grade) and grades its labs/ on the simulator into results; the exit status."""
    setup = subprocess.run(["bash", str(kit / "tools" / "setup.sh"), "grade"], cwd=kit)
    if setup.returncode != 0:
        return setup.returncode
    venv = kit / "build" / "venv" / "bin" / "python3"
    python = str(venv) if venv.exists() else sys.executable
    # PPL_DIE_WITH: the grader stops, and kills what it runs, when this script ends (the workflow cancelled), SIGKILL
    # included (grader/run/lifetime.py); a SIGTERM to the script's process group reaches it as it is
    return subprocess.run([python, "-m", "grader", "--simulator", "--submission", "labs", "--results",
                           str(results)], cwd=kit, env={**os.environ, "PPL_DIE_WITH": str(os.getpid())}).returncode


def on_the_simulator(test: dict) -> bool:
    """Whether a test of a simulator's results.json counts here: every test but performance and the groups of sizes
    the simulator leaves to a GPU (NEEDS_GPU), so that the maximum is the same for every student. A test whose kernel
    the simulator could not run ("not graded", pending on Gradescope) counts, for 0 points: a lab made unsimulatable
    on purpose must not take its points out of the maximum (a red-team helper's 40 / 40 for one lab of five)."""
    from grader.sim.simulator import NEEDS_GPU
    extra = test.get("extra_data") if isinstance(test.get("extra_data"), dict) else {}
    return not (extra.get("test") == "performance" or extra.get("status") == NEEDS_GPU)


def reporter_result(results: dict, status: int = 0) -> dict:
    """GitHub Classroom's result of a simulator's results.json: a test per test graded on the simulator (performance
    and the sizes left to the course's GPU are not points here), max_score their maximum, bonus labs' left out as
    the grader's total does. status: the grader's exit status (2: the kit failed, an "error")."""
    tests, most = [], 0.0
    for t in results.get("tests") or []:
        extra = t.get("extra_data") if isinstance(t.get("extra_data"), dict) else {}
        if not on_the_simulator(t):
            continue
        most += 0 if extra.get("bonus") else float(extra.get("points") if extra.get("pending") else
                                                   t.get("max_score") or 0)
        lab = str(extra.get("lab") or "")
        full = t.get("status") == "passed" and not extra.get("pending")
        tests.append({"name": str(t.get("name", "")), "status": "pass" if full else "fail",
                      "score": float(t.get("score") or 0), "message": str(t.get("output", "")),
                      "test_code": f"make grade SIM=1 LAB={lab[:2]}" if lab else "make grade SIM=1",
                      "filename": "", "line_no": 0, "duration": 0})
    verdict = "error" if status == 2 else "pass" if all(t["status"] == "pass" for t in tests) else "fail"
    return {"version": 1, "status": verdict, "max_score": round(most, 2), "tests": tests}


def error_result(why: str) -> dict:
    """A result of 0 points that says why (the grader's files changed, or it could not run)."""
    return {"version": 1, "status": "error", "max_score": 0,
            "tests": [{"name": "grader", "status": "error", "score": 0, "message": why, "test_code": "",
                       "filename": "", "line_no": 0, "duration": 0}]}


def encoded(result: dict) -> str:
    """result as the reporter reads it: base64 of its JSON."""
    return base64.b64encode(json.dumps(result).encode()).decode()


def grade(repo: Path, out: Path, run=run_grader) -> dict:
    """The result of grading repo: checked against its pin, copied clean into out/kit with its labs' files, graded
    there by run(kit, results path) -> exit status."""
    try:
        paths = verify(repo)
    except PinError as e:
        return error_result(str(e))
    kit = clean_copy(repo, paths, out / "kit")
    print("\n".join(gather(repo, kit)), flush=True)
    results = out / "results.json"
    results.unlink(missing_ok=True)
    status = run(kit, results)
    try:
        data = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return error_result(f"the grader stopped without results (exit status {status}): see this step's log")
    return reporter_result(data, status)


def main(argv=None) -> int:
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    graded = sub.add_parser("grade", help="grade this repository's labs and write the reporter's result")
    graded.add_argument("--repository", type=Path, default=KIT,
                        help="the student's repository (default: the kit this module is in)")
    graded.add_argument("--output", type=Path, default=os.environ.get("GITHUB_OUTPUT"),
                        help="append result=BASE64 to this file (default: $GITHUB_OUTPUT, else print it)")
    graded.add_argument("--out", type=Path, default=KIT / "build" / "classroom",
                        help="where the clean copy is graded (default: build/classroom)")
    checked = sub.add_parser("verify", help="only check the grader's files against the release's pin")
    checked.add_argument("--repository", type=Path, default=KIT, help="the repository (default: this kit)")
    args = parser.parse_args(argv)
    if args.command == "verify":
        try:
            print(f"classroom: {len(verify(args.repository.resolve()))} files are the release's")
            return 0
        except PinError as e:
            print(f"classroom: {e}", file=sys.stderr)
            return 1
    result = grade(args.repository.resolve(), args.out.resolve())
    got = sum(t["score"] for t in result["tests"])
    print(f"classroom: {result['status']}: {got:g} / {result['max_score']:g} points"
          + (f": {result['tests'][0]['message']}" if result["status"] == "error" and result["tests"] else ""))
    line = f"result={encoded(result)}\n"
    if args.output:
        with open(args.output, "a", encoding="utf-8") as f:
            f.write(line)
    else:
        print(line, end="")
    return 0
