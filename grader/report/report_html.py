"""report.html, the grading run's page for people, written beside results.json (grader/grade.py calls write()).

It holds the lab table (each lab's tests, points, status and what went wrong, as the terminal table has them) and a
chart (grader/report/charts.py, an inline matplotlib SVG) of the student's speedups against the grader's thresholds and
the reference ladder: the reference solutions' speedups labs.toml records for the GPU graded on (for every calibrated
GPU model when that one is not calibrated, or when nothing was timed). Without a GPU, or on the simulator, the chart
says that performance was not measured and shows the thresholds and references alone.

Everything in the page that a lab's program could have written (summaries, details, notes, the device's name, the
submission's path) is escaped with html.escape; the page allows no scripts (its Content-Security-Policy), so a
student's output shown in it stays text. A chart that cannot be drawn (matplotlib missing) leaves a line saying
why; write() never stops a grading run: a failure to write the page is reported on stderr.
"""
import html
import math
import os
import sys
from pathlib import Path

from grader.report import charts
from grader.report.report import Report, _points, _total
from grader.report.text import printable

PAGE_NAME = "report.html"
STATUS_CLASS = {"pass": "pass", "partial": "partial", "slow": "partial", "not run": "skip", "needs GPU": "skip"}

STYLE = """
body { font-family: 'DejaVu Sans', 'Helvetica Neue', Helvetica, Arial, sans-serif; color: #222; margin: 1.5em auto;
       max-width: 1100px; padding: 0 1em; line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
.meta { color: #555; margin-top: 0; } .total { font-size: 1.15em; font-weight: bold; }
.banner { background: #fff4e8; border: 1px solid #d95f02; padding: 0.6em 0.9em; border-radius: 4px; }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
th, td { text-align: left; padding: 0.3em 0.6em; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
tr.lab th { background: #f2f5f9; border-top: 2px solid #c5d7ea; }
td.points { white-space: nowrap; text-align: right; font-variant-numeric: tabular-nums; }
.status { font-weight: bold; white-space: nowrap; }
.pass { color: #1b7a3d; } .partial { color: #a15c00; } .fail { color: #b3261e; } .skip { color: #666; }
pre { white-space: pre-wrap; word-break: break-word; background: #f7f7f7; padding: 0.5em; margin: 0.3em 0;
      font-size: 0.9em; }
figure { margin: 0; } figure svg { max-width: 100%; height: auto; }
figcaption { color: #444; font-size: 0.9em; } figcaption li { margin: 0.1em 0; }
ul.notes li { margin: 0.2em 0; }
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def esc(text) -> str:
    """Text for the page: without control characters (grader/report/text.py), escaped, quotes included."""
    return html.escape(printable(text), quote=True)


def _status_class(status: str) -> str:
    return STATUS_CLASS.get(status, "fail")


def _perf_result(report: Report, lab: str):
    return next((r for r in report.results if r.lab == lab and r.name == "performance"), None)


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def why_not_measured(result, no_device: bool) -> str:
    """A few words for a lab whose speedup is not in its result."""
    if result is None:
        return "no performance test ran"
    if result.status == "needs GPU":
        return "needs a GPU (graded on the simulator)"
    if no_device or "no CUDA device" in result.summary:
        return "no GPU here"
    if result.status == "not run":
        return result.summary
    return f"{result.status}: {result.summary}"


def chart_columns(report: Report, labs) -> tuple:
    """(charts.Column per graded lab with a performance test, whether any speedup was measured)."""
    columns, measured = [], False
    graded = set(report.labs())
    for lab in labs:
        perf = lab.performance
        if perf is None or lab.name not in graded:
            continue
        result = _perf_result(report, lab.name)
        data = result.data if result is not None else {}
        lower, full, calibrated = perf.thresholds_for(report.device)
        if calibrated:
            references = {f"{calibrated} (labs.toml)": t.measured for name, t in perf.gpus
                          if name == calibrated and t.measured}
        else:
            references = {f"{name} (labs.toml)": t.measured for name, t in perf.gpus if t.measured}
        column = charts.Column(lab.name, perf.yardstick, lower=data.get("lower", lower), full=data.get("full", full),
                               references=references)
        if _finite(data.get("speedup")):
            column.yours = float(data["speedup"])
            measured = True
        else:
            column.why_not = why_not_measured(result, report.no_device)
        columns.append(column)
    return columns, measured


def chart_note(report: Report, columns) -> str:
    """The line written across a chart in which nothing was measured."""
    if report.no_device:
        return "Performance was not measured: this machine has no GPU."
    if any(c.why_not.startswith("needs a GPU") for c in columns):
        return ("Performance was not measured: the simulator measures no time (make sim gives an estimate from its "
                "counts, labelled as one, never points).")
    return "No speedup was measured in this grading."


def chart_section(report: Report, labs) -> str:
    """The chart's figure, or a paragraph saying why there is none."""
    columns, measured = chart_columns(report, labs)
    if not columns:
        return "<p>No graded lab has a performance test.</p>"
    unit = {"baseline": "x baseline", "cub": "x of CUB"}
    caption = []
    for c in columns:
        yours = f"yours {c.yours:.2f}{unit[c.yardstick]}" if c.yours is not None else c.why_not
        refs = "; ".join(f"reference {v:.2f} ({label})" for label, v in c.references.items())
        caption.append(f"<li>{esc(c.lab)}: {esc(yours)}; points from {c.lower:.2f} to {c.full:.2f}"
                       f"{esc(unit[c.yardstick])}{'; ' + esc(refs) if refs else ''}</li>")
    device = charts.plain(report.device) if report.device else ""
    title = "Your speed against the grader's thresholds and the reference ladder"
    subtitle = f"measured on {device}" if measured and device else ("measured" if measured else "not measured")
    try:
        svg = charts.speedup_chart(columns, title=title, subtitle=subtitle,
                                   note="" if measured else chart_note(report, columns))
        picture = charts.inline_svg(svg)
    except charts.ChartError as e:
        picture = f"<p>The chart is not drawn: {esc(e)}.</p>"
    note = "" if measured else (f'<p class="banner">{esc(chart_note(report, columns))} The chart shows what is '
                                f'known: the thresholds and the reference solutions\' speedups.</p>')
    return (f"{note}<figure>{picture}<figcaption><ul>{''.join(caption)}</ul></figcaption></figure>")


def lab_table(report: Report) -> str:
    rows = ['<table><thead><tr><th>test</th><th>points</th><th>status</th><th>what happened</th></tr></thead>']
    for lab in report.labs():
        results = [r for r in report.results if r.lab == lab]
        got, most = sum(r.score for r in results), sum(r.max_score for r in results)
        bonus = " (bonus)" if any(r.bonus for r in results) else ""
        rows.append(f'<tbody><tr class="lab"><th colspan="2">{esc(lab)}{esc(bonus)}</th>'
                    f'<th colspan="2">{esc(_points(got))} / {esc(_points(most))}</th></tr>')
        for r in results:
            summary = r.summary.removeprefix("not run: ") if r.status == "not run" else r.summary
            detail = ""
            if not r.full and r.detail and r.detail.strip() != r.summary.strip():
                detail = f"<details><summary>details</summary><pre>{esc(r.detail)}</pre></details>"
            rows.append(f"<tr><td>{esc(r.name)}</td><td class=\"points\">{esc(_points(r.score))} / "
                        f"{esc(_points(r.max_score))}</td><td class=\"status {_status_class(r.status)}\">"
                        f"{esc(r.status)}</td><td>{esc(summary)}{detail}</td></tr>")
        rows.append("</tbody>")
    rows.append("</table>")
    return "\n".join(rows)


def page(report: Report, labs) -> str:
    """The whole page as text."""
    meta = [f"seed {report.seed}"]
    if report.device:
        meta.append(f"GPU: {report.device}")
    meta.append(f"{report.seconds:.0f} s")
    banner = ""
    if report.no_device:
        banner = ('<p class="banner">This machine has no GPU: the run-time tests were not run (compile errors and '
                  'the static checks are reported). <code>make grade SIM=1</code> grades correctness on the kit\'s '
                  'CPU simulator.</p>')
    if getattr(report, "simulator", False):
        meta.insert(0, "graded on the simulator (no GPU)")
        banner = ('<p class="banner">Graded on the kit\'s CPU simulator (no GPU): correctness of the small sizes and '
                  'the hazard checks; larger sizes and performance need a GPU and are pending.</p>')
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Grade report: {esc(report.submission)}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>Grade report: {esc(report.submission)}</h1>
<p class="meta">{esc(', '.join(meta))}</p>
<p class="total">{esc(_total(report))}</p>
{banner}
<h2>Labs</h2>
{lab_table(report)}
<h2>Speed</h2>
{chart_section(report, labs)}
<h2>Notes</h2>
<ul class="notes">{notes}</ul>
<p class="meta">Written by grader/grade.py; results.json beside this page holds the same results in Gradescope's
format.</p>
</body>
</html>
"""


def write(report: Report, labs, results_path) -> Path | None:
    """Writes report.html beside results_path (atomically) and returns its path; on any failure, says so on stderr
    and returns None (the grading's results stand without the page)."""
    path = Path(results_path).parent / PAGE_NAME
    try:
        text = page(report, labs)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        return path
    except Exception as e:  # noqa: BLE001 - the page is a convenience; grading must go on without it
        print(f"python3 -m grader: {path} not written: {type(e).__name__}: {e}", file=sys.stderr)
        return None
