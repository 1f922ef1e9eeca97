"""`make sanitize` (python3 -m grader.sanitize): builds each chosen lab as the grader does, runs its sanitizers
and prints the findings with file:line. grader/sanitize/__init__.py says how and what the exit statuses mean."""
import argparse
import shlex
import sys
from pathlib import Path

from grader.config import SANITIZER_TOOLS, ConfigError, load_config
from grader.patterns import KIT
from grader.run.run import EXIT_NO_DEVICE
from grader.sanitize.findings import describe, explain, read_source
from grader.sanitize.runs import (DEFAULT_TIMEOUT, NOT_INSTALLED, Outcome, UNTRUSTED, find_sanitizer,
                                  run_sanitizers)


EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_NO_TOOL = 0, 1, 2, 3


# ---- make sanitize ----

def print_outcome(outcome: Outcome, source: str, out, kit=KIT, source_path=None) -> int:
    """Prints each run's findings, student's first; returns the number of findings in the student's file."""
    source_lines = read_source(source_path).splitlines()
    for r in outcome.runs:
        head = f"  {r.tool:<10} {shlex.join(r.args)}: "
        mine = [f for f in r.findings if f.origin == "student"]
        theirs = [f for f in r.findings if f.origin != "student"]
        if r.status in ("timeout", "crash", "error", "no-device", *UNTRUSTED):
            print(head + (r.message or r.status), file=out)
        elif not mine:
            print(head + f"nothing in {source}" + (f" ({r.message})" if r.message else ""), file=out)
        else:
            print(head + f"{len(mine)} finding{'s' if len(mine) > 1 else ''} in {source}", file=out)
        for f in mine:
            print(f"    {describe(f, source, kit, source_lines)}", file=out)
            print(f"      {explain(f)}", file=out)
            for d in f.details[:2]:
                print(f"      {d}", file=out)
        for f in theirs:
            print(f"    in the kit (a kit bug, not yours): {describe(f, source, kit)}", file=out)
        if r.parsed.api_errors and mine:
            print(f"      then: {'; '.join(r.parsed.api_errors[:2])}", file=out)
        if r.findings or r.status != "clean":
            print(f"      (the tool's log: {r.log}; the program's output: {r.output})", file=out)
    return len(outcome.findings("student")) + sum(r.status in UNTRUSTED for r in outcome.runs)


def with_sizes(run, sizes: str | None) -> list:
    """The argument list run with its --n list replaced by sizes (added when it has none); run itself without."""
    run = list(run)
    if not sizes:
        return run
    if "--n" in run:
        k = run.index("--n")
        return run[:k] + ["--n", sizes] + run[k + 2:]
    return run + ["--n", sizes]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lab", help="the lab: its number or name, matched by prefix (04, 04-unrolled)")
    p.add_argument("--submission", default="labs", help="a folder shaped like labs/ (default: labs)")
    p.add_argument("--tools", help=f"some of {','.join(SANITIZER_TOOLS)} (default: those of labs.toml)")
    p.add_argument("--n", help="sizes instead of labs.toml's (a --n list: 1,33,1025)")
    p.add_argument("--timeout", type=float, help="seconds per tool (default: labs.toml's)")
    p.add_argument("--seed", type=int, default=1, help="the data seed (default 1)")
    p.add_argument("--build-dir", help="where the labs are built (default: build/sanitize)")
    p.add_argument("--config", help="the labs file (default: grader/labs.toml)")
    return p.parse_args(argv)


def main(argv=None, *, kit=KIT, out=None, sanitizer=None, gpu_lister=None) -> int:
    """`make sanitize`: builds each chosen lab as the grader does, runs its sanitizers and prints the findings.
    sanitizer (the tool's path) and gpu_lister (grader.run.no_gpu.nvidia_smi) are hooks for tests."""
    from grader.compile import build as build_mod  # here: the grader's build is not needed to read or score outputs
    from grader.run import lifetime, no_gpu
    with lifetime.stop_on_signals():  # SIGTERM, or make's end: the checkers and their tools end too
        lifetime.watch_starter()
        return _main(argv, kit, out or sys.stdout, sanitizer, gpu_lister or no_gpu.nvidia_smi, build_mod)


def _main(argv, kit, out, sanitizer, gpu_lister, build_mod) -> int:
    from grader.run import no_gpu
    args = parse_args(argv)
    try:
        config = load_config(args.config) if args.config else load_config()
        labs = config.select(args.lab) if args.lab else None
    except ConfigError as e:
        print(f"make sanitize: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not labs:
        print(f"make sanitize needs a lab: make sanitize LAB=04 (the labs: "
              f"{', '.join(lab.name for lab in config.labs)})", file=sys.stderr)
        return EXIT_USAGE
    tools = args.tools.split(",") if args.tools else None
    if tools and any(t not in SANITIZER_TOOLS for t in tools):
        print(f"make sanitize: --tools: the tools are {', '.join(SANITIZER_TOOLS)}", file=sys.stderr)
        return EXIT_USAGE
    submission = Path(args.submission)
    if not submission.is_dir():
        print(f"make sanitize: SUBMISSION={args.submission}: no such folder", file=sys.stderr)
        return EXIT_USAGE
    sanitizer = sanitizer or find_sanitizer()
    if not sanitizer:
        listed, said = gpu_lister()
        if not listed:  # no GPU either: what would run it is missing too, and the simulator is the way here
            print(f"{no_gpu.message('sanitize', labs[0].name, submission, reason=said)}\n"
                  f"{NOT_INSTALLED.replace(' here ', ' here either ', 1)}.", file=out)
            return EXIT_NO_DEVICE
        print(f"make sanitize: {NOT_INSTALLED}", file=sys.stderr)
        return EXIT_NO_TOOL
    build_root = Path(args.build_dir) if args.build_dir else Path(kit) / "build" / "sanitize"
    found = 0
    for pattern in dict.fromkeys(lab.pattern for lab in labs):
        harness = build_mod.build_harness(kit, pattern)
        if not harness.ok:
            print(harness.message, file=out)
            return EXIT_USAGE
    for lab in labs:
        spec = lab.sanitizers
        if spec is None:
            print(f"{lab.name}: labs.toml gives this lab no sanitizers", file=out)
            continue
        source = submission / lab.name / lab.source
        built = build_mod.build_lab(kit, lab.pattern, source, build_root / lab.name)
        if not built.ok:
            print(built.message, file=out)
            return EXIT_USAGE
        runs = [[*with_sizes(r, args.n), *lab.args, "--seed", str(args.seed)] for r in spec.runs]
        print(f"make sanitize: lab {lab.name}, {source} ({', '.join(tools or spec.tools)})", file=out, flush=True)
        outcome = run_sanitizers(built.program, runs, tools=tools or spec.tools,
                                 timeout=args.timeout or spec.timeout or DEFAULT_TIMEOUT,
                                 workdir=build_root / lab.name / "runs", cwd=kit, source=lab.source,
                                 source_path=built.program.parent / lab.source, kit=kit, sanitizer=sanitizer)
        if outcome.no_device:
            print(no_gpu.message("sanitize", lab.name, submission), file=out)
            return EXIT_NO_DEVICE
        mine = print_outcome(outcome, lab.source, out, kit, built.program.parent / lab.source)
        found += mine
        print(f"lab {lab.name}: {'no findings' if not mine else f'{mine} finding' + ('s' if mine > 1 else '')} in "
              f"{lab.source}", file=out)
    return EXIT_FINDINGS if found else EXIT_CLEAN
