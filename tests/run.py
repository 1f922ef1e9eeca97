#!/usr/bin/env python3
"""Run every test suite of the kit (`make test`) and print one closing line: `tests: N passed, M failed, K skipped`.

Suites, in order:
  harness   Check unit tests of the C harness (tests/harness, `make -C tests/harness check`)
  grader    unittest tests of the Python grader (tests/grader)
  build     every lab and every solution compiles with nvcc against the harness
  drift     labs/ is exactly what tools/make_skeletons.py derives from solutions/
  selfstudy tests of make check and make profile (tests/selfstudy), with fake programs and recorded ncu output
  gpu       end-to-end grading on a GPU (tests/gpu); skipped, saying so, where there is no GPU

`--only NAME[,NAME]` runs some suites. Each suite's own output is shown as it runs. Exit status 1 if any test
failed, 0 otherwise.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT / "tools"))
from kitlabs import lab_dirs, lab_settings  # noqa: E402


class Tally:
    """Counts of one suite."""

    def __init__(self, passed=0, failed=0, skipped=0, note=""):
        self.passed, self.failed, self.skipped, self.note = passed, failed, skipped, note


def run(cmd, **kwargs):
    """Run cmd from the kit root, echoing its output; return (exit status, output)."""
    proc = subprocess.run(cmd, cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
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


def unittest_suite(directory, verbose=False):
    """unittest's `Ran N tests` and `OK (skipped=K)` / `FAILED (failures=F, errors=E, skipped=K)`. A class that
    skips as a whole (no GPU) counts as one skipped test, with its reason as the suite's note."""
    status, out = run([sys.executable, "-m", "unittest", "discover", "-s", directory, "-t", "."]
                      + (["-v"] if verbose else []))
    ran = re.search(r"^Ran (\d+) tests?", out, re.M)
    if not ran:
        return Tally(failed=1, note=f"unittest printed no summary (exit {status})")
    total = int(ran.group(1))
    counts = {k: int(v) for k, v in re.findall(r"(failures|errors|skipped|expected failures)=(\d+)", out)}
    failed = counts.get("failures", 0) + counts.get("errors", 0)
    if status != 0 and failed == 0:
        failed = 1
    skipped = counts.get("skipped", 0)
    reasons = sorted(set(re.findall(r"skipped '([^']*)'", out)))
    return Tally(passed=max(0, total - failed - skipped), failed=failed, skipped=skipped, note="; ".join(reasons))


def suite_build():
    """Each lab and solution builds (one test each), against one shared harness build per pattern."""
    if not shutil.which(os.environ.get("NVCC", "nvcc")):
        return Tally(skipped=1, note="nvcc not found: install the CUDA toolkit to compile the labs")
    tally = Tally()
    built_harness = set()
    for root in ("solutions", "labs"):
        for lab in lab_dirs(KIT / root):
            settings = lab_settings(lab)
            make = ["make", "-s", "-f", "mk/lab.mk", f"KIT={KIT}", f"PATTERN={settings['PATTERN']}"]
            if settings["PATTERN"] not in built_harness:
                status, _ = run(make + ["-j2", "harness"])
                if status != 0:
                    return Tally(failed=1, note=f"the {settings['PATTERN']} harness does not compile")
                built_harness.add(settings["PATTERN"])
            rel = (lab / settings["LAB_SRC"]).relative_to(KIT)
            proc = subprocess.run(make + [f"LAB_SRC={KIT / rel}", f"BUILD={KIT / 'build' / 'test-build' / rel.parent}"],
                                  cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            print(f"  {'ok  ' if proc.returncode == 0 else 'FAIL'} builds: {rel}")
            if proc.returncode == 0:
                tally.passed += 1
            else:
                print(proc.stdout)
                tally.failed += 1
    return tally


def suite_drift():
    status, _ = run([sys.executable, "tools/make_skeletons.py", "--check"])
    return Tally(passed=status == 0, failed=status != 0)


SUITES = {
    "harness": suite_harness,
    "grader": lambda: unittest_suite("tests/grader"),
    "build": suite_build,
    "drift": suite_drift,
    "selfstudy": lambda: unittest_suite("tests/selfstudy"),
    "gpu": lambda: unittest_suite("tests/gpu", verbose=True),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated suites: " + ",".join(SUITES))
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(SUITES)
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        parser.error(f"unknown suite(s): {', '.join(unknown)}")
    results = {}
    for name in names:
        print(f"\n=== {name}", flush=True)
        start = time.monotonic()
        results[name] = SUITES[name]()
        results[name].seconds = time.monotonic() - start
    print("\nsuite      passed  failed  skipped  seconds")
    for name, t in results.items():
        print(f"{name:<10} {t.passed:>6}  {t.failed:>6}  {t.skipped:>7}  {t.seconds:>7.1f}  {t.note}")
    total = Tally(*(sum(getattr(t, k) for t in results.values()) for k in ("passed", "failed", "skipped")))
    print(f"tests: {total.passed} passed, {total.failed} failed, {total.skipped} skipped")
    return 1 if total.failed else 0


if __name__ == "__main__":
    sys.exit(main())
