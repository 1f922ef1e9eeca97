"""`make sim LAB=03`: build one lab for the kit's SIMT simulator and run it on the CPU, no GPU needed.

    python3 -m tools.student.sim --lab 03 [--submission labs|solutions|DIR] [--n 1,1025,65537] [--args '...']
                                 [--timeout 300] [--gpu H100] [--no-estimate] [--schedule random:1234]
    (make sim LAB=03 [SUBMISSION=DIR] [N=1,1025] [ARGS='--n 33 --data uniform --seed 5'] [GPU=A100]
    [SCHEDULE=random:1234]; in a lab's folder, make sim)

Builds the lab's program with mk/sim.mk (the kit's harness and the lab's one file, unchanged, linked with the
simulator instead of cudart), runs it on small and edge sizes (those of `make check`; --n other sizes; --args any
harness arguments instead, such as a grading run's to reproduce it), and prints the harness's lines and then the
simulator's counts per kernel and source line (warp instructions, SIMT efficiency, divergent branches, bank
conflicts, global memory sectors) and its findings (hazards). sim/README.md explains the counts. --schedule runs the
blocks and warps in another order a GPU may choose (interleave:SEED, reverse, random:SEED: grader/sim/schedules.py),
as the grader does after an in-order pass; a grading failure under one names it, and this replays it. When every case
passed, it ends with the performance estimate of grader/sim/estimate.py: the lab's time on a named GPU (--gpu, one of
grader/gpus.toml's; H100 unless told) at the benchmark's size and its speedup over the baseline, from a roofline
model of the simulator's counts: an estimate, a few seconds more, never a measurement and never points.

Each submission builds in a folder of its own: build/sim/labs/LAB and build/sim/solutions/LAB for the kit's, and
build/sim/custom/NAME-HASH/LAB for any other folder (HASH: of its resolved path), so two folders never share a
program. make rebuilds by timestamps; a stamp of the file's content beside the program also rebuilds it when the
file changed but its time did not move forward (a copy that kept an older time).

The simulator's findings (hazards that did not stop a kernel: races, barriers not every thread reaches, ...) are
listed once, at the end, as make grade's sanitizers row lists them (grader/sim/simulator.py hazards_found): one line
per kind and pair of source lines with its count and advice, the races between warps first, at most ten, kernels by
the names the student wrote; a closing line counts those in the student's code as make grade does: it takes points
for them.

Exit status: the program's (0 every case passed, 1 a case failed, 2 the simulator cannot run a kernel, 3 a kernel
fault such as an out-of-bounds access, with the simulator's diagnostic above); 1 when every case passed but the
simulator found a hazard in the student's code; 2 when the lab does not build, or the kit's own parts (harness,
checker, simulator) do not: those are built first, and their failure names what this machine lacks and the
command that installs it (grader/compile/build.py kit_failure), never the student's file.
"""
import argparse
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path


from grader.config import ConfigError, load_config
from grader.run.no_gpu import shown
from grader.patterns import KIT, PATTERNS, parse_sizes
from grader.sim.estimate import DEFAULT_GPU, estimate_for, local_runner
from grader.sim.schedules import schedule_env
from grader.score.score import hazard_places
from grader.sim.sim_report import demangle, read_report
from grader.sim.simulator import SIM_MAKEFILE, SIM_MAX_N, build_harness_sim, hazard_listing, hazards_found
from grader.sim.sim_target import may_need_later_gpu, sim_env, sim_sm, target_note

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


NEW_FINDINGS = re.compile(r"^ppl-sim: kernel \S+: \d+ new findings? \(hazards that did not stop it\):$")
FINDINGS_SECTION = re.compile(r"^== findings \(\d+\)$")


EXACT_INTEGER_MAX_N = 1 << 20  # --data integer's largest size (patterns/reduce/check.c: the sum fits 24 bits)


def sizes_problem(sizes: str, run: list) -> tuple:
    """(what is wrong with N=sizes for a run on the simulator, "" when nothing; the run's arguments): sizes that are
    not the harness's --n syntax, or larger than the simulator takes (SIM_MAX_N, as make grade SIM=1), said in the
    student's words (N=...), not the harness's usage text. Sizes past --data integer's limit run with --data signs
    (also exact), which the run's arguments then say."""
    numbers = parse_sizes(sizes)
    if numbers is None:
        return (f"N={sizes}: not a list of sizes: whole numbers or 2^K, 2^K+D, 2^K-D, separated by commas "
                f"(N=1,1025,2^16+1)"), run
    largest = max(numbers)
    if largest > SIM_MAX_N:
        return (f"N={sizes}: {largest} elements is too large for the simulator (at most {SIM_MAX_N} = "
                f"2^{SIM_MAX_N.bit_length() - 1}); larger sizes need a GPU (make check)"), run
    if largest > EXACT_INTEGER_MAX_N and run[:2] == ["--data", "integer"]:
        run = ["--data", "signs", *run[2:]]
    return "", run


class StderrRelay:
    """Relays the simulated program's stderr a line at a time with every C++ name demangled (once per name), minus
    the findings the simulator prints: those after each launch ("kernel K: N new findings ...", then indented lines)
    and its closing "== findings" section, which this tool lists instead as make grade's sanitizers row does
    (hazard_summary: one line per kind and pair of lines, the same cap and the same count). finish() prints what it
    held back (the closing section, else the per-launch lines) when that list could not be made (no report), so
    nothing is lost."""

    def __init__(self, out):
        self.out, self.names, self.held, self.in_block, self.section = out, {}, [], False, False
        self.closing = []

    def _plain(self, line: str) -> str:
        for name in set(re.findall(r"\b_Z[A-Za-z0-9_]+", line)) - set(self.names):
            self.names[name] = demangle(name)
        return re.sub(r"\b_Z[A-Za-z0-9_]+", lambda m: self.names.get(m.group(0), m.group(0)), line)

    def line(self, line: str) -> None:
        """One line of the program's stderr (with its line end)."""
        bare = line.rstrip("\n")
        if NEW_FINDINGS.match(bare):
            self.in_block = True
        elif self.in_block and not bare.startswith("ppl-sim:    "):
            self.in_block = False
        if FINDINGS_SECTION.match(bare):
            self.section = True
        elif self.section and not bare.startswith("   "):
            self.section = False  # the section's lines are indented; anything else follows it
        if self.in_block:
            self.held.append(self._plain(line))
            return
        if self.section:
            self.closing.append(self._plain(line))
            return
        self.out.write(self._plain(line))
        self.out.flush()

    def finish(self, listed: bool = False) -> None:
        """Ends the relay; listed: the findings were listed from the report, so the held lines are dropped."""
        if not listed:
            self.out.writelines(self.closing or self.held)
            self.out.flush()


def hazard_summary(report_path: Path, source: Path) -> tuple:
    """(number of hazards in the student's code, the lines that list them and sum them up; None when the run wrote
    no report) from the report the run wrote (PPL_SIM_REPORT): the list of make grade's sanitizers row, by the same
    rules (grader/sim/simulator.py hazards_found: whose each finding is, one per kind and pair of source lines, the
    races between warps first, at most MAX_HAZARDS_SHOWN), then the kit's own, then a closing line, so that make sim
    and make grade say the same hazards and the same count."""
    try:
        report = read_report(Path(report_path).read_bytes())
    except OSError:
        return 0, None
    try:
        text = Path(source).read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    mine, kits = hazards_found([report], source.name, kit=KIT, source_text=text)
    lines = [*(hazard_listing(mine, source.name) if mine else []),
             *(["in the kit's own kernels (a kit bug: tell the instructors):", *kits] if kits else [])]
    if not mine:
        return 0, lines
    places = hazard_places(mine, most=5)  # as make grade names them
    kinds = sorted({m.group(1) for m in (re.match(r"\[([a-z-]+)\]", h) for h in mine) if m})
    s = "" if len(mine) == 1 else "s"
    lines.append(f"{len(mine)} hazard{s} found ({places}: {', '.join(kinds) or 'kernel faults'}; listed above): make "
                 f"grade takes the correctness points of the groups they touch (labs.toml's hazard_cost), even where "
                 f"the answers came out right")
    return len(mine), lines


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
    if args.n and not args.args:
        problem, run = sizes_problem(args.n, run)
        if problem:
            print(f"sim.py: {problem}", file=sys.stderr)
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
    kit = build_harness_sim(KIT, pattern)  # the kit's parts first, so that their failure is not blamed on the file
    if not kit.ok:
        print(f"sim.py: {kit.message}", file=sys.stderr)
        return EXIT_BUILD
    make = ["make", "-s", "--no-print-directory", f"-j{os.cpu_count() or 1}", "-f", str(SIM_MAKEFILE), f"KIT={KIT}",
            f"PATTERN={pattern}", f"LAB_SRC={source}", f"BUILD={build}"]
    done = subprocess.run(make, cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace")
    sys.stderr.write(done.stdout)
    if done.returncode != 0:
        advice = f" {target_note(command='make sim')}" if may_need_later_gpu(done.stdout) else ""
        print(f"sim.py: {shown(source)} does not build for the simulator (the errors are above).{advice}",
              file=sys.stderr)
        return EXIT_BUILD
    (build / STAMP).write_text(source_stamp(source), encoding="utf-8")
    program = build / f"{pattern}_lab"
    # --in-process: the sandbox off, so that the simulator's counts (printed when the run ends) reach this terminal;
    # --result: which cases ran, to say which did not (not_run_note)
    result, report = build / "sim-result.jsonl", build / "sim-report.json"
    result.unlink(missing_ok=True)
    report.unlink(missing_ok=True)
    run += ["--in-process"] + ([] if "--result" in run else ["--result", str(result)])
    print(f"built in {time.monotonic() - start:.1f} s; running on the simulator"
          f"{'' if args.schedule == 'inorder' else ' under the schedule ' + args.schedule}: {shown(program)} "
          f"{shlex.join(run)}", flush=True)
    start = time.monotonic()
    relay = StderrRelay(sys.stderr)
    proc = subprocess.Popen([str(program), *run], cwd=KIT, env={**sim_env(counts=True, report=report), **schedule},
                            stderr=subprocess.PIPE, text=True, errors="replace")
    stopped = threading.Event()
    timer = threading.Timer(args.timeout, lambda: (stopped.set(), proc.kill()))
    timer.start()
    try:
        for line in proc.stderr:
            relay.line(line)
        proc.wait()
    finally:
        timer.cancel()
    hazards, listing = hazard_summary(report, source)
    relay.finish(listed=listing is not None)
    if listing:
        print("\n".join(listing), file=sys.stderr, flush=True)
    if stopped.is_set():
        print(f"sim.py: the run took more than {args.timeout:g} s and was stopped: simulating is slow at large sizes "
              f"(a kernel that never ends is stopped by the simulator's instruction limit instead, which says so); "
              f"raise --timeout, or run smaller sizes", file=sys.stderr)
        return 1
    print(f"simulated in {time.monotonic() - start:.1f} s (exit status {proc.returncode})", flush=True)
    note = not_run_note(result) if proc.returncode != 0 else ""
    if note:
        print(note, file=sys.stderr, flush=True)
    status = 1 if hazards and proc.returncode == 0 else proc.returncode
    if status == 0 and not args.no_estimate:
        start = time.monotonic()
        print(f"estimating its speed on {args.gpu} from the simulator's counts at larger sizes ...", flush=True)
        _, line = estimate_for(local_runner(program, cwd=KIT, timeout=args.timeout), labs[0], args.gpu)
        print(f"{line} [{time.monotonic() - start:.1f} s]", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
