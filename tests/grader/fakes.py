"""Test helpers: fake harness programs (small Python scripts) and small labs.toml files written to a temp folder."""
import os
import stat
import sys
import textwrap
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]

# Every fake starts with this: it reads the arguments as the real harness does and can write result lines.
PRELUDE = f"""#!{sys.executable}
import json, os, signal, subprocess, sys, time
sys.path.insert(0, {str(KIT)!r})
from grader.run import case_names
ARGS = sys.argv[1:]
def opt(name, default=None):
    return ARGS[ARGS.index(name) + 1] if name in ARGS else default
RESULT = opt("--result")
CASES = case_names(ARGS)
def emit(case, status="pass", kind="check", **fields):
    with open(RESULT, "a") as f:
        f.write(json.dumps({{"case": case, "kind": kind, "status": status, **fields}}) + "\\n")
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


def fake_program(folder, *bodies: str, name: str = "fake_lab") -> Path:
    """Writes an executable fake harness: PRELUDE, then the bodies, each dedented (Python that may use ARGS, CASES,
    emit, bench and all_pass)."""
    path = Path(folder) / name
    path.write_text(PRELUDE + "".join(textwrap.dedent(b).strip("\n") + "\n" for b in bodies), encoding="utf-8")
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


def make_submission(folder, labs, text: str = "// a student's file\n") -> Path:
    """A submission folder with labs/<lab>/reduce.cu for each lab name."""
    for lab in labs:
        write_file(folder, f"{lab}/reduce.cu", text)
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
