"""Test helpers: fake harness programs (small Python scripts) and small labs.toml files written to a temp folder."""
import os
import re
import stat
import sys
import textwrap
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]

# Every fake starts with this: it reads the arguments, names its cases in the real harness's style (test data only:
# the grader takes the names from the plan line, never from the arguments), with the arguments that rerun each case
# as the real harness writes them, and, like the real harness, writes its plan line first (unless made with
# plan=False). Then the bodies may write result lines. Like the real harness it takes the grader's pipes: the result lines go to --result-fd (or the file --result), and SEED is what --seed-fd
# carried (or --seed). (-S and few imports: a fake starts fast, and the tests start hundreds.)
PRELUDE = f"""#!{sys.executable} -S
import json, os, signal, sys, time
ARGS = sys.argv[1:]
def opt(name, default=None):
    return ARGS[ARGS.index(name) + 1] if name in ARGS else default
RESULT = opt("--result")
RESULT_FD = int(opt("--result-fd")) if "--result-fd" in ARGS else None
SEED = os.read(int(opt("--seed-fd")), 64).decode().strip() if "--seed-fd" in ARGS else opt("--seed")
if "--bench" in ARGS:
    CASES = ["bench n=" + opt("--bench")]
elif "--dataset" in ARGS:
    CASES = [opt("--dataset")]
else:
    CASES = [f"n={{n}} {{opt('--data', 'uniform')}}" for n in opt("--n", "1,1000").split(",")]
def write_raw(text):
    if RESULT_FD is not None:
        os.write(RESULT_FD, text.encode())
    else:
        with open(RESULT, "a") as f:
            f.write(text)
RUN = int(opt("--ppl-run")) if "--ppl-run" in ARGS else None
def write(obj):
    if RUN is not None:
        obj = {{"run": RUN, **obj}}
    write_raw(json.dumps(obj) + "\\n")
def next_lists(fd):  # the lists of --runs-fd, each taken once it is whole, as the real checker reads them
    pending, current = b"", []
    while chunk := os.read(fd, 65536):
        pending += chunk
        *args, pending = pending.split(b"\\0")
        for arg in args:
            if arg:
                current.append(arg.decode())
            else:
                yield current
                current = []
if "--runs-fd" in ARGS:  # the checker's --runs-fd: each list run as a fake of its own, as the real one runs each
    import subprocess
    for k, args in enumerate(next_lists(int(opt("--runs-fd")))):
        limit = float(args[args.index("--timeout") + 1]) if "--timeout" in args else None
        child = subprocess.Popen([sys.argv[0], *args, "--ppl-run", str(k), "--result-fd", str(RESULT_FD),
                                  *(["--seed", SEED] if SEED else [])], pass_fds=[RESULT_FD])
        try:
            rc = child.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            RUN = k
            write({{"case": "?", "kind": "error", "status": "timeout", "message": "timed out"}})
            rc = 124
        RUN = k
        write({{"case": "run", "kind": "run-end", "status": "pass" if rc == 0 else "fail", "exit": rc}})
        RUN = None
        if rc in (124, 77):
            sys.exit(rc)
    sys.exit(0)
def rerun_of(case):  # the arguments the real harness writes with a case of this name (harness/checker/results.h)
    words = case.split()
    if len(words) < 2 or not words[0].startswith("n="):
        return None
    n = ["--n", words[0][2:]]
    if len(words) == 2:
        return n + ["--data", words[1]]
    if len(words) == 4:
        return n + ["--algorithms", words[2], "--kinds", words[3]]
    if len(words) == 3 and words[2].startswith("threshold="):
        return n + ["--thresholds", words[2].split("=", 1)[1]]
    return None
def plan(cases=None):
    cases = CASES if cases is None else cases
    write({{"case": "plan", "kind": "plan", "cases": cases, "reruns": [rerun_of(c) for c in cases]}})
def emit(case, status="pass", kind="check", **fields):
    rerun = {{"rerun": rerun_of(case)}} if rerun_of(case) else {{}}
    write({{"case": case, "kind": kind, "status": status, **rerun, **fields}})
def bench(speedup, status="pass", message="timed"):
    emit(CASES[0], status, "bench", student_ms=1.0 / speedup, baseline_ms=1.0, speedup=speedup, spread=0.01,
         samples=10, device="NVIDIA Fake GPU", sm="9.0", message=message)
    sys.exit(0 if status == "pass" else 1)
def all_pass():
    for c in CASES:
        emit(c, message="sum ok")
    sys.exit(0)
"""

PASS = "if '--bench' in ARGS: bench(100.0)\nall_pass()"


def fake_program(folder, *bodies: str, name: str = "fake_lab", plan: bool = True) -> Path:
    """Writes an executable fake harness: PRELUDE, the plan line of CASES (when plan), then the bodies, each
    dedented (Python that may use ARGS, CASES, SEED, opt, plan, emit, write_raw, bench and all_pass)."""
    path = Path(folder) / name
    text = PRELUDE + ("plan()\n" if plan else "")
    path.write_text(text + "".join(textwrap.dedent(b).strip("\n") + "\n" for b in bodies), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


SMALL_TOML = """
[calibration]
gpu = "NVIDIA H200"
calibrated_on = "test"

[[suites.s.groups]]
name = "small"
points = 10
runs = [["--data", "uniform", "--n", "1,2,3"]]

[[suites.s.groups]]
name = "exact"
points = 20
runs = [["--data", "integer", "--n", "5,6"], ["--data", "signs", "--n", "7"]]

[labs.01-first]
pattern = "reduce"
source = "reduce.cu"
suite = "s"

[labs.01-first.performance]
points = 30
bench = "2^10"
lower = 1.0
full = 3.0

[labs.02-second]
pattern = "reduce"
source = "reduce.cu"
suite = "s"

[labs.02-second.performance]
points = 30
bench = "2^10"
lower = 1.0
full = 3.0
"""


def write_file(folder, name: str, text: str) -> Path:
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_submission(folder, labs, text: str = "// a student's file\n", source: str = "reduce.cu") -> Path:
    """A submission folder with <lab>/<source> for each lab name (a lab given as (name, source) has its own)."""
    for lab in labs:
        name, file = lab if isinstance(lab, tuple) else (lab, source)
        write_file(folder, f"{name}/{file}", text)
    return Path(folder)


def process_gone(pid: int) -> bool:
    """True when pid no longer runs (gone, or a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except OSError:
        return not os.path.exists(f"/proc/{pid}")


def kit_labs_text() -> str:
    """grader/labs.toml's text with every pattern's suite written in as its [suites.NAME] tables (what the grader
    reads from patterns/NAME/pattern.toml's [suite]), in the order of the labs (the reductions' first), for tests
    that edit a group's text: a labs file that writes a suite writes the whole suite (config.with_pattern_suites)."""
    text = (KIT / "grader" / "labs.toml").read_text()
    names = list(dict.fromkeys(re.findall(r'^pattern = "(\w+)"', text, re.M)))
    for name in names:
        lines = (KIT / "patterns" / name / "pattern.toml").read_text().splitlines()
        first = next(k for k, line in enumerate(lines) if line.startswith(("[[suite.", "[suite.")))
        suite = "\n".join(lines[first:]).replace("[[suite.", f"[[suites.{name}.").replace("[suite.", f"[suites.{name}.")
        text += f"\n{suite}\n"
    return text
