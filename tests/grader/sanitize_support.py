"""What the sanitizer tests share (test_sanitize*.py): the recorded and constructed outputs of sanitizer_samples/,
read and classified, and Outcomes made of them."""
from pathlib import Path

from grader.config import Sanitizers
from grader.sanitize import runs
from grader.sanitize.findings import classify
from grader.sanitize.parse import parse_output
from tests.grader.fakes import KIT

SAMPLES = Path(__file__).resolve().parent / "sanitizer_samples"
STUDENT = "/home/grader/build/grade/04-unrolled/reduce.cu"  # an absolute path, as the kit's builds record it
SPEC = Sanitizers(points=10, tools=("memcheck", "racecheck"), runs=(("--n", "1,33"),), timeout=60)
# What the student's copy holds at the sample's lines 47-50 (the volatile last warp): quoted in the report.
VOLATILE_SOURCE = "\n" * 46 + "        v[t] += v[t + 32];\n        v[t] += v[t + 16];\n        v[t] += v[t + 8];\n"


def sample(name: str, student: str = STUDENT, kit=KIT) -> str:
    return (SAMPLES / name).read_text().replace("{STUDENT}", student).replace("{KIT}", str(kit))


def parsed(name: str, tool: str, source: str = "reduce.cu", student: str = STUDENT):
    result = parse_output(sample(name, student), tool)
    classify(result.findings, source, KIT)
    return result


def outcome_of(*samples, sanitizer="/opt/cuda/bin/compute-sanitizer", status=None):
    """A runs.Outcome whose runs read the given (sample, tool) pairs."""
    outcome = runs.Outcome(sanitizer)
    for name, tool in samples:
        p = parsed(name, tool)
        run = runs.ToolRun(tool, ["--n", "1,33"], status or ("findings" if p.findings else "clean"), p)
        outcome.runs.append(run)
    return outcome
