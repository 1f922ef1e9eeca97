#!/usr/bin/env python3
"""Run the kit's test suites (`make test`, `make test-all`) and print one closing line: `tests: N passed, M failed,
K skipped`.

`make test` (no options) runs every suite but the slow ones, two at a time, and in each suite skips the tests marked
slow (tests/timing.py's `slow`: a whole lab on the simulator, a class run), saying so: every component is tested in
about 8 minutes on 2 cores. `make test-all` (--all: PPL_TEST_ALL=1) runs everything, the slow suites (attacks,
fresh) and the slow tests too: what CI runs (.ci/run). Each unittest suite ends with its slowest tests.

The suites mirror the tree (tests/X tests X). In order:
  harness     Check unit tests of the C harness (tests/harness, `make -C tests/harness check`)
  grader      unittest tests of the Python grader, one submission (tests/grader/test_*.py)
  classroom   grading a whole class (tests/grader/classroom): uploads, the gradebook, reruns, and a real single-node
              Slurm (skipped, saying why, without slurm-wlm or root)
  build       every solution and its skeleton compile with nvcc against the harness (the skeletons derived from
              solutions/ into build/test-build/skeleton-src: labs/ may hold a student's work, done or not; the student
              release, without solutions/, builds labs/ as it is)
  student     the students' tools (tests/tools/student, tests/tools/test_setup.py): make check, make profile, make
              bench, tools/setup.sh, with fake programs and recorded ncu output
  instructor  the instructors' tools (tests/tools/instructor): make dist (the student release leaks no solution),
              make gradescope (a valid results.json always), make calibrate's thresholds, make class-uploads, make
              regrade-bench, the known-wrong submissions
  author      the authors' tools (tests/tools/author): labs/ is what tools/author/make_skeletons.py derives from
              solutions/ (a student's filled-in labs/ is not drift), the handouts' links and figures (regenerated
              byte for byte), `make handouts` (needs pandoc), make sim-compare (its real simulator run needs nvcc)
  sim         the CPU simulator, no GPU needed: Check tests of its core (`make -C sim test-core`) and of its CUDA
              runtime (`make -C tests/sim/runtime check`), then tests/sim: `python3 -m grader --simulator` on the
              solutions, the blank labs and the run-time bugs of tools/instructor/variants/, and make sim (needs
              nvcc, libzstd-dev and Check)
  gpu         end-to-end grading on a GPU (tests/gpu); skipped, saying so, where there is no GPU
  attacks     hostile lab submissions (tests/attacks), each graded in a throwaway copy of the kit: the verdict
              attacks.toml expects and no effect outside the sandbox (needs nvcc; about 4 minutes on 2 cores)
  fresh       each person's README commands on fresh Debian 12 roots (tests/fresh: mmdebstrap, user namespaces, the
              network; root): slow (about 9 minutes on 2 cores, the root tarballs cached), so it runs only when named
              (--only fresh, make test-fresh; CI runs it)
The former names still work: class (classroom), selfstudy (student), dist (instructor), drift and handouts (author).

`--only NAME[,NAME]` runs some suites (their slow tests too with --all); `--jobs N` how many at once (default 2).
Each suite's output is shown when it ends. Exit status 1 if any test failed, 0 otherwise.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))  # the one sys.path edit: run as a script, tests/run.py imports the kit's packages
from grader.config import load_config  # noqa: E402
from grader.patterns import lab_dirs  # noqa: E402


class Tally:
    """Counts of one suite."""

    def __init__(self, passed=0, failed=0, skipped=0, note=""):
        self.passed, self.failed, self.skipped, self.note = passed, failed, skipped, note


SHOWN = threading.local()  # .lines: the running suite's output, shown when it ends (suites run side by side)


def show(text: str) -> None:
    """Text for the suite's output: kept until the suite ends when suites run side by side, else printed."""
    if getattr(SHOWN, "lines", None) is not None:
        SHOWN.lines.append(text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def run(cmd, **kwargs):
    """Run cmd from the kit root, keeping its output for the suite's (show); return (exit status, output)."""
    proc = subprocess.run(cmd, cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    show(proc.stdout)
    return proc.returncode, proc.stdout


def suite_harness():
    """Check's summary lines: `100%: Checks: 12, Failures: 0, Errors: 0`."""
    status, out = run(["make", "-s", "-C", "tests/harness", "check"])
    found = re.findall(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)", out)
    if not found:
        return Tally(failed=1, note=f"no Check summary (make exited {status})")
    checks = sum(int(c) for c, _, _ in found)
    bad = sum(int(f) + int(e) for _, f, e in found)
    if status != 0 and bad == 0:
        bad = 1
    return Tally(passed=checks - bad, failed=bad)


def test_modules(directory, files="test_*.py") -> list:
    """The test modules of one folder (not its subfolders, which are suites of their own), as dotted names."""
    return [".".join(p.relative_to(KIT).with_suffix("").parts) for p in sorted((KIT / directory).glob(files))]


def unittest_suite(*places, verbose=False):
    """unittest over places (folders, or folder/file patterns), each folder's own test modules: unittest's last
    `Ran N tests` and `OK (skipped=K)` / `FAILED (failures=F, errors=E, skipped=K)` (a test that runs unittest in a
    copy of the kit may quote the inner ones in its message). A class that skips as a whole (no GPU) counts as one
    skipped test, with its reason as the suite's note."""
    modules = []
    for place in places:
        folder, _, files = place.partition(":")
        modules += test_modules(folder, files or "test_*.py") if (KIT / folder).is_dir() else []
    if not modules:  # the student release leaves some suites out
        return Tally(skipped=1, note=f"{', '.join(places)}: not in this copy of the kit")
    status, out = run([sys.executable, "-m", "tests.timing"] + (["-v"] if verbose else []) + modules)
    ran = re.findall(r"^Ran (\d+) tests?", out, re.M)
    verdicts = re.findall(r"^(?:OK|FAILED)(?: \((.*)\))?$", out, re.M)
    if not ran:
        return Tally(failed=1, note=f"unittest printed no summary (exit {status})")
    total = int(ran[-1])
    counts = {k: int(v) for k, v in re.findall(r"(failures|errors|skipped|expected failures)=(\d+)",
                                               verdicts[-1] if verdicts else "")}
    failed = counts.get("failures", 0) + counts.get("errors", 0)
    if status != 0 and failed == 0:
        failed = 1
    skipped = counts.get("skipped", 0)
    reasons = sorted(set(re.findall(r"skipped '([^']*)'", out)))
    return Tally(passed=max(0, total - failed - skipped), failed=failed, skipped=skipped, note="; ".join(reasons))


def suite_build():
    """Each solution and skeleton builds (one test each), against one shared harness build per pattern."""
    if not shutil.which(os.environ.get("NVCC", "nvcc")):
        return Tally(skipped=1, note="nvcc not found: install the CUDA toolkit to compile the labs")
    tally = Tally()
    built_harness = set()
    if (KIT / "tools" / "author" / "make_skeletons.py").is_file() and lab_dirs(KIT / "solutions"):
        from tools.author.make_skeletons import derive
        roots = {"solutions": KIT / "solutions", "skeletons": derive(KIT / "build" / "test-build" / "skeleton-src")}
    else:  # the student release
        roots = {"labs": KIT / "labs"}
    config = load_config()
    for root, folder in roots.items():
        for lab in lab_dirs(folder):
            facts = config.named(lab.name)
            if facts is None:
                show(f"  FAIL builds: {root}/{lab.name} is not a lab of grader/labs.toml\n")
                tally.failed += 1
                continue
            make = ["make", "-s", "-f", "mk/lab.mk", f"KIT={KIT}", f"PATTERN={facts.pattern}"]
            if facts.pattern not in built_harness:
                status, _ = run(make + ["-j2", "harness"])
                if status != 0:
                    return Tally(failed=1, note=f"the {facts.pattern} harness does not compile")
                built_harness.add(facts.pattern)
            source, rel = lab / facts.source, Path(root) / lab.name / facts.source
            proc = subprocess.run(make + [f"LAB_SRC={source}", f"BUILD={KIT / 'build' / 'test-build' / rel.parent}"],
                                  cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            show(f"  {'ok  ' if proc.returncode == 0 else 'FAIL'} builds: "
                 f"{rel if root != 'skeletons' else f'the skeleton of solutions/{lab.name}/{source.name}'}\n")
            if proc.returncode == 0:
                tally.passed += 1
            else:
                show(proc.stdout + "\n")
                tally.failed += 1
    return tally


def suite_sim():
    """The simulator's Check tests (core, then runtime), then tests/sim; nvcc makes their programs and PTX."""
    if not shutil.which(os.environ.get("NVCC", "nvcc")):
        return Tally(skipped=1, note="nvcc not found: install the CUDA toolkit to build programs for the simulator")
    tally = Tally()
    for cmd in (["make", "-s", "-C", "sim", "test-core"], ["make", "-s", "-C", "tests/sim/runtime", "check"]):
        status, out = run(cmd)
        found = re.findall(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)", out)
        bad = sum(int(f) + int(e) for _, f, e in found)
        tally.passed += sum(int(c) for c, _, _ in found) - bad
        tally.failed += bad + (1 if status != 0 and bad == 0 else 0)
    e2e = unittest_suite("tests/sim", verbose=True)
    tally.passed, tally.failed, tally.skipped = (tally.passed + e2e.passed, tally.failed + e2e.failed,
                                                 tally.skipped + e2e.skipped)
    tally.note = e2e.note
    return tally


SUITES = {
    "harness": suite_harness,
    "grader": lambda: unittest_suite("tests/grader"),
    "classroom": lambda: unittest_suite("tests/grader/classroom", verbose=True),
    "build": suite_build,
    "student": lambda: unittest_suite("tests/tools/student", "tests/tools"),
    "instructor": lambda: unittest_suite("tests/tools/instructor"),
    "author": lambda: unittest_suite("tests/tools/author", verbose=True),
    "sim": suite_sim,
    "gpu": lambda: unittest_suite("tests/gpu", verbose=True),
    "attacks": lambda: unittest_suite("tests/attacks", verbose=True),
    "fresh": lambda: unittest_suite("tests/fresh", verbose=True),
}
SLOW = ("attacks", "fresh")  # make test-all's (--all), or when named: not part of a plain `make test`
# Started first, so that the longest suites do not end the run alone (a clean clone on 2 cores: sim 315 s, grader
# 242 s, classroom 191 s, instructor 101 s, the others under 25 s, 459 s in all; attacks and fresh some minutes
# each). Instructor goes when sim ends, beside classroom, rather than last and alone.
LONGEST_FIRST = ("fresh", "attacks", "sim", "grader", "classroom", "instructor", "author")
ALIASES = {"class": "classroom", "selfstudy": "student", "dist": "instructor", "drift": "author",
           "handouts": "author"}  # the suites' names before tests/ mirrored the tree


def run_suite(name: str, side_by_side: bool) -> Tally:
    """One suite, timed; its output shown as one block when it ends (side_by_side) or as it comes."""
    SHOWN.lines = [] if side_by_side else None
    if not side_by_side:
        print(f"\n=== {name}", flush=True)
    start = time.monotonic()
    try:
        tally = SUITES[name]()
    except Exception as e:  # a bug of the suite itself: the others go on
        tally = Tally(failed=1, note=f"the suite broke: {e!r}")
    tally.seconds = time.monotonic() - start
    if side_by_side:
        with PRINT_LOCK:
            print(f"\n=== {name} ({tally.seconds:.0f} s)\n" + "".join(SHOWN.lines), flush=True)
    return tally


PRINT_LOCK = threading.Lock()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated suites: " + ",".join(SUITES))
    parser.add_argument("--all", action="store_true", help="every suite and every slow test (make test-all; CI)")
    parser.add_argument("--jobs", type=int, default=2, help="suites run at once (default 2)")
    args = parser.parse_args(argv)
    names = (list(dict.fromkeys(ALIASES.get(n, n) for n in args.only.split(","))) if args.only
             else [n for n in SUITES if args.all or n not in SLOW])
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        parser.error(f"unknown suite(s): {', '.join(unknown)}")
    if args.all:
        os.environ["PPL_TEST_ALL"] = "1"  # tests/timing.py's slow tests run too
    jobs, began = max(1, min(args.jobs, len(names))), time.monotonic()
    order = sorted(names, key=lambda n: LONGEST_FIRST.index(n) if n in LONGEST_FIRST else len(LONGEST_FIRST))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        tallies = dict(zip(order, pool.map(lambda name: run_suite(name, jobs > 1), order)))
    results = {name: tallies[name] for name in names}
    wall = time.monotonic() - began
    print("\nsuite      passed  failed  skipped  seconds")
    for name, t in results.items():
        print(f"{name:<10} {t.passed:>6}  {t.failed:>6}  {t.skipped:>7}  {t.seconds:>7.1f}  {t.note}")
    total = Tally(*(sum(getattr(t, k) for t in results.values()) for k in ("passed", "failed", "skipped")))
    print(f"tests: {total.passed} passed, {total.failed} failed, {total.skipped} skipped in {wall:.0f} s "
          f"({jobs} suites at a time{'; every slow test too' if args.all else ''})")
    return 1 if total.failed else 0


if __name__ == "__main__":
    sys.exit(main())
