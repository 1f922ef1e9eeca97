"""Grades a whole class: one upload per student (folders, .zip, .tar, .tar.gz, as Gradescope and GitHub Classroom
export them), every lab graded as grader/grade.py grades it, into one gradebook.

    python3 -m grader.classroom grade SUBMISSIONS [--out build/class] [--lab 03,05] [--jobs N] [--gpus N]
                                      [--only ID,ID] [--force] [--overrides FILE.csv] [--canvas-roster FILE.csv]
    python3 -m grader.classroom slurm SUBMISSIONS [--out DIR] [--submit] ...   a Slurm job array instead (see --help)
    python3 -m grader.classroom merge --out DIR                                the gradebook from what is graded
    python3 -m grader.classroom rescore --out DIR      labs.toml's points and thresholds now, over what was measured

What it writes under OUT:
  gradebook.csv                    one row per student: id, name, sid, email (from Gradescope's
                                   submission_metadata.yml), total, maximum, points per lab, status and notes (why
                                   points were lost, or why the upload could not be graded), and per timed lab the
                                   speedup and time measured; the overrides laid over (grader/classroom/closing.py)
  report.html                      the class report (class_report.py); similarity.html and .csv (similarity.py);
                                   canvas.csv and gradescope.csv (lms.py)
  students/STUDENT/results.json    Gradescope's results.json (grader/report/report.py), as make grade writes it, with
                                   late work and overrides applied
  students/STUDENT/feedback.txt    which file was graded for each lab, then the table make grade prints
  students/STUDENT/report.html     the student's own page (grader/report/report_html.py)
  students/STUDENT/submission/     the files graded, shaped like labs/
  students/STUDENT/record.json     the row and the key it was graded under (what makes a rerun skip the student)
  students/STUDENT/measurements.json  every test as graded, with its benchmark's result line: what rescore scores
  class.json                       the students and the options: what `merge` and the Slurm tasks read
STUDENT is the upload's name cleaned to a safe folder name (letters, digits and ._@+-), with -2, -3 when two uploads
clean to the same (the gradebook's notes say so): students/ holds nothing else, so no upload can reach the
grader's own files. Cells of the gradebook that a spreadsheet would take for a formula (=, +, -, @, tab, carriage
return first) start with ' instead.

How: the uploads are unpacked (grader/classroom/intake.py: safe, size-capped) and each student's labs are built and
statically checked (and, on a GPU machine, checked on the simulator: grader/sim/sim_check.py) in a pool of CPU
processes (--jobs, default one per CPU, each with its share of the cores for the simulator's runs); the run-time
tests then run one student at a time on each GPU, a worker process per GPU pinned with CUDA_VISIBLE_DEVICES
(--gpus, default every GPU `nvidia-smi -L` lists). Progress (n/N done, who is on which GPU, ETA) goes to stderr.

A rerun (after an interruption, or with more uploads) skips every student whose graded files, and the kit's
harness, grader, labs.toml and options, are unchanged since their record was written. A student whose upload is
unreadable, or whose code hangs or crashes, gets a row saying so and the class goes on. Without a GPU the labs are
still built and statically checked, and the run-time tests are reported as not run (exit status 77); --static-only
does that on purpose.

--only grades the students named and keeps the others' rows; --force grades them again though nothing changed.

--simulator (make grade-class SIM=1) grades every student on the kit's CPU simulator, as `make grade SIM=1` does:
their rows say "simulator" and count the correctness groups of small sizes only. A student whose unchanged files
were graded on a GPU before keeps that grading (so does a run without a GPU, or with --static-only).

Exit status: 0 every student graded; 1 some could not be graded (status "error", "kit error" or "not graded" in the
gradebook); 2 bad usage, a broken kit or an unusable overrides file or roster (nothing graded); 77 no GPU: run-time
tests not run; 130 interrupted (run it again to go on). make shows any of them as its own 2 ("Error N")."""
import argparse
import dataclasses
import os
import signal
import sys
import threading
from pathlib import Path

from grader.compile import build as build_mod
from grader.classroom import closing, intake, lms
from grader.classroom import rescore as rescore_mod
from grader.classroom.overrides import OverrideError
from grader.classroom.pool import build_harnesses, grade_class, graders_per_gpu, stop_workers, visible_gpus
from grader.classroom.records import EXIT_BROKEN, EXIT_INTERRUPTED, Hooks, Options, list_students, write_class_file
from grader.classroom.slurm import run_harness_build, run_merge, run_options, run_slurm, run_task
from grader.classroom.student import raise_interrupt, labs_of
from grader.compile.build_sandbox import ALLOW_WEAKER, weaker_sandbox
from grader.config import ConfigError, DEFAULT_PATH
from grader.report import charts
from grader.run import lifetime
from grader.grade import DEFAULT_TIMEOUT


def run_grade(args, hooks: Hooks = Hooks()) -> int:
    """`grader.classroom grade`: the whole class on this machine."""
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    out = Path(args.out).resolve()
    if args.simulator and args.static_only:
        print("grader.classroom: --simulator and --static-only: give one (SIM=1 runs the correctness tests on the "
              "simulator; STATIC_ONLY=1 runs none)", file=sys.stderr)
        return EXIT_BROKEN
    static_only = args.static_only or (args.gpus == 0 and not args.simulator)  # no GPU asked for: none is used
    if refused_sandbox(args, "grade-class"):
        return EXIT_BROKEN
    charts.preload()  # the class's report.html at the end draws with matplotlib: imported while the class grades
    options = Options(out=str(out), config=str(Path(args.config).resolve()), lab=args.lab, timeout=args.timeout,
                      build_timeout=args.build_timeout, seed=args.seed, static_only=static_only,
                      simulator=args.simulator, simulator_check=not args.no_simulator_check,
                      keep_builds=args.keep_builds,
                      harness_build=str(Path(args.harness_build).resolve()) if args.harness_build else None,
                      hooks=hooks, **run_options(args))
    try:
        labs = labs_of(options)
        entries = list_students(args.submissions, out, args.strip_prefix, log)
        chosen, others = only(entries, args.only)
        options = closing.choose_overrides(options, log)
        closing.load_overrides(options, labs, entries)
        if options.canvas_roster:
            lms.read_roster(options.canvas_roster)
    except (ConfigError, ValueError, intake.IntakeError, OverrideError, lms.RosterError) as e:
        print(f"grader.classroom: {e}", file=sys.stderr)
        return EXIT_BROKEN
    gpu_ids, models = ([], []) if static_only or args.simulator else visible_gpus()
    if args.gpus is not None:
        gpu_ids = gpu_ids[:args.gpus]
    if gpu_ids and (args.graders_per_gpu or 1) > 1:
        fit = graders_per_gpu(args.graders_per_gpu)
        if fit < args.graders_per_gpu:
            log(f"--graders-per-gpu {args.graders_per_gpu}: {fit} at a time fit this GPU's and this machine's memory")
        options = dataclasses.replace(options, graders_per_gpu=fit)
    mode = "static" if static_only else "simulator" if args.simulator else "gpu" if gpu_ids else "no-gpu"
    options = dataclasses.replace(options, mode=mode, gpu_models=", ".join(models) if gpu_ids else "")
    write_class_file(options, entries, args.submissions)
    jobs = args.jobs or os.cpu_count() or 1
    where = (f"{len(gpu_ids)} GPU{'s' if len(gpu_ids) != 1 else ''} ({options.gpu_models}, "
             f"{options.graders_per_gpu} student{'s' if options.graders_per_gpu != 1 else ''} at a time on each, "
             f"benchmarks alone)" if gpu_ids
             else "no GPU: run-time tests not run" if mode == "no-gpu" else
             "on the kit's CPU simulator: correctness of small sizes, no performance" if mode == "simulator"
             else "static checks only")
    which = f"{len(chosen)} of {len(entries)} students" if others else f"{len(entries)} students"
    again = ", graded again whether changed or not" if options.force else ""
    log(f"grading {which}{again}, labs {', '.join(lab.name for lab in labs)}: {jobs} build processes, {where}; "
        f"results in {out}")
    error = build_harnesses(options, log)
    if error:
        print(f"grader.classroom: {error}", file=sys.stderr)
        return EXIT_BROKEN
    return grade_class(chosen, options, jobs, gpu_ids, log, others=others)


def refused_sandbox(args, what: str) -> bool:
    """Whether the class is not graded for a missing sandbox layer (grader/compile/build_sandbox.py: weaker_sandbox),
    which says so on stderr: which layer, how to install it, and the option that grades with fewer layers anyway."""
    why = weaker_sandbox()
    if not why:
        return False
    if args.allow_weaker_sandbox:
        print(f"grader.classroom: warning: {why}; grading anyway ({ALLOW_WEAKER}): each student's results.json "
              f"says which layers held their compile and runs", file=sys.stderr)
        return False
    print(f"grader.classroom: {what} refuses to grade: {why}. To grade with the layers this machine has, pass "
          f"{ALLOW_WEAKER} (make {what} ALLOW_WEAKER_SANDBOX=1)", file=sys.stderr)
    return True


def only(entries, ids: str | None) -> tuple:
    """(the entries to grade, the others) for --only ID,ID (None: all); ValueError naming ids the class lacks."""
    if not ids:
        return entries, []
    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    known = {e.student for e in entries}
    unknown = [i for i in wanted if i not in known]
    if unknown:
        raise ValueError(f"--only: no student {', '.join(unknown)} in this class (the gradebook's student column; "
                         f"the ids: {', '.join(sorted(known)[:10])}{', ...' if len(known) > 10 else ''})")
    return [e for e in entries if e.student in wanted], [e for e in entries if e.student not in wanted]


# ---- command line ----

def _common(p, slurm_run: bool = False):
    p.add_argument("submissions", help="a folder with one folder or archive (.zip, .tar, .tar.gz) per student, "
                                       "or an export archive holding such a folder")
    p.add_argument("--out", default="build/class", help="where the gradebook and each student's results go "
                                                      "(default: build/class)")
    p.add_argument("--lab", help="grade only the labs whose name starts with this (03, 03-sequential)")
    p.add_argument("--timeout", type=float,
                   help=f"seconds per harness run, as python3 -m grader's --timeout (default: labs.toml's [limits] "
                        f"rule on a calibrated GPU, else {DEFAULT_TIMEOUT:g})")
    p.add_argument("--build-timeout", type=float, default=build_mod.DEFAULT_BUILD_TIMEOUT,
                   help="seconds per build (default %(default)g)")
    p.add_argument("--seed", type=int, help="one data seed for every student (default: a fresh one each)")
    p.add_argument("--static-only", action="store_true",
                   help="build and statically check only; report the run-time tests as not run")
    p.add_argument("--simulator", action="store_true",
                   help="grade on the kit's CPU simulator, no GPU (python3 -m grader --simulator): the correctness "
                        "groups of small sizes and the hazard checks; performance and larger sizes are not graded")
    p.add_argument("--no-simulator-check", action="store_true",
                   help="on a GPU, grade on the GPU alone, without the simulator's check of each lab beside it "
                        "(python3 -m grader --no-simulator-check; grader/sim/sim_check.py), for debugging")
    p.add_argument("--keep-builds", action="store_true", help="keep the built programs (default: removed once a "
                                                              "student is graded; logs and results stay)")
    p.add_argument("--strip-prefix", default="", help="remove this from the start of each upload's name to get "
                                                      "the student id (GitHub Classroom's 'assignment-')")
    p.add_argument("--harness-build", help="where the harness objects are built (default: " +
                   ("OUT/_harness" if slurm_run else "the kit's build/harness/ARCH, shared with make grade") + ")")
    p.add_argument("--config", default=str(DEFAULT_PATH), help="the labs file (default: grader/labs.toml)")
    p.add_argument("--force", action="store_true",
                   help="grade every student of this run again, whether their files changed or not (a regrade)")
    p.add_argument("--overrides", help="the course staff's overrides, a CSV file: student,lab,points,reason (see "
                                       "grader/classroom/overrides.py; default: the file the last run of OUT "
                                       "applied, else OUT/overrides.csv if there is one; none: no file)")
    p.add_argument("--canvas-roster", help="Canvas's gradebook export, whose students canvas.csv is matched to "
                                           "(grader/classroom/lms.py)")
    p.add_argument("--no-similarity", action="store_true", help="skip the similarity report (similarity.html)")
    p.add_argument("--allow-weaker-sandbox", action="store_true",
                   help="grade even where a sandbox layer is missing (bubblewrap: the compile's sandbox and the "
                        "runner's namespaces); without it the class is not graded and the message says which layer "
                        "is missing and how to install it. results.json records the layers either way")


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
    grade.add_argument("--graders-per-gpu", type=int, help="students graded side by side on each GPU, their "
                       "benchmarks one at a time (default 1; at most one per 16 GiB of GPU and host memory)")
    grade.add_argument("--only", help="grade only these students (ID,ID: the gradebook's ids); the others keep "
                                      "their rows")

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
    slurm.add_argument("--gpu-type", help="the GPU type to ask for, as the cluster's gres names it (a100, h100): "
                                          "--gres=gpu:TYPE:1")
    slurm.add_argument("--constraint", help="sbatch --constraint: node features (e.g. a100|h100)")
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
    rescore = sub.add_parser("rescore", help="score the class in OUT again under labs.toml as it is now, from what "
                                             "its grading measured (nothing is built or run)",
                             description=rescore_mod.__doc__.split("\n\n")[0])
    rescore.add_argument("--out", default="build/class", help="the class folder (default: build/class)")
    return parser.parse_args(argv)


def main(argv=None, hooks: Hooks = Hooks()) -> int:
    """Runs a command as from the command line and returns its exit status; hooks replace the grading steps."""
    args = parse_args(argv)
    commands = {"grade": lambda: run_grade(args, hooks), "slurm": lambda: run_slurm(args),
                "task": lambda: run_task(args, hooks), "harness": lambda: run_harness_build(args, hooks),
                "merge": lambda: run_merge(args),
                "rescore": lambda: rescore_mod.run_rescore(args, lambda m: print(m, file=sys.stderr, flush=True))}
    main_thread = threading.current_thread() is threading.main_thread()
    previous = ((signal.getsignal(signal.SIGINT), signal.signal(signal.SIGTERM, raise_interrupt)) if main_thread
                else None)
    if main_thread:
        lifetime.watch_starter()  # make killed (SIGKILL too): as on SIGTERM
    try:
        return commands[args.command]()
    except KeyboardInterrupt:
        stop_workers()
        print("grader.classroom: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, previous[0])
            signal.signal(signal.SIGTERM, previous[1])
