#!/usr/bin/env python3
"""What a GPU-only command says on a machine without a GPU: what it would have done, why there is no GPU here (in
nvidia-smi's words), and the simulator commands that do the nearest thing (`make sim`, `make grade SIM=1`).

    python3 -m grader.run.no_gpu run|check|sanitize|profile --lab 01-global-strided [--submission DIR] [--here]

make run (mk/lab.mk) prints it when the lab program exits 77; tools/student/check.py, tools/student/nsight.py and
grader/sanitize/ print message() themselves. The next commands are those of the folder the command was typed in:
a lab's folder (--here, or PPL_LAB_FOLDER in the environment, which mk/lab.mk sets when it hands check, sanitize,
profile and grade to the kit's Makefile: `make sim`) or the kit's root (`make sim LAB=01`).

The exit status 77 ("cannot run here", automake's "skipped") is the tools' own. Through make it reads as make's
"Error 77" and make itself exits 2, as it does for any failed recipe: GNU make has no way to pass a recipe's status
on. This command prints the text and exits 0.
"""
import argparse
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]
EXIT_NO_DEVICE = 77
HERE_VARIABLE = "PPL_LAB_FOLDER"  # set by mk/lab.mk: the command was typed in this lab's folder

# What each command does on a GPU ("make check" + this), and what the simulator offers in its place.
WOULD = {
    "run": "builds your kernel and checks it on the default sizes, on a GPU",
    "check": "runs your kernel on small and edge sizes, on a GPU",
    "sanitize": "runs your kernel under compute-sanitizer (races, out-of-bounds accesses, barriers), on a GPU",
    "profile": "measures your kernel with Nsight Compute beside the previous stage's reference, on a GPU",
}
SIM_DOES = {
    "run": "your kernel on small and edge sizes, with the simulator's counts per source line",
    "check": "your kernel on the same small and edge sizes, with the simulator's counts per source line",
    "sanitize": "your kernel on small and edge sizes; the simulator checks each run for what compute-sanitizer "
                "finds (out-of-bounds accesses, shared-memory races, uninitialized reads, barriers not every thread "
                "reaches) and names the file:line",
    "profile": "the simulator's counts per kernel and source line: warp instructions, SIMT efficiency, divergent "
               "branches, bank conflicts, global memory sectors (counts, not times; then an estimate of the time on "
               "a named GPU from them, labelled as one, never points)",
}
GRADE_DOES = "the grader's correctness tests of small sizes"
WIDTH = 116
COLUMN = 30  # the widest command column beside the text; longer commands get a line of their own


def nvidia_smi(runner=subprocess.run, which=shutil.which) -> tuple:
    """(whether nvidia-smi lists a GPU, what it says): "nvidia-smi: not found", its first line when it fails
    ("nvidia-smi: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver..."), or what it
    lists."""
    smi = which("nvidia-smi")
    if not smi:
        return False, "nvidia-smi: not found"
    try:
        proc = runner([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"nvidia-smi -L: {e}"
    lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    if proc.returncode != 0:
        return False, f"nvidia-smi: {lines[0] if lines else f'exit status {proc.returncode}'}"
    gpus = [ln for ln in lines if ln.startswith("GPU ")]
    if not gpus:
        return False, "nvidia-smi -L lists no GPU"
    return True, f"nvidia-smi lists {gpus[0]}{' and more' if len(gpus) > 1 else ''}, but CUDA cannot use it"


def nvidia_smi_says(runner=subprocess.run, which=shutil.which) -> str:
    """Why there is no GPU here, in nvidia-smi's words (nvidia_smi's text)."""
    return nvidia_smi(runner, which)[1]


def in_lab_folder(env=None) -> bool:
    """Whether the command was typed in a lab's folder (mk/lab.mk says so through PPL_LAB_FOLDER)."""
    return bool((os.environ if env is None else env).get(HERE_VARIABLE))


def next_commands(lab: str, submission=None, here: bool = False, kit=KIT) -> tuple:
    """(make sim ..., make grade SIM=1 ...): the two simulator commands for lab, as typed in its folder (here) or at
    the kit's root (with LAB= and, for a submission other than the kit's labs/, SUBMISSION=)."""
    if here:
        return "make sim", "make grade SIM=1"
    where = f" LAB={lab[:2]}"
    if submission is not None and Path(submission).resolve() != (Path(kit) / "labs").resolve():
        where += f" SUBMISSION={shown(submission)}"
    return f"make sim{where}", f"make grade SIM=1{where}"


def shown(path) -> str:
    """path as the person who typed the command can use it: relative to the folder they typed it in when it is
    inside it, else absolute. That folder is the current one (make runs at the kit's root), or the lab's folder
    when mk/lab.mk says the command was typed there (PPL_LAB_FOLDER: make -C runs the tools at the kit's root, where
    a path relative to the kit means nothing to the student)."""
    path = Path(path).resolve()
    here = os.environ.get(HERE_VARIABLE) or str(Path.cwd())
    try:
        return str(path.relative_to(Path(here).resolve()))
    except ValueError:
        return str(path)


def message(command: str, lab: str, submission=None, here: bool | None = None, reason: str | None = None,
            kit=KIT) -> str:
    """The lines a GPU-only command prints without a GPU: what it would have done and why it cannot, then the
    simulator's commands that come nearest."""
    here = in_lab_folder() if here is None else here
    reason = nvidia_smi_says() if reason is None else reason
    sim, grade = next_commands(lab, submission, here, kit)
    width = max(len(sim), len(grade)) + 4
    lines = textwrap.wrap(f"make {command} {WOULD[command]}; there is none here ({reason}).", WIDTH)
    lines.append("The nearest without one, on the kit's CPU simulator:")
    for first, what in ((sim, SIM_DOES[command]), (grade, GRADE_DOES)):
        if width > COLUMN:  # long commands (SUBMISSION=...): each on its own line, what it does below
            lines.append(f"  {first}")
            lines += textwrap.wrap(what, WIDTH, initial_indent=" " * 6, subsequent_indent=" " * 6,
                                   break_on_hyphens=False)
        else:
            lines += textwrap.wrap(what, WIDTH, initial_indent=f"  {first:<{width - 2}}",
                                   subsequent_indent=" " * width, break_on_hyphens=False)
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=sorted(WOULD), help="the make target that needed a GPU")
    p.add_argument("--lab", required=True, help="the lab's folder name (01-global-strided)")
    p.add_argument("--submission", help="the folder shaped like labs/ (default: the kit's labs/)")
    p.add_argument("--here", action="store_true", help="the command was typed in the lab's folder")
    args = p.parse_args(argv)
    print(message(args.command, args.lab, args.submission, here=args.here or None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
