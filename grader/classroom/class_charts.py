"""The class report's charts (grader/classroom/class_report.py): per lab, the distribution of the students' points
and a histogram of their speedups with the grader's thresholds drawn in. matplotlib SVG, in the style of the
single-submission report's chart (grader/report/charts.py: its colours, rc settings, plain() for any text that came from
a program, and the same no-date, fixed-salt output).
"""
import io
import math
import statistics

from grader.report import charts

SCORES = charts.REFERENCE_COLOURS[2]  # the students' points: the reference bars' blue
SPEEDUPS = charts.YOURS  # the students' speedups: the colour of "yours" in the student's own chart


def _matplotlib():
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise charts.ChartError("matplotlib is not installed: python3 -m pip install -r requirements.txt") from None
    return matplotlib, Figure


def _headroom(ax, counts) -> None:
    """Room above the tallest bar for the legend: the y axis to 1.5 times it (whole students)."""
    ax.set_ylim(0, max(1, math.ceil(1.5 * max(counts, default=0))))


def _style(ax, title: str) -> None:
    ax.set_title(charts.plain(title, 90), loc="left", fontsize=10, fontweight="bold")
    ax.grid(axis="y", color="#e3e3e3", lw=0.8, zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def score_panel(ax, scores: list, max_score: float) -> None:
    """A histogram of scores (points, 0..max_score) on ax: about ten bins, the median marked."""
    top = max(max_score, max(scores, default=0.0), 1.0)
    bins = [top * k / 10 for k in range(11)]
    counts, _, _ = ax.hist(scores, bins=bins, color=SCORES, edgecolor="#4a6f96", lw=0.6, zorder=2)
    _headroom(ax, counts)
    if scores:
        median = statistics.median(scores)
        ax.axvline(median, color=charts.INK, lw=1.2, ls="--", zorder=3, label=f"median {median:g}")
        ax.legend(loc="best", fontsize=8, frameon=True, framealpha=0.9)
    ax.set_xlim(0, top)
    ax.set_xlabel(f"points (of {max_score:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    _style(ax, f"Points: {len(scores)} student{'s' if len(scores) != 1 else ''}")


def speedup_panel(ax, speedups: list, yardstick: str, lower, full, reference=None, why_none: str = "") -> None:
    """A histogram of speedups on ax (log scale for the baseline yardstick), the thresholds as charts.py draws them
    (a band from lower, dotted: no points at or below, to full, solid: all of them) and the reference solution's
    speedup as a dashed line; why_none is written across an empty panel."""
    values = [v for v in speedups if charts._finite(v)]
    marks = [v for v in (lower, full, reference) if charts._finite(v)]
    log = yardstick == "baseline"
    every = values + marks or [1.0]
    low, high = min(every), max(every)
    if log:
        low, high = 2.0 ** math.floor(math.log2(low / 1.2)), 2.0 ** math.ceil(math.log2(high * 1.2))
        edges = [low * (high / low) ** (k / 20) for k in range(21)]
        ax.set_xscale("log", base=2)
        ticks = [2.0 ** k for k in range(round(math.log2(low)), round(math.log2(high)) + 1)]
        ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
    else:
        low, high = 0.0, max(1.2, high * 1.15)
        edges = [high * k / 20 for k in range(21)]
        ax.xaxis.set_major_formatter(lambda v, _: f"{v:.2f}")
    if charts._finite(lower) and charts._finite(full) and full > lower:
        ax.axvspan(lower, full, color=charts.BAND, alpha=0.18, lw=0, zorder=1)
        ax.axvline(lower, color=charts.BAND, lw=1.0, ls=":", zorder=3, label=f"no points at or below {lower:.2f}")
        ax.axvline(full, color=charts.BAND, lw=1.6, zorder=3, label=f"all points from {full:.2f}")
    if charts._finite(reference):
        ax.axvline(reference, color="#4a6f96", lw=1.2, ls="--", zorder=3,
                   label=f"reference solution {reference:.2f}")
    counts, _, _ = ax.hist(values, bins=edges, color=SPEEDUPS, edgecolor=charts.INK, lw=0.5, zorder=2)
    _headroom(ax, counts)
    ax.set_xlim(low, high)
    ax.yaxis.get_major_locator().set_params(integer=True)
    unit = "x baseline" if log else "x of CUB's speed"
    ax.set_xlabel(f"speedup ({unit})")
    ax.set_ylabel("students")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize=7.5, frameon=True, framealpha=0.9)
    if not values:
        ax.set_ylim(0, 1)
        ax.text(0.5, 0.5, charts._wrap(why_none or "no speedup measured", 40, 160), transform=ax.transAxes,
                ha="center", va="center", fontsize=10, color="#8a3b00",
                bbox={"boxstyle": "round,pad=0.5", "fc": "#fff4e8", "ec": charts.YOURS, "lw": 1.0})
    _style(ax, f"Speed: {len(values)} measured")


def lab_chart(scores: list, max_score: float, speedups=None, *, yardstick: str = "baseline", lower=None,
              full=None, reference=None, why_none: str = "") -> str:
    """One lab's figure as SVG text: its points histogram, and beside it (speedups not None: the lab has a
    performance test) its speedup histogram. ChartError where matplotlib is missing."""
    matplotlib, Figure = _matplotlib()
    with matplotlib.rc_context(charts.RC):
        fig = Figure(figsize=(10 if speedups is not None else 5.2, 3.1))
        axes = fig.subplots(1, 2 if speedups is not None else 1, squeeze=False,
                            gridspec_kw={"wspace": 0.22, "left": 0.07, "right": 0.98, "top": 0.9, "bottom": 0.17})
        score_panel(axes[0][0], scores, max_score)
        if speedups is not None:
            speedup_panel(axes[0][1], speedups, yardstick, lower, full, reference, why_none)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    return charts.inline_svg(out.getvalue())
