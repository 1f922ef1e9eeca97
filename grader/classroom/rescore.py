"""`make rescore` (python3 -m grader.classroom rescore --out OUT): a graded class scored again under the labs file as
it is now, from what its grading measured, without building or running anything.

Each student's grading leaves OUT/students/STUDENT/measurements.json (save): every test's status, text and data
(a benchmark's whole result line: the speedup, its spread, the GPU), the notes of the run, what the intake found,
and the tests each lab ran (their signature). Rescoring lays labs.toml's points over them: a correctness group that
passed earns its points now, one with a hazard keeps (1 - hazard_cost) of them, any other status earns none; the
sanitizers row its points when it passed; performance is scored again from the recorded benchmark by
grader/score/score.py's score_performance (thresholds, steps, margin: [scoring]) when every correctness group got full
marks. Late work is applied again by labs.toml's [late], and the class's overrides as after a grading. A lab whose
tests changed (a group added, removed or given other runs, another benchmark size or sanitizer runs) cannot be
scored from what was measured: its students are named and left as they were; grade them again (FORCE=1).

When only the labs file changed since the grading, each rescored record takes the key a grading would have now, so a
later `make grade-class` does not time the class again; otherwise (the kit's code changed too) it keeps its old key
and the next grading grades it again.
"""
from pathlib import Path

from grader.classroom import closing, intake
from grader.classroom.measurements import MEASUREMENTS, code_version, save, signature
from grader.classroom.overrides import OverrideError
from grader.classroom.records import (EXIT_BROKEN, RECORD, STUDENTS, context_key, read_class_file, read_json,
                                      recorded_row, row_of, student_key)
from grader.classroom.student import config_of, labs_of, write_outputs
from grader.config import SANITIZERS, ConfigError
from grader.report.report import Report
from grader.run.run import Outcome
from grader.score.score import HAZARD, STATIC_CHECKS, TestResult, score_performance

RESCORED = ("pass", "partial", "slow")  # performance statuses with a benchmark result to score again


class RescoreError(Exception):
    """A lab's recorded grading cannot be scored under the labs file as it is; the message says why."""


# ---- scoring again ----

def rescored(data: dict, labs, calibration_gpu: str) -> Report:
    """The Report of a recorded grading (save's data) with labs' points laid over it; RescoreError when a lab's
    tests changed since."""
    report = Report(**data["report"])
    results = [TestResult(**r) for r in data["results"]]
    changed = [lab.name for lab in labs if lab.name in data["labs"] and data["labs"][lab.name] != signature(lab)]
    missing = [lab.name for lab in labs if lab.name not in data["labs"]]
    if changed or missing:
        raise RescoreError(", ".join(f"{n}: its tests changed since the grading" for n in changed) +
                           ", ".join(f"{n}: not graded then" for n in missing))
    for lab in labs:
        mine = [r for r in results if r.lab == lab.name]
        for r in mine:
            rescore_test(r, lab)
        perf = next((r for r in mine if r.name == "performance"), None)
        if perf is not None and lab.performance:
            correct = all(r.full for r in mine if r.name != "performance")
            mine[mine.index(perf)] = new = rescore_performance(perf, lab, correct, calibration_gpu)
            results[results.index(perf)] = new
    report.results = [r for r in results if r.lab in {lab.name for lab in labs}]
    return report


def rescore_test(r: TestResult, lab) -> None:
    """A correctness group's or the sanitizers row's points under lab (in place)."""
    group = next((g for g in lab.groups if g.name == r.name), None)
    if group is not None:
        cost = lab.sanitizers.hazard_cost if lab.sanitizers else 1.0
        share = {"pass": 1.0, HAZARD: 1.0 - cost}.get(r.status, 0.0)
        old_cost = (r.data or {}).get("hazard_cost")
        if r.status == HAZARD and old_cost is not None and old_cost != cost:
            r.detail = r.detail.replace(_lost(old_cost), _lost(cost), 1)
            r.data = {**r.data, "hazard_cost": cost}
        r.max_score, r.score = group.points, round(group.points * share, 2)
    elif r.name == SANITIZERS and lab.sanitizers:
        r.max_score = lab.sanitizers.points
        r.score = r.max_score if r.status == "pass" else 0.0
    elif r.name == STATIC_CHECKS:
        r.max_score = r.score = 0.0


def _lost(cost: float) -> str:
    """grader/score/score.py's apply_hazards's words for the share a hazard takes."""
    return f"which takes {f'{100 * min(cost, 1.0):g}%' if cost < 1 else 'all'} of the points"


def rescore_performance(r: TestResult, lab, correct: bool, calibration_gpu: str) -> TestResult:
    """The performance row scored again from its recorded benchmark line under lab's thresholds and [scoring]."""
    bench = (r.data or {}).get("bench")
    if r.status not in RESCORED or not isinstance(bench, dict) or not correct:
        keep = TestResult(**{**vars(r), "max_score": lab.performance.points, "score": 0.0})
        if r.status in RESCORED and not correct:
            keep.status, keep.summary = "not run", "not run: every correctness test must pass first"
        return keep
    new = score_performance(lab.name, lab.performance, Outcome("pass", lines=[bench]), calibration_gpu)
    new.bonus = r.bonus
    env = (r.data or {}).get("environment")
    if env:
        new.data["environment"] = env
    return new


# ---- the command ----

def run_rescore(args, log) -> int:
    """`grader.classroom rescore`: every graded student of OUT scored again; the gradebook and exports rewritten."""
    try:
        options, entries, _ = read_class_file(args.out)
        labs = labs_of(options)
        table = closing.load_overrides(options, labs, entries)
    except (ValueError, ConfigError) as e:
        log(f"grader.classroom: {e}")
        return EXIT_BROKEN
    except OverrideError as e:
        log(f"grader.classroom: the overrides cannot be used:\n{e}")
        return EXIT_BROKEN
    config = config_of(options)
    code_version.cache_clear()  # the kit as it is now
    context, code = context_key(options, labs), code_version(str(options.kit))
    rows, changed, refused, stale = [], 0, [], 0
    for entry in entries:
        folder = Path(options.out) / STUDENTS / entry.student
        before = recorded_row(options, entry, labs, "no record: not graded")
        data, record = read_json(folder / MEASUREMENTS), read_json(folder / RECORD)
        if not data or not record:
            rows.append(before)
            continue
        try:
            report = rescored(data, labs, config.calibration.get("gpu", ""))
        except RescoreError as e:
            refused.append(f"{entry.student} ({e})")
            rows.append(before)
            continue
        got = intake.Intake(Path(data["intake"]["submission"]), data["intake"]["found"], data["intake"]["notes"],
                            data["intake"]["problems"])
        same_code = data.get("code") == code and record.get("files")
        key = student_key(context, Path(entry.path).name, record["files"]) if same_code else record["key"]
        stale += not same_code
        row = row_of(entry, report, got, options)
        save(folder, report, got, labs, str(options.kit))
        write_outputs(options, entry, folder, report, got, row, key, report.seconds, record.get("files", ""),
                      graded_at=record.get("graded_at") or "unknown")
        changed += row["total"] != before["total"]
        rows.append(row)
    log(f"rescored {len(rows) - len(refused)} students under {Path(options.config).name} ({changed} totals changed), "
        f"from the measurements of their grading; nothing was run")
    if refused:
        log("not rescored, graded again by the next make grade-class (FORCE=1 to time them now): " + "; ".join(refused))
    if stale:
        log(f"{stale} of them were graded by another version of the kit's code: the next make grade-class grades them "
            f"again")
    return closing.close(rows, options, labs, table, log)
