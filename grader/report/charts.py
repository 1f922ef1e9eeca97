"""Speedup charts for people: the reference ladder with a student's kernels on it, against the grader's thresholds.
Drawn with matplotlib as SVG; used by `make bench LAB=NN` (tools/student/bench.py) and by the grader's report.html
(grader/report/report_html.py).

One panel per yardstick, as the grader scores them: the reductions' speedup over the baseline kernel (lab 01's),
log scale, and the scans' and compaction's fraction of CUB's speed, linear. Each lab is a column holding
  - the reference solution's speedup as a bar, one per source (measured in this run, or labs.toml's measurement
    on a GPU model the thresholds were calibrated on);
  - the grader's thresholds as a band from `lower` (no performance points at or below) to `full` (all of them);
  - the student's speedup as a diamond with its value, or, where it was not measured, the reason in words.

Every text drawn is plain text (no mathtext) and matplotlib escapes it in the SVG, so a device name or message
that came from a student's program cannot become markup. The output is the same on every run for the same data
(no date, a fixed hash salt). matplotlib is a pinned requirement (requirements.txt); ChartError says how to install
it where it is missing.
"""
import importlib
import io
import math
import re
import threading
from dataclasses import dataclass, field

YARDSTICK_TITLES = {
    "baseline": "Reductions: speedup over the baseline kernel (lab 01's), log scale",
    "cub": "Scan and compaction: fraction of CUB's speed (CUB time / your time)",
}
REFERENCE_COLOURS = ["#8fb3d9", "#c5d7ea", "#5b8cc0", "#dfe9f3"]
YOURS = "#d95f02"
BAND = "#1b9e77"
INK = "#222222"
MUTED = "#666666"
MAX_LABEL = 60  # characters of any text that came from a program's output (a device name)
# matplotlib's settings for every chart of the kit (this one's, and grader/classroom/class_charts.py's): text stays
# text in the SVG, no mathtext, the same bytes on every run
RC = {"svg.fonttype": "none", "svg.hashsalt": "parallel-patterns-lab", "text.parse_math": False,
      "font.family": "DejaVu Sans", "font.size": 9}


# the modules speedup_chart imports: matplotlib's import takes 0.5 to 1 s, on the grading's critical path at its end
CHART_MODULES = ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_svg", "matplotlib.lines",
                 "matplotlib.patches")


def preload() -> threading.Thread:
    """Starts importing matplotlib (CHART_MODULES) in a daemon thread, so that the chart at the end of a grading
    (report.html) finds it imported: the grader calls this at its start, while it waits on compiles and GPU runs (on
    the lent H200, the report took 1.1 s after the last lab of a one-lab grading, mostly this import). A module that
    is missing is left to speedup_chart to report; Python's import lock makes a chart drawn before the thread ends
    wait for it."""
    def run():
        for name in CHART_MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # ImportError, or a broken install: speedup_chart says so where it matters
                return
    thread = threading.Thread(target=run, name="preload-matplotlib", daemon=True)
    thread.start()
    return thread


class ChartError(Exception):
    """The chart cannot be drawn here (matplotlib is missing); the message says how to fix it."""


@dataclass
class Column:
    """One lab in the chart. yardstick: "baseline" or "cub". yours: the student's speedup, or None with why_not
    saying why in a few words ("no GPU here", "not run: a test failed"). references: {label: speedup}."""

    lab: str
    yardstick: str = "baseline"
    yours: float | None = None
    why_not: str = ""  # empty with yours None: the column has no "yours" at all (the reference ladder alone)
    lower: float | None = None
    full: float | None = None
    references: dict = field(default_factory=dict)


def plain(text, limit: int = MAX_LABEL) -> str:
    """Text fit for a label: printable characters only, at most limit of them."""
    text = re.sub(r"[^\x20-\x7e]", "?", str(text))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _wrap(text: str, width: int = 16, limit: int = 80) -> str:
    """Text on lines of about width characters (a column's note: 16), cut at limit characters."""
    lines, line = [], ""
    for word in plain(text, limit).split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join(lines + ([line] if line else []))


def _panel(ax, columns, yardstick, reference_labels):
    """Draws one yardstick's columns on ax."""
    values = [v for c in columns for v in [c.yours, c.lower, c.full, *c.references.values()] if _finite(v)]
    log = yardstick == "baseline"
    if log:
        low = min([0.5] + [v / 1.3 for v in values])
        high = max([2.0] + [v * 1.6 for v in values])
        low, high = 2.0 ** math.floor(math.log2(low)), 2.0 ** math.ceil(math.log2(high))
        ax.set_yscale("log", base=2)
        ticks = [2.0 ** k for k in range(round(math.log2(low)), round(math.log2(high)) + 1)]
        ax.set_yticks(ticks, [f"{t:g}x" for t in ticks])
        ax.axhline(1.0, color=MUTED, lw=1.0, ls="--", zorder=1)
        ax.text(len(columns) - 0.5, 1.0, "baseline ", ha="right", va="bottom", fontsize=8, color=MUTED)
    else:
        low, high = 0.0, max([1.2] + [v * 1.25 for v in values])
        ax.axhline(1.0, color=MUTED, lw=1.0, ls="--", zorder=1)
        ax.text(len(columns) - 0.5, 1.0, "CUB ", ha="right", va="bottom", fontsize=8, color=MUTED)
        ax.yaxis.set_major_formatter(lambda v, _: f"{v:.2f}")
    ax.set_ylim(low, high)
    ax.set_xlim(-0.5, len(columns) - 0.5)
    width = 0.36 / max(1, len(reference_labels))
    unit = "x" if log else ""
    for x, c in enumerate(columns):
        for k, label in enumerate(reference_labels):
            v = c.references.get(label)
            if not _finite(v):
                continue
            centre = x - 0.3 + (k + 0.5) * width
            base = low if log else 0.0
            ax.bar(centre, v - base, width * 0.9, bottom=base, zorder=1,
                   color=REFERENCE_COLOURS[k % len(REFERENCE_COLOURS)], edgecolor="#4a6f96", lw=0.6)
            ax.text(centre, v, f"{v:.2f}{unit}", ha="center", va="bottom", fontsize=7, color="#33506e", zorder=5)
        if _finite(c.lower) and _finite(c.full) and c.full > c.lower:
            ax.fill_between([x - 0.42, x + 0.42], c.lower, c.full, color=BAND, alpha=0.18, lw=0, zorder=2)
            ax.plot([x - 0.42, x + 0.42], [c.full, c.full], color=BAND, lw=1.6, zorder=3)
            ax.plot([x - 0.42, x + 0.42], [c.lower, c.lower], color=BAND, lw=1.0, ls=":", zorder=3)
        if _finite(c.yours):
            ax.plot([x + 0.2], [c.yours], marker="D", ms=9, color=YOURS, mec=INK, mew=0.8, ls="none", zorder=4)
            ax.text(x + 0.26, c.yours, f" {c.yours:.2f}{unit}", ha="left", va="center", fontsize=9,
                    fontweight="bold", color=YOURS, zorder=5)
        elif c.why_not:
            y = low * 1.15 if log else high * 0.04
            ax.text(x + 0.2, y, _wrap(c.why_not or "not measured"), ha="center", va="bottom", fontsize=7.5,
                    style="italic", color=MUTED, zorder=5,
                    bbox={"boxstyle": "round,pad=0.25", "fc": "white", "ec": "#bbbbbb", "lw": 0.6})
    labels = []
    for c in columns:
        number, _, stage = c.lab.partition("-")
        labels.append(f"{number}\n{stage}" if stage else number)
    ax.set_xticks(range(len(columns)), labels, fontsize=8.5)
    ax.set_title(YARDSTICK_TITLES.get(yardstick, yardstick), loc="left", fontsize=10.5, fontweight="bold")
    ax.grid(axis="y", color="#e3e3e3", lw=0.8, zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _legend(columns, reference_labels) -> list:
    """Legend entries for what the chart holds."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = [Patch(facecolor=REFERENCE_COLOURS[k % len(REFERENCE_COLOURS)], edgecolor="#4a6f96",
                     label=f"reference solution, {plain(label)}") for k, label in enumerate(reference_labels)]
    if any(_finite(c.lower) and _finite(c.full) for c in columns):
        handles.append(Patch(facecolor=BAND, alpha=0.35, label="grader's thresholds: no points at or below the "
                                                               "dotted line, all at the solid line"))
    if any(c.yours is not None or c.why_not for c in columns):
        handles.append(Line2D([], [], marker="D", ms=8, color=YOURS, mec=INK, ls="none", label="yours"))
    return handles


def speedup_chart(columns, *, title: str, subtitle: str = "", note: str = "") -> str:
    """The chart of columns (a list of Column) as SVG text. note, when given, is written across the chart in a box
    (such as "performance was not measured: no GPU here"). ChartError where matplotlib is missing."""
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise ChartError("matplotlib is not installed: python3 -m pip install -r requirements.txt") from None
    columns = list(columns)
    panels = [y for y in ("baseline", "cub") if any(c.yardstick == y for c in columns)]
    if not panels:
        raise ChartError("no lab with a performance test to draw")
    reference_labels = list(dict.fromkeys(label for c in columns for label in c.references))
    with matplotlib.rc_context(RC):
        head = 1.25 + (0.3 if subtitle else 0) + 0.17 * ((len(reference_labels) + 3) // 2)
        height = head + 3.1 * len(panels)
        fig = Figure(figsize=(10, height))
        top = 1 - (head + 0.05) / height
        axes = fig.subplots(len(panels), 1, squeeze=False,
                            gridspec_kw={"hspace": 0.62, "top": top, "bottom": 0.55 / height,
                                         "left": 0.07, "right": 0.98})
        fig.text(0.01, 1 - 0.3 / height, plain(title, 120), fontsize=13, fontweight="bold", color=INK, va="center")
        if subtitle:
            fig.text(0.01, 1 - 0.62 / height, plain(subtitle, 160), fontsize=9, color=MUTED, va="center")
        for k, yardstick in enumerate(panels):
            _panel(axes[k][0], [c for c in columns if c.yardstick == yardstick], yardstick, reference_labels)
        fig.legend(handles=_legend(columns, reference_labels), loc="upper left", ncol=2, fontsize=8, frameon=False,
                   bbox_to_anchor=(0.06, 1 - (0.45 + (0.3 if subtitle else 0)) / height))
        if note:
            fig.text(0.5, (axes[-1][0].get_position().y0 + axes[0][0].get_position().y1) / 2, _wrap(note, 70, 240),
                     ha="center", va="center", fontsize=12, color="#8a3b00", zorder=10,
                     bbox={"boxstyle": "round,pad=0.6", "fc": "#fff4e8", "ec": YOURS, "lw": 1.2, "alpha": 0.95})
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def inline_svg(svg: str) -> str:
    """An SVG document as an element to put inside HTML: without its XML declaration and doctype."""
    start = svg.find("<svg")
    if start < 0:
        raise ChartError("not an SVG document")
    return svg[start:]
