"""The two reports of a grading run: a table for people and results.json in Gradescope's autograder format.

A Report holds the TestResults (grader/score/score.py) in order, the seed and the notes about the whole run. The tests
of a bonus lab keep their own max_score, but only their score counts in the total: the total's maximum is that of
the other labs.

Both reports are student text as much as the kit's (a compiler's messages, the runner's printed output, symbol names
in findings, file names): every string goes through grader/report/text.py's printable() on its way out, so no escape
sequence or control character of the student's reaches a terminal, results.json or Gradescope.
"""
import html
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from grader.report.text import printable, printable_json

# Table status of what the simulator leaves to a GPU: a test it does not run (larger sizes, performance), and one it
# could not run through (a kernel it cannot simulate: 0 points). results.json marks both pending (pending()).
NEEDS_GPU = "needs GPU"
NOT_GRADED = "not graded"

NAME_WIDTH = 20


@dataclass
class Report:
    """Everything a grading run found. notes: lines about the whole run (no device, the seed, a kit error)."""

    submission: str
    seed: int
    results: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    seconds: float = 0.0
    no_device: bool = False
    kit_error: str = ""
    device: str = ""
    sandbox: dict = field(default_factory=dict)  # lab -> {"layers": ..., "missing": ...}: what held its runner
    build_sandbox: dict = field(default_factory=dict)  # lab -> {"layers": [...], "missing": [...]}: its compile
    simulator: bool = False  # graded on the kit's CPU simulator (grader/sim/simulator.py), not a GPU
    stage_seconds: dict = field(default_factory=dict)  # lab (or "kit") -> stage -> wall seconds (Grader.stage)
    simulator_check: dict = field(default_factory=dict)  # {"enabled", "why", "labs": {lab: what each platform said}}

    @property
    def score(self) -> float:
        """Every point scored, bonus labs' included."""
        return round(sum(r.score for r in self.results), 2)

    @property
    def max_score(self) -> float:
        """The total's maximum: the points of every test that is not a bonus lab's."""
        return round(sum(r.max_score for r in self.results if not r.bonus), 2)

    @property
    def bonus_max_score(self) -> float:
        return round(sum(r.max_score for r in self.results if r.bonus), 2)

    @property
    def full_marks(self) -> bool:
        """Every test outside the bonus labs got its full points."""
        return all(r.full for r in self.results if not r.bonus)

    def bonus_labs(self) -> list:
        return list(dict.fromkeys(r.lab for r in self.results if r.bonus))

    def labs(self) -> list:
        """The lab names, in the order they were graded."""
        return list(dict.fromkeys(r.lab for r in self.results))


def _points(x: float) -> str:
    return f"{x:g}" if x == int(x) else f"{x:.2f}"


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + ln for ln in text.splitlines())


def format_table(report: Report, details: bool = True) -> str:
    """The human report: one block per lab, one row per test (points, status, what went wrong), then the total.

    With details, the extra text of a test that lost points (compiler errors, how to reproduce) follows its row.
    A bonus lab is marked "(bonus)", and a note under the table says its maximum is not in the total's.
    """
    out = [printable(f"Grading {report.submission}  (seed {report.seed}"
                     f"{', ' + report.device if report.device else ''})", keep="")]
    for lab in report.labs():
        rows = [r for r in report.results if r.lab == lab]
        got, most = sum(r.score for r in rows), sum(r.max_score for r in rows)
        bonus = " (bonus)" if any(r.bonus for r in rows) else ""
        out.append("")
        out.append(f"{lab:<{NAME_WIDTH + 2}} {_points(got):>6} / {_points(most)}{bonus}")
        for r in rows:
            points = f"{_points(r.score):>6} / {_points(r.max_score):<4}"
            summary = r.summary.removeprefix("not run: ") if r.status == "not run" else r.summary
            # a row is one line: a student's text in its summary cannot start a line that reads as another row
            out.append(f"  {r.name:<{NAME_WIDTH}} {points} {r.status:<10} {printable(summary, keep='')}")
            if details and not r.full and r.detail and r.detail.strip() != r.summary.strip():
                out.append(_indent(printable(r.detail), " " * 6))
    out.append("")
    out.extend(printable(note) for note in report.notes)
    out.extend(_bonus_notes(report))
    out.append(_total(report))
    return printable("\n".join(out))


def _total(report: Report) -> str:
    """The total line: "Total 784 / 700", and "(84 of them bonus points)" when bonus labs were graded; when only
    bonus labs were, "Total 35 / 0 (35 of them bonus points, of 100: a bonus lab's points are outside the total's
    maximum)", so that a maximum of 0 does not read as a mistake."""
    line = f"Total {_points(report.score)} / {_points(report.max_score)}"
    if report.bonus_labs():
        bonus = round(sum(r.score for r in report.results if r.bonus), 2)
        line += f" ({_points(bonus)} of them bonus points"
        if report.max_score == 0:
            line += f", of {_points(report.bonus_max_score)}: a bonus lab's points are outside the total's maximum"
        line += ")"
    return line


def _bonus_notes(report: Report) -> list:
    labs = report.bonus_labs()
    if not labs:
        return []
    which, its = (f"{labs[0]} is a bonus lab", "its") if len(labs) == 1 else (f"{', '.join(labs)} are bonus labs",
                                                                               "their")
    return [f"Bonus: {which}: {its} score adds to the total, {its} {_points(report.bonus_max_score)} points are not "
            f"in the total's maximum"]


def gradescope_results(report: Report) -> dict:
    """results.json for Gradescope: score, execution_time, output and one test per group with its own max_score."""
    tests = []
    for r in report.results:
        extra = r.detail if r.detail.strip() != r.summary.strip() else ""
        output = "\n".join(part for part in (r.summary, extra) if part)
        tests.append({"name": r.title, "score": r.score, "max_score": r.max_score,
                      "status": "passed" if r.full else "failed", "output": output, "visibility": "visible",
                      "extra_data": {"lab": r.lab, "test": r.name, "status": r.status, "bonus": r.bonus}})
    summary = [_total(report), f"seed {report.seed}", *report.notes,
               *_bonus_notes(report)]
    board = leaderboard(report)
    data = {**({"leaderboard": board} if board else {}),
        "score": report.score,
        "execution_time": round(report.seconds, 1),
        "output": "\n".join(summary),
        "visibility": "visible",
        "stdout_visibility": "visible",
        "tests": tests,
        "extra_data": {"max_score": report.max_score, "bonus_max_score": report.bonus_max_score,
                       "bonus_labs": report.bonus_labs(), "seed": report.seed, "device": report.device,
                       "no_device": report.no_device, "kit_error": report.kit_error,
                       "static_check_findings": static_check_findings(report), "sandbox": report.sandbox,
                       "build_sandbox": report.build_sandbox,
                       "performance_environment": performance_environment(report), "labs": lab_numbers(report),
                       "simulator": report.simulator, "stage_seconds": report.stage_seconds,
                       "simulator_check": report.simulator_check,
                       "run_seconds": run_seconds(report)},
    }
    if report.simulator:  # what the simulator left to a GPU is pending, as on Gradescope without one (one rule)
        data, waiting = pending(data)
        data["extra_data"]["pending_points"] = waiting
        retotal(data)  # the pending tests' maxima are 0 now, as Gradescope counts them
    return printable_json(data)


def leaderboard(report: Report) -> list:
    """Gradescope's leaderboard entries (https://gradescope-autograders.readthedocs.io/en/latest/leaderboards/): the
    measured speedup of each lab whose benchmark ran, higher first. Gradescope shows them under the pseudonyms
    students choose, never their names; a lab not timed (on the simulator, or before its correctness passed) has no
    entry, so no estimate ever sits beside a measurement."""
    board = []
    for r in report.results:
        if r.name == "performance" and _finite(r.data.get("speedup")):
            what = "x of CUB's speed" if r.data.get("yardstick") == "cub" else "x over the baseline"
            board.append({"name": f"{r.lab}: {what}", "value": round(float(r.data["speedup"]), 3), "order": "desc"})
    return board


def static_check_findings(report: Report) -> dict:
    """{lab: [{"rule": ..., "message": ...}, ...]} for each lab whose static checks found something, for scripts
    that go through a class's results (the table and each test's output say the same to people)."""
    return {r.lab: r.data["findings"] for r in report.results if r.data.get("findings")}


def run_seconds(report: Report) -> dict:
    """lab -> group -> the wall seconds of the group's slowest run, for groups that passed (make calibrate: the time
    limits of grader/labs.toml's [limits] come from the reference solution's)."""
    found = {}
    for r in report.results:
        if "run_seconds" in r.data:
            found.setdefault(r.lab, {})[r.name] = r.data["run_seconds"]
    return found


def performance_environment(report: Report) -> dict:
    """{lab: record} for each lab whose benchmark ran: the GPU, driver and runtime, the measured and maximum SM
    clocks, samples discarded for a throttled clock, nvidia-smi's clocks, temperature, power and pstate before and
    after, the other processes on the GPU, and the warnings (grader/run/gpuinfo.py: environment)."""
    return {r.lab: r.data["environment"] for r in report.results if r.data.get("environment")}


def lab_numbers(report: Report) -> dict:
    """{lab: numbers} for scripts and the class report (grader/classroom/class_report.py): the lab's points, each
    test's status word, and where its benchmark ran the speedup, the thresholds it was scored against and the
    harness's times (ms), spread and samples; on the simulator its estimate and counts where the performance row
    carries them."""
    out = {}
    for lab in report.labs():
        rows = [r for r in report.results if r.lab == lab]
        numbers = {"score": round(sum(r.score for r in rows), 2),
                   "max_score": round(sum(r.max_score for r in rows), 2), "bonus": any(r.bonus for r in rows),
                   "tests": {r.name: r.status for r in rows}}
        perf = next((r.data for r in rows if r.name == "performance"), {})
        if _finite(perf.get("speedup")):
            bench = perf.get("bench") or {}
            numbers.update({key: perf[key] for key in ("speedup", "yardstick", "lower", "full", "credited")
                            if key in perf})
            numbers.update({key: float(bench[key]) for key in ("student_ms", "baseline_ms", "spread", "samples")
                            if _finite(bench.get(key))})
        numbers.update({key: perf[key] for key in ("estimate", "counts") if perf.get(key)})
        out[lab] = numbers
    return out


def _finite(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


# ---- Gradescope's own settings (grader/gradescope.py applies them to the results.json it hands Gradescope) ----

# Who sees a row, from the soonest to the latest: a row that depends on others is shown no sooner than the latest
# of them. after_published is taken as later than after_due_date (grades are published after the due date).
VISIBILITY_ORDER = ("visible", "after_due_date", "after_published", "hidden")


def latest(*visibilities: str) -> str:
    """The latest of visibilities, by VISIBILITY_ORDER."""
    return max(visibilities, key=lambda v: VISIBILITY_ORDER.index(v) if v in VISIBILITY_ORDER else 0)


def own_visibilities(lab) -> dict:
    """{row name: the visibility labs.toml gives it} of a lab's rows (the static checks are always visible)."""
    own = {g.name: g.visibility for g in lab.groups}
    if lab.sanitizers:
        own["sanitizers"] = lab.sanitizers.visibility
    if lab.performance:
        own["performance"] = lab.performance.visibility
    return own


def row_dependencies(lab, simulator: bool) -> dict:
    """{row name: the rows whose results its own result shows}, by the grader's rules: a run that hangs skips every
    later test of its lab (so a group shows the groups before it, and the sanitizers row every group); a hazard
    takes the points of every correctness group (so each shows the sanitizers row, when hazard_cost > 0);
    performance runs only after every other test passed; on the simulator the sanitizers row is scored from every
    group's runs. simulator: kept for that last rule, which the hang rule already covers."""
    names = [g.name for g in lab.groups]
    hazard = bool(lab.sanitizers) and lab.sanitizers.hazard_cost > 0
    deps = {name: set(names[:k]) | ({"sanitizers"} if hazard else set()) for k, name in enumerate(names)}
    if lab.sanitizers:
        deps["sanitizers"] = set(names)
    if lab.performance:
        deps["performance"] = set(names) | ({"sanitizers"} if lab.sanitizers else set())
    return deps


def effective_visibilities(lab, simulator: bool = False) -> dict:
    """{row name: when a student may see it}: its own visibility, made as late as that of every row whose result
    it shows (row_dependencies, followed through), so that no row shown now reveals a row not yet shown."""
    seen = own_visibilities(lab)
    deps = row_dependencies(lab, simulator)
    changed = True
    while changed:
        changed = False
        for name, needs in deps.items():
            when = latest(seen[name], *(seen[d] for d in needs if d in seen))
            if when != seen[name]:
                seen[name], changed = when, True
    return seen


def row_visibility(test: dict, labs, simulator: bool = False) -> str:
    """The visibility of a results.json test (by the extra_data gradescope_results writes): effective_visibilities'
    for a lab's group, sanitizers or performance row; "visible" for the rest (static checks, a test of a lab not in
    labs). A late penalty row keeps the visibility grader/score/late.py gave it."""
    extra = test.get("extra_data") if isinstance(test.get("extra_data"), dict) else {}
    lab = next((lab for lab in labs if lab.name == extra.get("lab")), None)
    if lab is None or extra.get("test") not in own_visibilities(lab):
        return str(test.get("visibility") or "visible")
    return effective_visibilities(lab, simulator)[extra["test"]]


def set_visibility(results: dict, labs, default: str = "visible") -> dict:
    """results with each test's visibility (row_visibility) and the whole result's from [gradescope] (default).
    Gradescope: a test's own setting overrides the whole result's; while any test is hidden (after_due_date,
    after_published, hidden) a student does not see the total, and the grader's printed output (stdout, the whole
    table) is shown no sooner than the latest test."""
    simulator = bool((results.get("extra_data") or {}).get("simulator"))
    for test in results.get("tests") or []:
        test["visibility"] = row_visibility(test, labs, simulator)
    results["visibility"] = default
    results["stdout_visibility"] = latest("visible", *(t["visibility"] for t in results.get("tests") or []))
    return results


def _extra(test: dict) -> dict:
    return test.get("extra_data") if isinstance(test.get("extra_data"), dict) else {}


def _blocked(tests: list, lab: str) -> str:
    """The first test of lab that the simulator graded and that lost points ("" when none): after it, the lab's
    performance can no longer come (the GPU times a lab only when every other test of it passed)."""
    for test in tests:
        extra = _extra(test)
        if extra.get("lab") != lab or extra.get("test") in ("performance", "late penalty"):
            continue
        if extra.get("status") not in (NEEDS_GPU, NOT_GRADED) and test.get("status") != "passed":
            return str(extra.get("test") or test.get("name"))
    return ""


def pending(data: dict) -> tuple:
    """data with every test the simulator cannot grade (groups of sizes too large for it, a kernel it cannot run,
    the performance test) marked pending: 0 of 0 points for now, its points and the simulator's own words (its
    counts, its estimate) kept in the output; a test marked already is left as it is (and counted). Only points
    that can still come pend: a lab's performance does not once another of its tests lost points on the simulator
    (the course's GPU times a lab only when every other test passed): it scores 0 of its points, saying why.
    Returns (data, the points pending, bonus labs' left out)."""
    waiting = 0.0
    tests = data.get("tests") or []
    for test in tests:
        extra = _extra(test)
        if extra.get("status") not in (NEEDS_GPU, NOT_GRADED):
            continue
        if extra.get("pending"):  # marked already (gradescope_results of a simulator run)
            waiting += 0 if extra.get("bonus") else float(extra.get("points") or 0)
            continue
        points = float(test.get("max_score") or 0)
        failed = _blocked(tests, extra.get("lab")) if extra.get("test") == "performance" else ""
        if failed:
            test.update(score=0, status="failed", extra_data={**extra, "status": "not run"})
            test["output"] = (f"not run: every other test of this lab must pass first ({failed} did not), so these "
                              f"{points:g} points cannot come on the course's GPU either")
            continue
        waiting += 0 if extra.get("bonus") else points
        test.pop("status", None)  # neither passed nor failed: Gradescope shows no verdict
        test.update(score=0, max_score=0, extra_data={**extra, "pending": True, "points": points})
        test["output"] = "\n".join([f"pending: graded on the course's GPU ({points:g} points)",
                                    "On the simulator: " + str(test.get("output", ""))])
    return data, round(waiting, 2)


def shown_now(test: dict) -> bool:
    """Whether a student sees a results.json test as soon as it is graded."""
    return test.get("visibility", "visible") == "visible"


def student_view(results: dict) -> dict:
    """What a student sees of results (a results.json dict) before the due date: the whole result's output, and
    name, score, maximum, status and output of each test shown now; the total only while every test is shown, the
    printed output (stdout) only when it is. Tests compare two students' views with it."""
    tests = results.get("tests") or []
    return {"output": results.get("output", ""),
            "score": results.get("score") if all(shown_now(t) for t in tests) else None,
            "stdout": results.get("stdout_visibility", "hidden") == "visible",
            "tests": [{k: t.get(k) for k in ("name", "score", "max_score", "status", "output")}
                      for t in tests if shown_now(t)]}


def total_line(results: dict, tests=None) -> str:
    """The total line of a results.json dict, as recorded: its score (bonus and penalty rows included) over the
    maximum of its tests outside the bonus labs: "Total 36 / 40", with "(N of them bonus points)" and "(after a late
    penalty of N)" where they apply. With tests (some of its tests), the same over those alone."""
    scored = results.get("score") if tests is None else None
    tests = results.get("tests") or [] if tests is None else tests
    extra = [t.get("extra_data") if isinstance(t.get("extra_data"), dict) else {} for t in tests]
    score = round(float(scored) if scored is not None else sum(float(t.get("score") or 0) for t in tests), 2)
    most = round(sum(float(t.get("max_score") or 0) for t, x in zip(tests, extra) if not x.get("bonus")), 2)
    bonus = round(sum(float(t.get("score") or 0) for t, x in zip(tests, extra) if x.get("bonus")), 2)
    bonus_most = round(sum(float(t.get("max_score") or 0) for t, x in zip(tests, extra) if x.get("bonus")), 2)
    late = round(-sum(float(t.get("score") or 0) for t, x in zip(tests, extra) if x.get("test") == "late penalty"), 2)
    line = f"Total {_points(score)} / {_points(most)}"
    if bonus or (bonus_most and not most):
        line += f" ({_points(bonus)} of them bonus points"
        line += (f", of {_points(bonus_most)}: a bonus lab's points are outside the total's maximum)" if not most
                 else ")")
    if late:
        line += f" (after a late penalty of {_points(late)})"
    return line


def retotal(results: dict) -> dict:
    """results with its output's total line (the first line that starts with "Total ") made total_line's: what a
    student reads is what is recorded. Returns results, changed in place."""
    lines = str(results.get("output", "")).split("\n")
    at = next((k for k, line in enumerate(lines) if line.startswith("Total ")), None)
    if at is not None:
        lines[at] = total_line(results)
        results["output"] = "\n".join(lines)
    return results


def _markdown_text(line: str) -> str:
    """A line of text as Markdown that shows it as written: every ASCII punctuation character backslash-escaped
    (CommonMark lets any of them be), so a student's file name or compiler message cannot format the page."""
    return "".join("\\" + c if c in _PUNCTUATION else c for c in line)


_PUNCTUATION = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _blocks(text: str, detail_after_first: bool) -> list:
    """text cut into ("para", lines) and ("pre", lines): indented lines (or, with detail_after_first, every line
    after the first) are preformatted, the others prose."""
    blocks = []
    for k, line in enumerate(text.splitlines()):
        kind = "pre" if (detail_after_first and k > 0) or line[:1] in (" ", "\t") else "para"
        if not line.strip() and kind == "para":
            blocks.append(("gap", []))
            continue
        if blocks and blocks[-1][0] == kind:
            blocks[-1][1].append(line)
        else:
            blocks.append((kind, [line]))
    return [b for b in blocks if b[0] != "gap"]


def render(text: str, fmt: str, detail_after_first: bool = False) -> str:
    """text (the grader's plain text) in Gradescope's output format fmt: "text" and "ansi" as they are, "md" and
    "html" with prose as paragraphs and indented text (compiler messages, the files graded) preformatted, every
    character of it escaped; "simple_format" HTML-escaped (Gradescope turns its newlines into line breaks)."""
    if fmt in ("text", "ansi"):
        return text
    if fmt == "simple_format":
        return html.escape(text)
    out = []
    for kind, lines in _blocks(text, detail_after_first):
        if fmt == "html":
            body = html.escape("\n".join(lines))
            out.append(f"<pre>{body}</pre>" if kind == "pre" else f"<p>{body.replace(chr(10), '<br>')}</p>")
        elif kind == "pre":
            body = "\n".join(lines)
            fence = "`" * max(3, _longest_run(body, "`") + 1)
            out.append(f"{fence}text\n{body}\n{fence}")
        else:
            out.append("  \n".join(_markdown_text(line) for line in lines))
    return ("\n" if fmt == "html" else "\n\n").join(out)


def _longest_run(text: str, char: str) -> int:
    longest = run = 0
    for c in text:
        run = run + 1 if c == char else 0
        longest = max(longest, run)
    return longest


def set_output_format(results: dict, fmt: str) -> dict:
    """results with every output (the whole result's and each test's) rendered in fmt and Gradescope told so
    (output_format, test_output_format and each test's output_format)."""
    results["output"] = render(str(results.get("output", "")), fmt)
    results["output_format"] = results["test_output_format"] = fmt
    for test in results.get("tests") or []:
        test["output"] = render(str(test.get("output", "")), fmt, detail_after_first=True)
        test["output_format"] = fmt
    return results


def write_results(report: Report, path) -> None:
    """Writes gradescope_results(report) to path (creating its folder), atomically: a temporary file beside it,
    then os.replace, so that a reader (or a crash) never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(gradescope_results(report), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
