"""The Slurm scripts of `grader.classroom slurm`: three jobs chained by dependencies.

    prepare.sbatch   builds the harness once (into OUT/_harness), so that no two tasks compile it at once
    grade.sbatch     a job array: task K runs `grader.classroom task --out OUT --task K`, which grades its batch of
                     students (OUT/class.json lists them) into OUT/students/STUDENT/, skipping those graded
    merge.sbatch     `grader.classroom merge --out OUT`: OUT/gradebook.csv from every record, after every task has
                     ended, however it ended (a student whose task failed gets a "not graded" row)
    submit.sh        submits the three: prepare, then grade when prepare succeeded, then merge when grade ended

Logs go to OUT/_slurm/logs/. Everything is written with absolute paths: OUT and the kit must be on a file system
that the compute nodes share.
"""
import dataclasses
import os
import re
import shlex
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from grader.classroom import closing, intake
from grader.classroom.overrides import NONE, OverrideError
from grader.classroom.pool import Progress, build_harnesses, visible_gpus
from grader.classroom.records import (EXIT_BROKEN, EXIT_OK, GRADEBOOK, Hooks, Options, context_key, list_students,
                                      read_class_file, recorded_row, write_class_file)
from grader.classroom.student import error_row, grade_one, labs_of
from grader.config import ConfigError
from grader.patterns import KIT

MAX_ARRAY = 1000  # Slurm's default MaxArraySize is 1001: task ids 0..1000


def run_options(args) -> dict:
    """The Options of a run that the command line sets besides the grading itself (grader/classroom/closing.py):
    --force, --overrides, --canvas-roster, --no-similarity; files as absolute paths (Slurm's jobs run elsewhere)."""
    absolute = lambda path: str(Path(path).resolve()) if path else ""  # noqa: E731
    overrides = args.overrides if args.overrides == NONE else absolute(args.overrides)
    return {"force": args.force, "overrides": overrides,
            "canvas_roster": absolute(args.canvas_roster), "similarity": not args.no_similarity}


@dataclass(frozen=True)
class Settings:
    """What the job scripts ask of Slurm and where they find the kit."""

    python: str
    kit: str
    gpu: bool = True  # ask for one GPU per task (--gres=gpu:1); False for a grading with static checks only
    sm: str = ""  # the compute capability to build for (SM=NN), the same on every node
    partition: str | None = None
    account: str | None = None
    time: str = "01:00:00"
    cpus: int = 4
    max_running: int | None = None
    extra: tuple = ()  # more sbatch options, one #SBATCH line each
    gpu_type: str = ""  # a GPU type the cluster names in its gres (a100, h100): --gres=gpu:TYPE:1
    constraint: str = ""  # node features, as sbatch --constraint takes them (e.g. "a100|h100")


def _header(name: str, logs: Path, settings: Settings, gpu: bool, array: str = "", time: str = "") -> list:
    lines = ["#!/bin/bash", f"#SBATCH --job-name=ppl-{name}",
             f"#SBATCH --output={logs}/{name}-%A{'_%a' if array else ''}.out"]
    if array:
        lines.append(f"#SBATCH --array={array}")
    lines.append(f"#SBATCH --cpus-per-task={settings.cpus}")
    lines.append(f"#SBATCH --time={time or settings.time}")
    if gpu:
        lines.append(f"#SBATCH --gres=gpu:{settings.gpu_type + ':' if settings.gpu_type else ''}1")
    if settings.constraint:
        lines.append(f"#SBATCH --constraint={settings.constraint}")
    if settings.partition:
        lines.append(f"#SBATCH --partition={settings.partition}")
    if settings.account:
        lines.append(f"#SBATCH --account={settings.account}")
    lines += [f"#SBATCH {option}" for option in settings.extra]
    return lines


def check_settings(settings: Settings) -> str:
    """What is wrong with settings for a job script ("" when nothing): a GPU type is one gres name (letters,
    digits, . _ -), and no value may hold a line break (each becomes one #SBATCH line)."""
    if settings.gpu_type and not re.fullmatch(r"[A-Za-z0-9._-]+", settings.gpu_type):
        return (f"--gpu-type {settings.gpu_type!r}: a GPU type is one name as the cluster's gres lists it (a100, "
                f"h100; see `sinfo -o %G`)")
    values = [settings.partition, settings.account, settings.time, settings.constraint, *settings.extra]
    bad = next((v for v in values if v and ("\n" in v or "\r" in v)), None)
    return f"{bad!r}: a Slurm option cannot hold a line break" if bad else ""


def _body(settings: Settings, command: str) -> list:
    env = [f"export SM={shlex.quote(settings.sm)}"] if settings.sm else []
    return ["set -euo pipefail", f"cd {shlex.quote(settings.kit)}", 'export PATH="$PATH:/usr/local/cuda/bin"', *env,
            f"exec {shlex.quote(settings.python)} -m grader.classroom {command}"]


def write_scripts(out, tasks: int, settings: Settings) -> Path:
    """Writes OUT/_slurm/{prepare,grade,merge}.sbatch and submit.sh for a class of `tasks` array tasks; returns
    the folder."""
    out = Path(out).resolve()
    folder, logs = out / "_slurm", out / "_slurm" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    q = shlex.quote(str(out))
    array = f"0-{tasks - 1}" + (f"%{settings.max_running}" if settings.max_running else "")
    # Without SM the harness is built for the GPU of the node that builds it: then it needs one too.
    scripts = {
        "prepare.sbatch": _header("prepare", logs, settings, settings.gpu and not settings.sm, time="00:30:00")
        + ["# Builds the harness once for the whole class (made by python3 -m grader.classroom slurm)."]
        + _body(settings, f"harness --out {q}"),
        "grade.sbatch": _header("grade", logs, settings, settings.gpu, array=array)
        + ["# One array task per batch of students (made by python3 -m grader.classroom slurm)."]
        + _body(settings, f'task --out {q} --task "$SLURM_ARRAY_TASK_ID"'),
        "merge.sbatch": _header("merge", logs, settings, False, time="00:10:00")
        + ["# The gradebook, once every task has ended (made by python3 -m grader.classroom slurm)."]
        + _body(settings, f"merge --out {q}"),
        "submit.sh": [
            "#!/bin/bash",
            "# Submits the class's three jobs, chained: prepare, then grade (the array) once prepare succeeded, then",
            "# merge once every task of grade has ended. Prints the job ids and keeps them in jobs.txt.",
            "set -euo pipefail",
            'here="$(cd "$(dirname "$0")" && pwd)"',
            'prepare=$(sbatch --parsable "$here/prepare.sbatch")',
            'grade=$(sbatch --parsable --dependency=afterok:"${prepare%%;*}" "$here/grade.sbatch")',
            'merge=$(sbatch --parsable --dependency=afterany:"${grade%%;*}" "$here/merge.sbatch")',
            'echo "prepare=${prepare%%;*} grade=${grade%%;*} merge=${merge%%;*}" | tee "$here/jobs.txt"',
        ],
    }
    for name, lines in scripts.items():
        path = folder / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        path.chmod(0o755)
    return folder


# ---- Slurm: the tasks and the merge ----

def run_mode(options: Options) -> str:
    """The mode of a Slurm run's students (records.Options.mode): static, simulator or gpu."""
    return "static" if options.static_only else "simulator" if options.simulator else "gpu"


def run_task(args, hooks: Hooks = Hooks()) -> int:
    """`grader.classroom task`: one Slurm array task grades its batch of students, one after another."""
    try:
        options, entries, batch = read_class_file(args.out)
    except ValueError as e:
        print(f"grader.classroom: {e}", file=sys.stderr)
        return EXIT_BROKEN
    mine = entries[args.task * batch:(args.task + 1) * batch]
    if not mine:
        print(f"grader.classroom: task {args.task}: no students (the class has {len(entries)}, {batch} a task)",
              file=sys.stderr)
        return EXIT_BROKEN
    ids, models = ([], []) if options.static_only or options.simulator else visible_gpus()
    options = dataclasses.replace(options, hooks=hooks, mode=run_mode(options), gpu_models=", ".join(models))
    labs = labs_of(options)
    context = context_key(options, labs)
    progress = Progress(len(mine), sys.stdout)
    for entry in mine:
        try:
            prepared = grade_one(options, entry, context)
            row, unchanged = prepared.row, prepared.unchanged
        except Exception as e:  # the record is not written, so merge reports the student as not graded
            traceback.print_exception(e, file=sys.stderr)
            row, unchanged = error_row(entry, labs, e), False
        progress.finished(entry.student, row, unchanged)
    return EXIT_OK


def run_merge(args) -> int:
    """`grader.classroom merge`: the gradebook from the records written so far (the Slurm array's last job)."""
    try:
        options, entries, _ = read_class_file(args.out)
        labs = labs_of(options)
    except (ValueError, ConfigError) as e:
        print(f"grader.classroom: {e}", file=sys.stderr)
        return EXIT_BROKEN
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    try:
        table = closing.load_overrides(options, labs, entries)
    except OverrideError as e:
        log(f"grader.classroom: the overrides cannot be used:\n{e}")
        return EXIT_BROKEN
    rows = [recorded_row(options, entry, labs, "no record: its grading did not finish (see _slurm/logs/ for a "
                                                "Slurm run)") for entry in entries]
    return closing.close(rows, options, labs, table, log)


def run_harness_build(args, hooks: Hooks = Hooks()) -> int:
    """`grader.classroom harness`: builds the harness for the class in OUT (the Slurm run's first job)."""
    try:
        options, _, _ = read_class_file(args.out)
        options = dataclasses.replace(options, hooks=hooks)
        error = build_harnesses(options, lambda m: print(m, flush=True))
    except (ValueError, ConfigError) as e:
        error = str(e)
    if error:
        print(f"grader.classroom: {error}", file=sys.stderr)
        return EXIT_BROKEN
    return EXIT_OK


def run_slurm(args) -> int:
    """`grader.classroom slurm`: writes the class file and the job scripts, and with --submit submits them."""
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    out = Path(args.out).resolve()
    harness = Path(args.harness_build).resolve() if args.harness_build else out / "_harness"
    options = Options(out=str(out), config=str(Path(args.config).resolve()), lab=args.lab, timeout=args.timeout,
                      build_timeout=args.build_timeout, seed=args.seed, static_only=args.static_only,
                      keep_builds=args.keep_builds, harness_build=str(harness), simulator=args.simulator,
                      simulator_check=not getattr(args, "no_simulator_check", False),
                      **run_options(args))
    options = dataclasses.replace(options, mode=run_mode(options))
    try:
        labs = labs_of(options)
        entries = list_students(args.submissions, out, args.strip_prefix, log)
        options = closing.choose_overrides(options, log)
        closing.load_overrides(options, labs, entries)
    except (ConfigError, ValueError, intake.IntakeError, OverrideError) as e:
        print(f"grader.classroom: {e}", file=sys.stderr)
        return EXIT_BROKEN
    settings = Settings(python=args.python, kit=str(KIT), gpu=options.mode == "gpu",
                        sm=args.sm or os.environ.get("SM", ""), partition=args.partition, account=args.account,
                        time=args.time, cpus=args.cpus, max_running=args.max_running,
                        extra=tuple(args.sbatch or ()), gpu_type=args.gpu_type or "",
                        constraint=args.constraint or "")
    problem = check_settings(settings)
    if problem:
        print(f"grader.classroom: {problem}", file=sys.stderr)
        return EXIT_BROKEN
    batch = max(args.batch, -(-len(entries) // MAX_ARRAY))
    write_class_file(options, entries, args.submissions, batch)
    scripts = write_scripts(out, tasks=-(-len(entries) // batch), settings=settings)
    log(f"{len(entries)} students in {-(-len(entries) // batch)} array tasks of {batch}; scripts in {scripts}")
    if not args.submit:
        log(f"submit with: bash {scripts / 'submit.sh'}   (the gradebook: {out / GRADEBOOK}, written by the last "
            f"job)")
        return EXIT_OK
    proc = subprocess.run(["bash", str(scripts / "submit.sh")], capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        print(f"grader.classroom: submitting failed: {proc.stderr.strip()}", file=sys.stderr)
        return EXIT_BROKEN
    return EXIT_OK
