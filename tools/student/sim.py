"""`make sim LAB=03`: build one lab for the kit's SIMT simulator and run it on the CPU, no GPU needed.

    python3 -m tools.student.sim --lab 03 [--submission labs|solutions|DIR] [--n 1,1025,65537] [--args '...'] [--timeout 300]
                                 [--gpu H100] [--no-estimate] [--schedule random:1234]
    (make sim LAB=03 [SUBMISSION=DIR] [N=1,1025] [ARGS='--n 33 --data uniform --seed 5'] [GPU=A100]
    [SCHEDULE=random:1234]; in a lab's folder, make sim)

Builds the lab's program with mk/sim.mk (the kit's harness and the lab's one file, unchanged, linked with the
simulator instead of cudart), runs it on small and edge sizes (those of `make check`; --n other sizes; --args any
harness arguments instead, such as a grading run's to reproduce it), and prints the harness's lines and then the
simulator's counts per kernel and source line (warp instructions, SIMT efficiency, divergent branches, bank
conflicts, global memory sectors) and its findings (hazards). sim/README.md explains the counts. --schedule runs the
blocks and warps in another order a GPU may choose (interleave:SEED, reverse, random:SEED: grader/schedules.py),
as the grader does after an in-order pass; a grading failure under one names it, and this replays it. When every case
passed, it ends with the performance estimate of grader/estimate.py: the lab's time on a named GPU (--gpu, one of
grader/gpus.toml's; H100 unless told) at the benchmark's size and its speedup over the baseline, from a roofline
model of the simulator's counts: an estimate, a few seconds more, never a measurement and never points.

Each submission builds in a folder of its own: build/sim/labs/LAB and build/sim/solutions/LAB for the kit's, and
build/sim/custom/NAME-HASH/LAB for any other folder (HASH: of its resolved path), so two folders never share a
program. make rebuilds by timestamps; a stamp of the file's content beside the program also rebuilds it when the
file changed but its time did not move forward (a copy that kept an older time).

Exit status: the program's (0 every case passed, 1 a case failed, 2 the simulator cannot run a kernel, 3 a kernel
fault such as an out-of-bounds access, with the simulator's diagnostic above); 2 when the lab does not build.
"""
import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path


from grader.config import ConfigError, load_config
from grader.no_gpu import shown
from grader.patterns import KIT, PATTERNS
from grader.estimate import DEFAULT_GPU, estimate_for, local_runner
from grader.schedules import schedule_env
from grader.simulator import SIM_MAKEFILE, sim_env
from grader.sim_target import sim_sm, target_note

EXIT_BUILD = 2
DEFAULT_TIMEOUT = 300.0
STAMP = "source.sha256"  # beside the program: the file and content it was built from


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lab", required=True, help="the lab, by prefix: 03 or 03-sequential")
    p.add_argument("--submission", default="labs", help="a folder shaped like labs/ (default: labs)")
    p.add_argument("--n", help="sizes to run instead of the default ones (the harness's --n syntax: 1,1025,2^16+1)")
    p.add_argument("--args", help="the harness's arguments for the run, instead of the default ones (one string, "
                                  "split as a shell would: '--dataset datasets/reduce/0003-n2-uniform/input.raw')")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds for the run (default %(default)g)")
    p.add_argument("--gpu", default=DEFAULT_GPU, help="the GPU of the performance estimate (grader/gpus.toml: H100, "
                                                      "H200, A100, T4; default %(default)s)")
    p.add_argument("--no-estimate", action="store_true", help="no performance estimate after the run")
    p.add_argument("--schedule", default="inorder", help="the simulator's schedule: inorder (the default), "
                   "interleave:SEED, reverse[:SEED] or random:SEED (sim/README.md)")
    return p.parse_args(argv)


def build_folder(submission: Path, lab: str, kit: Path = KIT) -> Path:
    """Where a submission's lab builds: build/sim/NAME/LAB for the kit's own folders (labs, solutions, tests/NAME),
    build/sim/custom/NAME-HASH/LAB for any other, HASH from its resolved path: one folder per submission."""
    submission = Path(submission).resolve()
    kit = Path(kit).resolve()
    if submission.parent in (kit, kit / "tests"):
        return kit / "build" / "sim" / submission.name / lab
    digest = hashlib.sha256(str(submission).encode()).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in submission.name) or "submission"
    return kit / "build" / "sim" / "custom" / f"{name}-{digest}" / lab


def source_stamp(source: Path) -> str:
    """The stamp of a source file's content and target: its path, SHA-256 and the SM it is built for (SM=80 builds
    the same file again, for compute_80)."""
    return f"{Path(source).resolve()} {hashlib.sha256(Path(source).read_bytes()).hexdigest()} sm{sim_sm()}\n"


def forget_other_source(build: Path, source: Path) -> None:
    """Removes the student's object in build when it was not built from this content of source for this SM (no
    stamp, or another file, content or SM), so make compiles it again whatever the file's time says."""
    stamp = build / STAMP
    try:
        same = stamp.read_text(encoding="utf-8") == source_stamp(source)
    except OSError:
        same = False
    if not same:
        stamp.unlink(missing_ok=True)
        (build / "student.o").unlink(missing_ok=True)


def not_run_note(result: Path) -> str:
    """What a run that stopped early did not run, from its result lines (the plan, then a line per case): "stopped
    at n=33 integer (error); not run: n=1025 integer, ..." with why and what to do; "" when every planned case has a
    line, or there are no lines to read. A kernel fault ends the program (it loses the context, as on a GPU), so the
    sizes after it never run: without this line they would just be missing."""
    planned, done, last = [], set(), None
    try:
        lines = result.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        if item.get("kind") == "plan" and isinstance(item.get("cases"), list):
            planned += [str(c) for c in item["cases"]]
        elif item.get("case") in planned:
            done.add(item["case"])
            if item.get("status") != "pass":
                last = (item["case"], str(item.get("status")))
    missing = [c for c in planned if c not in done]
    if not missing:
        return ""
    where = f"the run stopped at {last[0]} ({last[1]}, above)" if last else "the run stopped before them"
    return (f"not run: {', '.join(missing)}: {where}; a kernel fault or a CUDA error ends the lab program, as it "
            f"loses a GPU's context, so the cases after it never run: fix it and run again")


def main(argv=None) -> int:
    args = parse_args(argv)
    submission = Path(args.submission)
    if not submission.is_absolute():
        submission = (Path.cwd() / submission).resolve()
    try:  # the lab's pattern and file, as the grader has them (a submission may hold the .cu file alone)
        labs = load_config().select(args.lab)
    except ConfigError as e:
        print(f"sim.py: {e}", file=sys.stderr)
        return EXIT_BUILD
    if len(labs) != 1:
        print(f"sim.py: --lab {args.lab} names {len(labs)} labs ({', '.join(x.name for x in labs) or 'none'}): "
              f"give one, e.g. --lab 03", file=sys.stderr)
        return EXIT_BUILD
    lab = submission / labs[0].name
    pattern, source = labs[0].pattern, lab / labs[0].source
    if not source.is_file():
        print(f"sim.py: {source} does not exist", file=sys.stderr)
        return EXIT_BUILD
    try:
        default = list(PATTERNS[pattern].sim_run)  # make check's small and edge sizes, exact data where there is one
        run = shlex.split(args.args) if args.args else (default[:-2] + ["--n", args.n] if args.n else default)
    except ValueError as e:
        print(f"sim.py: --args {args.args!r}: {e}", file=sys.stderr)
        return EXIT_BUILD
    try:
        schedule = schedule_env(args.schedule)
    except ValueError as e:
        print(f"sim.py: --schedule: {e}", file=sys.stderr)
        return EXIT_BUILD
    build = build_folder(submission, lab.name)
    print(f"building {shown(source)} for the simulator (mk/sim.mk, compute_{sim_sm()}) in {shown(build)} ...",
          flush=True)
    start = time.monotonic()
    forget_other_source(build, source)
    make = ["make", "-s", "--no-print-directory", f"-j{os.cpu_count() or 1}", "-f", str(SIM_MAKEFILE), f"KIT={KIT}",
            f"PATTERN={pattern}", f"LAB_SRC={source}", f"BUILD={build}"]
    if subprocess.run(make, cwd=KIT).returncode != 0:
        print(f"sim.py: {shown(source)} does not build for the simulator (the errors are above). "
              f"{target_note(command='make sim')}", file=sys.stderr)
        return EXIT_BUILD
    (build / STAMP).write_text(source_stamp(source), encoding="utf-8")
    program = build / f"{pattern}_lab"
    # --in-process: the sandbox off, so that the simulator's counts (printed when the run ends) reach this terminal;
    # --result: which cases ran, to say which did not (not_run_note)
    result = build / "sim-result.jsonl"
    result.unlink(missing_ok=True)
    run += ["--in-process"] + ([] if "--result" in run else ["--result", str(result)])
    print(f"built in {time.monotonic() - start:.1f} s; running on the simulator"
          f"{'' if args.schedule == 'inorder' else ' under the schedule ' + args.schedule}: {shown(program)} "
          f"{shlex.join(run)}", flush=True)
    start = time.monotonic()
    try:
        proc = subprocess.run([str(program), *run], cwd=KIT, env={**sim_env(counts=True), **schedule},
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"sim.py: the run took more than {args.timeout:g} s and was stopped (a kernel that loops forever "
              f"ends at the simulator's instruction limit; raise --timeout for large sizes)", file=sys.stderr)
        return 1
    print(f"simulated in {time.monotonic() - start:.1f} s (exit status {proc.returncode})")
    note = not_run_note(result) if proc.returncode != 0 else ""
    if note:
        print(note, file=sys.stderr)
    if proc.returncode == 0 and not args.no_estimate:
        start = time.monotonic()
        print(f"estimating its speed on {args.gpu} from the simulator's counts at larger sizes ...", flush=True)
        _, line = estimate_for(local_runner(program, cwd=KIT, timeout=args.timeout), labs[0], args.gpu)
        print(f"{line} [{time.monotonic() - start:.1f} s]", flush=True)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
