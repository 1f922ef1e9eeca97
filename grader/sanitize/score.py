"""The grade's "sanitizers" row: FAIL with every finding in the student's file (file:line, explained), a kit bug
reported as such and costing nothing, and an unreadable or incomplete log failing the row rather than excusing it."""
import shlex
from dataclasses import dataclass

from grader.patterns import KIT
from grader.run import NO_DEVICE_MESSAGE
from grader.sanitize.findings import NAME, describe, explain, finding_data, read_source
from grader.sanitize.runs import NOT_INSTALLED, Outcome, UNTRUSTED
from grader.score import TestResult

# ---- the grade's row ----

@dataclass
class SanitizerResult(TestResult):
    """The sanitizers row. excused: not run, or not conclusive, for a reason that is not the student's doing
    (compute-sanitizer missing, a tool slower than its timeout, a tool that could not check): its points are given and
    it does not stop performance, so it counts as full."""

    excused: bool = False

    @property
    def full(self) -> bool:
        return self.excused or super().full


def reproduce_line(lab: str, submission_hint: str = "") -> str:
    return f"to see them yourself: make sanitize LAB={lab[:2]}{submission_hint}"


def score_sanitizers(lab: str, spec, outcome: Outcome, source: str, kit=KIT, source_path=None) -> TestResult:
    """The sanitizers row from an Outcome: FAIL (0 points) with every finding in the student's file, each on a line
    with its file:line and what to do; otherwise its points, with findings in the kit reported as kit bugs."""
    points = spec.points
    tools = ", ".join(spec.tools)
    if outcome.sanitizer is None:
        return SanitizerResult(lab, NAME, points, points, "not run", f"not run: {NOT_INSTALLED}; nothing is held "
                               f"against {source} for it", excused=True)
    if outcome.no_device:
        return TestResult(lab, NAME, points, 0.0, "not run", NO_DEVICE_MESSAGE)
    source_lines = read_source(source_path).splitlines()
    student, kit_side, untraced = outcome.findings("student"), outcome.findings("kit"), outcome.findings("unknown")
    inconclusive = [r for r in outcome.runs if r.status in ("timeout", "crash", "error")]
    untrusted = [r for r in outcome.runs if r.status in UNTRUSTED]
    data = {"sanitizer_findings": [finding_data(f, source, kit) for f in student],
            "kit_findings": [finding_data(f, source, kit) for f in kit_side + untraced],
            "tools": [{"tool": r.tool, "status": r.status, "seconds": round(r.seconds, 1)} for r in outcome.runs]}
    notes = []
    if kit_side:
        notes.append(f"In the kit's own code (a kit bug, not {source}'s; nothing is held against you for it, tell "
                     f"the instructors):")
        notes.extend(f"- {describe(f, source, kit)}" for f in kit_side)
    if untraced:
        notes.append("Not traced to any source line (nothing is held against you for these):")
        notes.extend(f"- {describe(f, source, kit)}" for f in untraced)
    for r in outcome.runs:
        if r.status == "clean" and r.message:
            notes.append(f"note: {r.tool} {r.message} (the groups above judge the answers)")
    for r in inconclusive:
        notes.append(f"note: {r.tool} {r.message.splitlines()[0] if r.message else r.status} (sanitizers slow "
                     f"kernels down 10 to 100 times; not held against you)")
    api = sorted({e for r in outcome.runs for e in r.parsed.api_errors})
    if student:
        lines = [f"compute-sanitizer ({tools}) on {' '.join(spec.runs[0])} found in {source}:"]
        advised = set()
        for f in student:
            lines.append(f"- {describe(f, source, kit, source_lines)}")
            advice = explain(f)
            lines.append(f"    {advice if advice not in advised else '(the same advice as above)'}")
            advised.add(advice)
            lines.extend(f"    {d}" for d in f.details[:2])
        if api:
            lines.append("after that, the program saw: " + "; ".join(api[:3]))
        lines.append("A race or an out-of-bounds access may give right answers on one run or GPU and wrong ones on "
                     "the next: performance is not run while the sanitizers find something in " + source + ".")
        lines.extend(notes)
        lines.append(reproduce_line(lab))
        extra = len(student) - 1
        more = f" (and {extra} more finding{'s' if extra > 1 else ''} below)" if extra else ""
        return SanitizerResult(lab, NAME, points, 0.0, "FAIL", describe(student[0], source, kit, source_lines) + more,
                               "\n".join(lines), data)
    if untrusted:
        first = untrusted[0]
        lines = [f"compute-sanitizer ({tools}) on {' '.join(spec.runs[0])}: a report the grader cannot trust:"]
        lines += [f"- {r.tool} {shlex.join(r.args)}: {r.message}" for r in untrusted]
        lines.append("Only the program run under the tool could have cut its report short or left errors in it that "
                     "cannot be read (the kit's runs end with the tool's summary): the row is not passed without it. "
                     "If " + source + " does not write to descriptors it did not open or signal other processes, "
                     "tell the instructors.")
        lines.extend(notes)
        lines.append(reproduce_line(lab))
        return SanitizerResult(lab, NAME, points, 0.0, "FAIL", f"{first.tool}: {first.message}", "\n".join(lines),
                               data)
    clean = [r for r in outcome.runs if r.status in ("clean", "findings")]
    if not clean:
        why = inconclusive[0].message.splitlines()[0] if inconclusive else "nothing ran"
        return SanitizerResult(lab, NAME, points, points, "not run",
                               f"not run: {inconclusive[0].tool if inconclusive else 'compute-sanitizer'} {why}; "
                               f"nothing is held against {source} for it", "\n".join(notes), data, excused=True)
    ran = ", ".join(dict.fromkeys(r.tool for r in clean))
    summary = f"nothing found in {source} by {ran}"
    if kit_side:
        summary += f"; {len(kit_side)} finding{'s' if len(kit_side) > 1 else ''} in the kit's own code (a kit bug)"
    if inconclusive:
        summary += f"; {', '.join(dict.fromkeys(r.tool for r in inconclusive))} not conclusive (not held against you)"
    return SanitizerResult(lab, NAME, points, points, "pass", summary, "\n".join(notes), data,
                           excused=bool(inconclusive))
