#!/usr/bin/env python3
"""`make sim LAB=03`: build one lab for the kit's SIMT simulator and run it on the CPU, no GPU needed.

    python3 tools/sim.py --lab 03 [--submission labs|solutions|DIR] [--n 1,1025,65537] [--timeout 300]

Builds the lab's program with mk/sim.mk (the kit's harness and the lab's one file, unchanged, linked with the
simulator instead of cudart) into build/sim/SUBMISSION/LAB/, runs it on small and edge sizes (those of `make check`,
or --n), and prints the harness's lines and then the simulator's counts per kernel and source line (warp
instructions, SIMT efficiency, divergent branches, bank conflicts, global memory sectors) and its findings
(hazards). sim/README.md explains the counts.

Exit status: the program's (0 every case passed, 1 a case failed, 2 the simulator cannot run a kernel, 3 a kernel
fault such as an out-of-bounds access, with the simulator's diagnostic above); 2 when the lab does not build.
"""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
if str(KIT) not in sys.path:
    sys.path.insert(0, str(KIT))

from grader.config import ConfigError, load_config  # noqa: E402
from grader.simulator import SIM_MAKEFILE, sim_env  # noqa: E402

EXIT_BUILD = 2
DEFAULT_TIMEOUT = 300.0
SIZES = {  # one run per pattern: the small and edge sizes of `make check`, exact data where there is a choice
    "reduce": ["--data", "integer", "--n", "1,2,31,32,33,1023,1024,1025,2049,65537"],
    "scan": ["--n", "1,2,31,32,33,1023,1024,1025,2049,4097,65537"],
    "compact": ["--n", "1,2,31,32,33,1023,1024,1025,2049,65537"],
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lab", required=True, help="the lab, by prefix: 03 or 03-sequential")
    p.add_argument("--submission", default="labs", help="a folder shaped like labs/ (default: labs)")
    p.add_argument("--n", help="sizes to run instead of the default ones (the harness's --n syntax: 1,1025,2^16+1)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds for the run (default %(default)g)")
    return p.parse_args(argv)


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
    tag = submission.name if submission.parent in (KIT, KIT / "tests") else "custom"
    build = KIT / "build" / "sim" / tag / lab.name
    print(f"building {source.relative_to(submission.parent)} for the simulator (mk/sim.mk) ...", flush=True)
    start = time.monotonic()
    make = ["make", "-s", f"-j{os.cpu_count() or 1}", "-f", str(SIM_MAKEFILE), f"KIT={KIT}", f"PATTERN={pattern}",
            f"LAB_SRC={source}", f"BUILD={build}"]
    if subprocess.run(make, cwd=KIT).returncode != 0:
        print(f"sim.py: {source.name} does not build for the simulator (the errors are above)", file=sys.stderr)
        return EXIT_BUILD
    program = build / f"{pattern}_lab"
    # --in-process: no runner process, so the program exits normally and the simulator prints its counts at exit
    run = (SIZES[pattern][:-2] + ["--n", args.n] if args.n else SIZES[pattern]) + ["--in-process"]
    print(f"built in {time.monotonic() - start:.1f} s; running on the simulator: {program.relative_to(KIT)} "
          f"{' '.join(run)}", flush=True)
    start = time.monotonic()
    try:
        proc = subprocess.run([str(program), *run], cwd=KIT, env=sim_env(counts=True), timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"sim.py: the run took more than {args.timeout:g} s and was stopped (a kernel that loops forever "
              f"ends at the simulator's instruction limit; raise --timeout for large sizes)", file=sys.stderr)
        return 1
    print(f"simulated in {time.monotonic() - start:.1f} s (exit status {proc.returncode})")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
