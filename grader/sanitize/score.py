"""The grade's "sanitizers" row: FAIL with every finding in the student's file (file:line, explained), a kit bug
reported as such and costing nothing, and an unreadable or incomplete log, or a lab that did not run to its end under
the tool, failing the row rather than excusing it. A failed row's data["hazards"] (one line each) is what
grader/score/score.py's apply_hazards holds against the lab's correctness points; "pass" only when every tool ran every
argument list to its end."""
import shlex
from dataclasses import dataclass

from grader.patterns import KIT
from grader.run.run import EXIT_CUDA, EXIT_FAIL, NO_DEVICE_MESSAGE
from grader.sanitize.findings import NAME, describe, explain, finding_data, read_source
from grader.sanitize.runs import NOT_INSTALLED, Outcome, UNTRUSTED
from grader.score.score import TestResult

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


def ended_early(run) -> str:
    """How the lab's program did not do under the tool what it does without it, when the tool saw nothing (the
    tool's own summary came, so the tool ran): "" otherwise. A signal, a CUDA error the tool did not explain, or a
    case that failed (a program that computes otherwise when it finds itself under the tool, a wrong answer there,
    hides its hazards from it): the tool only slows a correct program down."""
    if run.status != "clean" or run.returncode is None:
        return ""
    if run.returncode < 0:
        return f"the lab crashed under {run.tool} (killed by signal {-run.returncode}) before it finished"
    if run.returncode == EXIT_CUDA:
        return f"the lab stopped at a CUDA error under {run.tool} before it finished"
    if run.returncode == EXIT_FAIL:
        return f"a case of the lab failed under {run.tool}"
    return ""


def score_sanitizers(lab: str, spec, outcome: Outcome, source: str, kit=KIT, source_path=None) -> TestResult:
    """The sanitizers row from an Outcome: FAIL (0 points) with every finding in the student's file, each on a line
    with its file:line and what to do, or when the tool's report cannot be trusted or the lab did not run to its end
    under it (ended_early); "not run", saying why, when a tool could not check (not installed, too slow, its own
    error); otherwise its points, with findings in the kit reported as kit bugs."""
    points = spec.points
    tools = ", ".join(spec.tools)
    if outcome.sanitizer is None:
        return SanitizerResult(lab, NAME, points, points, "not run", f"not run: {NOT_INSTALLED}; nothing is held "
                               f"against {source} for it", excused=True)
    if outcome.no_device:
        return TestResult(lab, NAME, points, 0.0, "not run", NO_DEVICE_MESSAGE)
    source_lines = read_source(source_path).splitlines()
    student, kit_side = outcome.findings("student"), outcome.findings("kit")
    inconclusive = [r for r in outcome.runs if r.status in ("timeout", "cancelled", "crash", "error")]
    early = [r for r in outcome.runs if ended_early(r)]
    untrusted = [r for r in outcome.runs if r.status in UNTRUSTED]
    data = {"sanitizer_findings": [finding_data(f, source, kit) for f in student],
            "kit_findings": [finding_data(f, source, kit) for f in kit_side],
            "tools": [{"tool": r.tool, "status": r.status, "seconds": round(r.seconds, 1)} for r in outcome.runs]}
    notes = []
    if kit_side:
        notes.append(f"In the kit's own code (a kit bug, not {source}'s; nothing is held against you for it, tell "
                     f"the instructors):")
        notes.extend(f"- {describe(f, source, kit)}" for f in kit_side)
    for r in outcome.runs:
        if r.status == "clean" and r.message and not ended_early(r):
            notes.append(f"note: {r.tool} {r.message} (the groups above judge the answers)")
    for r in inconclusive:
        notes.append(f"note: {r.tool} {r.message.splitlines()[0] if r.message else r.status} (sanitizers slow "
                     f"kernels down 10 to 100 times; not held against you)")
    api = sorted({e for r in outcome.runs for e in r.parsed.api_errors})
    if student:
        lines = [f"compute-sanitizer ({tools}) on {' '.join(spec.runs[0])} found in {source}:"]
        advised, alike = set(), {}  # findings that read the same (racecheck reports each shared word): shown once
        for f in student:
            alike.setdefault(describe(f, source, kit, source_lines), []).append(f)
        for text, same in alike.items():
            f = same[0]
            lines.append(f"- {text}" + (f" ({len(same)} findings that read the same)" if len(same) > 1 else ""))
            advice = explain(f)
            lines.append(f"    {advice if advice not in advised else '(the same advice as above)'}")
            advised.add(advice)
            lines.extend(f"    {d}" for d in f.details[:2])
        if api:
            lines.append("after that, the program saw: " + "; ".join(api[:3]))
        lines.append("A race or an out-of-bounds access may give right answers on one run or GPU and wrong ones on "
                     "the next: it costs correctness points (labs.toml's hazard_cost), and performance is not run "
                     "while the sanitizers find something in " + source + ".")
        lines.extend(notes)
        lines.append(reproduce_line(lab))
        extra = len(student) - 1
        more = f" (and {extra} more finding{'s' if extra > 1 else ''} below)" if extra else ""
        data["hazards"] = [describe(f, source, kit, source_lines) for f in student]
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
        data["hazards"] = [f"compute-sanitizer's {r.tool} report cannot be trusted: {r.message}" for r in untrusted]
        return SanitizerResult(lab, NAME, points, 0.0, "FAIL", f"{first.tool}: {first.message}", "\n".join(lines),
                               data)
    if early:
        said = [f"{ended_early(r)} ({shlex.join(r.args)}: {r.message})" for r in early]
        lines = [f"compute-sanitizer ({tools}): the lab did not run to its end under the tool, or not as it does "
                 f"without it, so its hazards are unknown:", *(f"- {s}" for s in said),
                 "The correctness groups ran the lab without the tool; under it, the same program must also pass "
                 "(it is slower, nothing else): a lab that stops or fails only there is held to have a hazard.",
                 *notes, reproduce_line(lab)]
        data["hazards"], data["ran_to_the_end"] = said, False  # grade.py: perhaps a neighbour's doing
        return SanitizerResult(lab, NAME, points, 0.0, "FAIL", f"not run to the end: {said[0]}", "\n".join(lines),
                               data)
    clean = [r for r in outcome.runs if r.status in ("clean", "findings")]
    if not clean:
        why = inconclusive[0].message.splitlines()[0] if inconclusive else "nothing ran"
        return SanitizerResult(lab, NAME, points, points, "not run",
                               f"not run: {inconclusive[0].tool if inconclusive else 'compute-sanitizer'} {why}; "
                               f"nothing is held against {source} for it", "\n".join(notes), data, excused=True)
    ran = ", ".join(dict.fromkeys(r.tool for r in clean))
    kit_note = (f"; {len(kit_side)} finding{'s' if len(kit_side) > 1 else ''} in the kit's own code (a kit bug)"
                if kit_side else "")
    if inconclusive:  # some tool did not finish: the row says so, and nothing is held against the student for it
        first = inconclusive[0]
        why = first.message.splitlines()[0] if first.message else first.status
        return SanitizerResult(lab, NAME, points, points, "not run",
                               f"not run in full: {first.tool} {why} on {shlex.join(first.args)}"
                               f"{f' (and {len(inconclusive) - 1} more runs)' if len(inconclusive) > 1 else ''}; "
                               f"{ran} found nothing in {source}{kit_note}; nothing is held against {source} for it",
                               "\n".join(notes), data, excused=True)
    return SanitizerResult(lab, NAME, points, points, "pass", f"nothing found in {source} by {ran}{kit_note}",
                           "\n".join(notes), data)
