"""The Gradescope side of the kit: gathers the student's files from the submission into a folder shaped like labs/,
runs the grader (python3 -m grader) on it and always leaves a valid results.json, whatever happens.

    python3 -m grader.gradescope [--root /autograder] [--lab 03]   grade one submission (run_autograder calls this)
    python3 -m grader.gradescope --prebuild [--lab 03]             compile the harness once (setup.sh; needs SM)
    python3 -m grader.gradescope --collect SUBMISSION DEST [--lab 03]   only gather the files into DEST

(run from the kit's root, /autograder/source on Gradescope)

What students upload, any of (archives, .zip or .tar plain or compressed, are unpacked first: safely, by
grader/intake/unpack.py, the class grader's own routine, with its caps on bytes and entries, one level deep):
  - their labs/ folder, or their whole copy of the kit: labs/03-sequential/reduce.cu, ...
  - lab folders at the top: 03-sequential/reduce.cu
  - loose files named after their lab: 03-sequential.cu, 03.cu, lab03.cu, 03-sequential-reduce.cu
  - a loose file named as in its lab (compact.cu), when only one graded lab uses that name: with LAB=03, reduce.cu
Only each lab's one file is taken; the kit's harness, Makefiles and datasets are the autograder's own.

SM and LAB come from the environment (run_autograder reads them from autograder.env, which make gradescope
writes); --lab overrides LAB. AUTOGRADE_TIMEOUT (seconds) bounds the whole grading run. Exit status 0 when
results.json was written; run_autograder writes a last-resort one otherwise.

No silent fallback: a runner where a sandbox layer is missing (bubblewrap does not run: the compile's sandbox and
the runner's namespaces) grades nothing; every submission's result says so, as the staff's problem, with the layer
and how to install it. AUTOGRADE_ALLOW_WEAKER_SANDBOX=1 in the runner's environment (autograder.env) or
--allow-weaker-sandbox grades with the layers the runner has (results.json and the printed table say which);
otherwise grade.py runs with --require-sandbox, so that a run or build without a layer is the kit's error, never a
grade.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent  # the kit: /autograder/source on Gradescope
EXIT_NO_DEVICE, EXIT_BROKEN = 77, 2
STAFF = "This is not your fault: please tell the course staff."
SIMULATOR_VARIABLE = "AUTOGRADE_SIMULATOR"  # 1: grade on the simulator, 0: never; unset: when there is no GPU
WEAKER_VARIABLE = "AUTOGRADE_ALLOW_WEAKER_SANDBOX"  # 1: grade even where a sandbox layer is missing
SIM_NOTE = "Graded on the kit's CPU simulator"  # grade.py's note for a student at a terminal (make grade SIM=1)


# ---- what is graded ----

def load_kit_config():
    """The kit's grader/labs.toml (grader.config.Config); raises on a broken one."""
    from grader.config import load_config
    return load_config(SOURCE / "grader" / "labs.toml")


def graded_labs(lab_filter: str = ""):
    """The labs of grader/labs.toml to grade (grader.config.Lab objects); raises on a broken labs.toml."""
    return load_kit_config().select(lab_filter or None)


def test_titles(labs) -> list:
    """(title, max_score) of every test grade.py reports for labs, in its order and with its names."""
    tests = []
    for lab in labs:
        prefix = f"{lab.name}{' (bonus)' if lab.bonus else ''}: "
        tests += [(prefix + g.name, g.points) for g in lab.groups]
        if lab.performance:
            tests.append((prefix + "performance", lab.performance.points))
    return tests


def fallback_results(why: str, labs=None, notes=()) -> dict:
    """A results.json that scores 0 and says why: one test per test grade.py would have run when the labs are known,
    else one test named autograder."""
    tests = [{"name": title, "score": 0, "max_score": points, "status": "failed", "output": f"not run: {why}",
              "visibility": "visible"} for title, points in (test_titles(labs) if labs else [])]
    if not tests:
        tests = [{"name": "autograder", "score": 0, "max_score": 0, "status": "failed", "output": why,
                  "visibility": "visible"}]
    return {"score": 0, "output": "\n".join([why, *notes]), "visibility": "visible", "stdout_visibility": "visible",
            "tests": tests}


def valid_results(data) -> bool:
    """Whether data has the shape Gradescope needs: a score, and tests with a name, score and max_score each."""
    number = (int, float)
    if not isinstance(data, dict) or not isinstance(data.get("score"), number) or isinstance(data["score"], bool):
        return False
    tests = data.get("tests")
    return isinstance(tests, list) and all(
        isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("score"), number)
        and isinstance(t.get("max_score"), number) for t in tests)


def write_json(path: Path, data: dict) -> None:
    """data written to path atomically, every string of it without control characters (grader/report/text.py)."""
    from grader.report.text import printable_json
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(printable_json(data), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def nvcc_missing() -> bool:
    nvcc = os.environ.get("NVCC", "nvcc")
    return shutil.which(nvcc) is None and shutil.which(nvcc, path="/usr/local/cuda/bin") is None


def run_grader(argv, timeout) -> tuple:
    """(exit status or None on timeout, output) of grade.py, run by grader.run.run.run_process: in its own session,
    killed with its process group at the timeout, its output kept at both ends (64 KiB each), never waited on
    longer than that."""
    from grader.run.run import run_process
    proc = run_process(argv, timeout=timeout, cwd=SOURCE)
    return proc.returncode, proc.output


def on_simulator() -> bool:
    """Whether to grade on the kit's simulator: AUTOGRADE_SIMULATOR=1 or 0 says so; else when nvidia-smi lists no
    GPU here (Gradescope's default runners)."""
    asked = os.environ.get(SIMULATOR_VARIABLE, "").strip()
    if asked in ("0", "1"):
        return asked == "1"
    from grader.run.no_gpu import nvidia_smi
    return not nvidia_smi()[0]


def _extra(test: dict) -> dict:
    return test.get("extra_data") if isinstance(test.get("extra_data"), dict) else {}


def simulator_banner(data: dict) -> list:
    """What the top of a simulator-graded result says: what was graded now, and what waits for the course's GPU,
    counting only the tests a student sees now (grader/report/report.py's shown_now: the others would tell on
    themselves)."""
    from grader.report.report import shown_now
    tests = [t for t in data.get("tests") or [] if shown_now(t) and _extra(t).get("test") != "late penalty"]
    extra = [_extra(t) for t in tests]
    now = sum(float(t.get("score") or 0) for t, x in zip(tests, extra) if not x.get("bonus"))
    bonus = sum(float(t.get("score") or 0) for t, x in zip(tests, extra) if x.get("bonus"))
    of = sum(float(t.get("max_score") or 0) for t, x in zip(tests, extra) if not x.get("bonus"))
    waiting = sum(float(x.get("points") or 0) for x in extra if x.get("pending") and not x.get("bonus"))
    groups = any(x.get("pending") and x.get("test") != "performance" for x in extra)
    what = "Performance and the tests the simulator cannot run" if groups else "Performance"
    later = len(data.get("tests") or []) - len(tests) - sum(_extra(t).get("test") == "late penalty"
                                                             for t in data.get("tests") or [])
    shown = f" of the tests shown now" if later else ""
    lines = [f"No GPU on this autograder, so your labs ran on the kit's simulator: correctness and the hazard checks "
             f"are graded now ({now:g} of {of:g} points{shown}{f', and {bonus:g} bonus points' if bonus else ''})."]
    if waiting:
        lines[0] += (f" {what} ({waiting:g} points{shown}) are pending: they are graded on the course's GPU and "
                     f"added to your score later.")
    if later:
        lines.append(f"{later} more test{'s are' if later != 1 else ' is'} shown later (after the due date, or when "
                     f"the grades are published), with the total.")
    return [*lines, ""]


def late_work(data: dict, config, labs, root: Path) -> dict:
    """data with labs.toml's late-work rule applied (grader/score/late.py) from root/submission_metadata.json; a note
    instead when the rule is set but the metadata cannot be read (nothing is taken off then)."""
    if config.late is None:
        return data
    try:
        from grader.score import late
        from grader.intake import metadata
    except ImportError as e:  # PyYAML missing: setup.sh installs python3-yaml
        data["output"] = f"Late work: not applied ({e}; setup.sh installs it). {STAFF}\n\n{data.get('output', '')}"
        return data
    path = root / metadata.RUNNER_FILE
    try:
        submission = metadata.read_runner(path)
    except metadata.MetadataError as e:
        data["output"] = f"Late work: not applied, the submission's time is unknown ({e}).\n\n{data.get('output', '')}"
        return data
    return late.apply(data, [late.lateness(config.late, lab.name, submission) for lab in labs])


def finish(data: dict, config, labs, root: Path, head=()) -> dict:
    """The results as Gradescope gets them: each test's visibility, late work, the whole result's output (the late
    work's lines, head: lines for its top, then the grader's) told only from the tests shown now, the output format
    of labs.toml."""
    from grader.config import gradescope_settings
    from grader.report.report import set_output_format, set_visibility
    chosen = gradescope_settings(config)
    data = set_visibility(data, labs, chosen["visibility"])
    data = late_work(data, config, labs, root)
    data = withhold(data)
    output = str(data.get("output", "")).split("\n")
    late = next((k for k, line in enumerate(output) if not line.startswith("Late work: ")), len(output))
    banner = simulator_banner(data) if (data.get("extra_data") or {}).get("simulator") else []
    data["output"] = "\n".join([*output[:late], *([""] if late else []), *banner, *head,
                                *([""] if head else []), *output[late:]]).strip("\n")
    return set_output_format(data, chosen["output_format"])


def withhold(data: dict) -> dict:
    """data with its whole output and leaderboard saying nothing of the tests a student does not see yet: the total
    line counts the tests shown now, and the lines about a lab with a test not shown now (its hang, its warnings)
    and its leaderboard entry are left out until the grades are. Returns data, changed in place."""
    from grader.report.report import latest, shown_now, total_line
    from grader.score.score import hang_note
    tests = data.get("tests") or []
    if all(shown_now(t) for t in tests):
        return data
    withheld = {_extra(t).get("lab") for t in tests if not shown_now(t)}
    unsplit = {lab for lab in withheld if not any(  # late work applied before visibility (a class's results.json)
        _extra(t).get("lab") == lab and _extra(t).get("test") == "late penalty" and not shown_now(t) for t in tests)}
    for lab in unsplit:  # its one penalty row costs rows not shown yet: it waits for the latest of them
        rows = [t for t in tests if _extra(t).get("lab") == lab]
        for t in rows:
            if _extra(t).get("test") == "late penalty":
                t["visibility"] = latest(*(r.get("visibility") or "visible" for r in rows))
    hung = list(dict.fromkeys(_extra(t).get("lab") for t in tests if shown_now(t) and _extra(t).get("status") ==
                              "TIMEOUT"))
    kept = []
    for line in str(data.get("output", "")).split("\n"):
        if line.startswith("Total "):
            line = (total_line(data, [t for t in tests if shown_now(t)]) + " for the tests shown now; the others, "
                    "and the total, are shown after the due date or when the grades are published")
        elif line.startswith("Hung: "):
            line = hang_note(hung) if hung else None
        elif any(line.startswith((f"{lab}: ", f"Late work: {lab}: ")) for lab in withheld) and (
                not line.startswith("Late work: ") or "(of the tests shown now)" not in line):
            line = None
        if line is not None:
            kept.append(line)
    data["output"] = "\n".join(kept)
    if data.get("leaderboard"):
        data["leaderboard"] = [e for e in data["leaderboard"] if str(e.get("name", "")).split(":")[0] not in withheld]
    return data


def student_paths(data: dict, submission: Path) -> dict:
    """data with the autograder's copy of the submission (work/submission) named as in the student's own copy of
    the kit: labs/LAB/FILE, and reproduction lines without SUBMISSION=, so that they run from the kit's root there.
    Returns data, changed in place."""
    import shlex
    folder = str(submission.resolve())
    def mapped(text):
        text = text.replace(f" SUBMISSION={shlex.quote(folder)}", "").replace(f"SUBMISSION={shlex.quote(folder)} ", "")
        return text.replace(folder + "/", "labs/")
    data["output"] = mapped(str(data.get("output", "")))
    for test in data.get("tests") or []:
        test["output"] = mapped(str(test.get("output", "")))
    return data


def grade_once(argv, results: Path, limit) -> tuple:
    """(exit status or None on timeout, output, results.json's data or None) of one grader run."""
    results.unlink(missing_ok=True)
    status, output = run_grader(argv, limit)
    from grader.report.text import printable
    output = printable(output)
    print(output, flush=True)
    try:
        data = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    return status, output, data if valid_results(data) else None


def grade(root: Path, lab_filter: str, allow_weaker: bool = False) -> dict:
    """Grades root/submission and returns the results to write. allow_weaker: grade where a sandbox layer is
    missing (the module's docstring)."""
    from grader.report.report import pending, retotal
    try:
        config = load_kit_config()
        labs = config.select(lab_filter or None)
    except Exception as e:  # a broken labs.toml or a Python without tomllib: the kit's problem, not the student's
        return fallback_results(f"The autograder cannot read its labs ({type(e).__name__}: {e}). {STAFF}")
    work = root / "work"
    shutil.rmtree(work, ignore_errors=True)
    submission = work / "submission"
    submission.mkdir(parents=True)
    from grader.intake.collect import collect
    notes = collect(root / "submission", labs, submission, work / "unpacked")
    print("\n".join(notes), flush=True)
    from grader.classroom.roundtrip import recorded  # the course GPU's results, where make gradescope CLASS= put them
    answered = recorded(SOURCE, root, submission, labs, config)
    if answered is not None:
        return withhold(answered)  # its rows wait as a simulator grading's would (its late rows too)
    if nvcc_missing():
        return fallback_results("The autograder has no CUDA toolkit (nvcc), so nothing was compiled. " + STAFF
                                + " (Course staff: setup.sh installs it from NVIDIA's package repository; see its "
                                  "output when the image was built.)", labs, notes)
    from grader.compile.build_sandbox import weaker_sandbox
    weaker = weaker_sandbox()
    if weaker and not allow_weaker:
        return fallback_results("The autograder would run your code with a sandbox layer missing, so it graded "
                                "nothing. " + STAFF + f" (Course staff: {weaker}; or set {WEAKER_VARIABLE}=1 in "
                                "autograder.env to grade with the layers this runner has.)", labs, notes)
    results = work / "results.json"
    argv = [sys.executable, "-m", "grader", "--submission", str(submission), "--results", str(results)]
    if not weaker:
        argv.append("--require-sandbox")  # a layer lost after the check above is the kit's error, never a grade
    if lab_filter:
        argv += ["--lab", lab_filter]
    limit = float(os.environ["AUTOGRADE_TIMEOUT"]) if os.environ.get("AUTOGRADE_TIMEOUT") else None
    started = time.monotonic()
    simulate = on_simulator()
    sim_args = ["--simulator", "--build-dir", str(work / "build-sim")]
    status, output, data = grade_once(argv + (sim_args if simulate else ["--build-dir", str(work / "build")]),
                                      results, limit)
    if not simulate and data is not None and (status == EXIT_NO_DEVICE or (data.get("extra_data") or {}).get(
            "no_device")):  # nvidia-smi saw a GPU, CUDA found none: grade on the simulator after all
        print("autograde: no CUDA device after all: grading again on the simulator", flush=True)
        simulate = True
        rest = None if limit is None else max(1.0, limit - (time.monotonic() - started))
        status, output, data = grade_once(argv + sim_args, results, rest)
    tail = "\n".join(output.splitlines()[-40:])
    if status is None:
        return fallback_results(f"Grading ran past {limit:g} s and was stopped. {STAFF}", labs, [*notes, tail])
    if data is None:
        return fallback_results(f"The grader stopped without results (exit status {status}). {STAFF}", labs,
                                [*notes, "", tail])
    head = [*notes]
    if simulate:
        data, waiting = pending(data)
        data["output"] = "\n".join(line for line in str(data.get("output", "")).splitlines()
                                   if not line.startswith(SIM_NOTE))  # it tells a student at a terminal what to do
        data.setdefault("extra_data", {})["pending_points"] = waiting
        data["extra_data"]["simulator"] = True
        retotal(data)  # the pending tests' maxima are 0 now, as Gradescope counts them
    if status == EXIT_BROKEN:
        head = ["The autograder's kit is broken, so some tests could not run. " + STAFF, "", *head]
    return finish(student_paths(data, submission), config, labs, root, head)


def prebuild(lab_filter: str) -> int:
    """Compiles once what every submission shares, so that each compiles only its own file: the simulator's library
    and its harness objects (for a runner without a GPU), and, with SM, the harness for that GPU."""
    from grader.compile.build import build_harness
    from grader.sim.simulator import build_harness_sim
    from grader.sim.sim_target import sim_harness_build
    patterns = sorted({lab.pattern for lab in graded_labs(lab_filter)})
    status = 0
    for pattern in patterns:
        built = build_harness_sim(SOURCE, pattern, harness_build=sim_harness_build(SOURCE))  # mk/sim.mk's own
        # folder for SM (compute_SM, 75 without), whatever HARNESS_BUILD says: the GPU's objects have the same names
        print(f"autograde: the {pattern} harness for the simulator: {'built' if built.ok else built.message}")
        status |= not built.ok
    library = subprocess.run(["make", "-s", "-C", str(SOURCE / "sim"), f"KIT={SOURCE}",
                              f"SIM_BUILD={SOURCE / 'build' / 'sim' / 'lib'}"], capture_output=True, text=True)
    print("autograde: the simulator's library: " + ("built" if library.returncode == 0 else
                                                      (library.stdout + library.stderr).strip()[-2000:]))
    status |= library.returncode != 0
    if not os.environ.get("SM"):
        print("autograde: no SM in autograder.env: on a runner with a GPU the harness is built when grading")
        return status
    for pattern in patterns:
        built = build_harness(SOURCE, pattern)
        print(f"autograde: the {pattern} harness for sm_{os.environ['SM']}: {'built' if built.ok else built.message}")
        status |= not built.ok
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT", "/autograder")),
                        help="the folder holding submission/ and results/ (default: /autograder)")
    parser.add_argument("--lab", default=os.environ.get("LAB", ""), help="grade only the labs starting with this")
    parser.add_argument("--prebuild", action="store_true", help="compile the harness (setup.sh)")
    parser.add_argument("--collect", nargs=2, type=Path, metavar=("SUBMISSION", "DEST"),
                        help="only gather the files of SUBMISSION into DEST")
    parser.add_argument("--allow-weaker-sandbox", action="store_true",
                        help=f"grade even where a sandbox layer is missing (also {WEAKER_VARIABLE}=1)")
    args = parser.parse_args(argv)
    if args.prebuild:
        return prebuild(args.lab)
    if args.collect:
        from grader.intake.collect import collect
        submission, dest = args.collect
        print("\n".join(collect(submission, graded_labs(args.lab), dest, dest / ".unpacked")))
        shutil.rmtree(dest / ".unpacked", ignore_errors=True)
        return 0
    path = args.root / "results" / "results.json"
    from grader.run import lifetime
    try:
        allow = args.allow_weaker_sandbox or os.environ.get(WEAKER_VARIABLE, "").strip() == "1"
        with lifetime.stop_on_signals():  # Gradescope's timeout: the grader (its own session) and what it runs end
            data = grade(args.root, args.lab, allow_weaker=allow)
    except Exception as e:  # never leave Gradescope without results
        import traceback
        traceback.print_exc()
        data = fallback_results(f"The autograder failed ({type(e).__name__}: {e}). {STAFF}")
    write_json(path, data)
    print(f"autograde: wrote {path}: score {data['score']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
