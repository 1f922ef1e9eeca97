"""The Slurm scripts of `classroom.py slurm`: three jobs chained by dependencies.

    prepare.sbatch   builds the harness once (into OUT/_harness), so that no two tasks compile it at once
    grade.sbatch     a job array: task K runs `classroom.py task --out OUT --task K`, which grades its batch of
                     students (OUT/class.json lists them) into OUT/students/STUDENT/, skipping those graded
    merge.sbatch     `classroom.py merge --out OUT`: OUT/gradebook.csv from every record, after every task has
                     ended, however it ended (a student whose task failed gets a "not graded" row)
    submit.sh        submits the three: prepare, then grade when prepare succeeded, then merge when grade ended

Logs go to OUT/_slurm/logs/. Everything is written with absolute paths: OUT and the kit must be on a file system
that the compute nodes share.
"""
import shlex
from dataclasses import dataclass
from pathlib import Path

MAX_ARRAY = 1000  # Slurm's default MaxArraySize is 1001: task ids 0..1000


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


def _header(name: str, logs: Path, settings: Settings, gpu: bool, array: str = "", time: str = "") -> list:
    lines = ["#!/bin/bash", f"#SBATCH --job-name=ppl-{name}",
             f"#SBATCH --output={logs}/{name}-%A{'_%a' if array else ''}.out"]
    if array:
        lines.append(f"#SBATCH --array={array}")
    lines.append(f"#SBATCH --cpus-per-task={settings.cpus}")
    lines.append(f"#SBATCH --time={time or settings.time}")
    if gpu:
        lines.append("#SBATCH --gres=gpu:1")
    if settings.partition:
        lines.append(f"#SBATCH --partition={settings.partition}")
    if settings.account:
        lines.append(f"#SBATCH --account={settings.account}")
    lines += [f"#SBATCH {option}" for option in settings.extra]
    return lines


def _body(settings: Settings, command: str) -> list:
    env = [f"export SM={shlex.quote(settings.sm)}"] if settings.sm else []
    return ["set -euo pipefail", f"cd {shlex.quote(settings.kit)}", 'export PATH="$PATH:/usr/local/cuda/bin"', *env,
            f"exec {shlex.quote(settings.python)} grader/classroom.py {command}"]


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
        + ["# Builds the harness once for the whole class (made by grader/classroom.py slurm)."]
        + _body(settings, f"harness --out {q}"),
        "grade.sbatch": _header("grade", logs, settings, settings.gpu, array=array)
        + ["# One array task per batch of students (made by grader/classroom.py slurm)."]
        + _body(settings, f'task --out {q} --task "$SLURM_ARRAY_TASK_ID"'),
        "merge.sbatch": _header("merge", logs, settings, False, time="00:10:00")
        + ["# The gradebook, once every task has ended (made by grader/classroom.py slurm)."]
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
