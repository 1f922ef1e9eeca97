"""Figure 7 of the handouts, the reference ladder (ladder.svg): every lab's speedup over the baseline (labs 01-05)
and over CUB, from the committed handouts/figures/ladder.json or from what `make bench` writes (ladder.jsonl,
ladder.md); drawn by `make figures` (tools/author/figures.py)."""
import json
import re
from pathlib import Path

from grader.config import lab_of, load_config
from grader.patterns import KIT, format_size, lab_dirs
from tools.author.svg import INK, SIZE_COLOURS, Svg, num

def size_label(n) -> str:
    """A size as the ladder shows it: text as it is, a number as grader.patterns.format_size writes it."""
    return n if isinstance(n, str) else format_size(n)


def load_ladder(path: Path) -> dict:
    """The ladder's numbers from our JSON, or from what `make bench` writes (ladder.jsonl or ladder.md)."""
    text = path.read_text()
    if path.suffix == ".md":
        return ladder_from_markdown(text, path)
    if path.suffix == ".jsonl":
        return ladder_from_jsonl(text, path)
    data = json.loads(text)
    for key in ("device", "rows"):
        if key not in data:
            raise ValueError(f"{path}: no {key!r}")
    return data


def ladder_from_markdown(text: str, path: Path) -> dict:
    """build/bench/ladder.md: `Reference ladder on DEVICE (sm X.Y); ...`, then the table
    `| lab | n | x baseline | x CUB | % copy | ...`."""
    head = re.search(r"Reference ladder on (.+?) \(sm ([^)]*)\)", text)
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and re.fullmatch(r"\d\d-[\w-]+", cells[0]):
            rows.append({"lab": cells[0], "n": cells[1],
                         "x_baseline": None if cells[2] == "-" else float(cells[2]),
                         "x_cub": float(cells[3]),
                         "pct_copy": int(cells[4]) if cells[4].isdigit() else float(cells[4])})
    if not rows:
        raise ValueError(f"{path}: no table rows like `| 01-global-strided | 2^26 | ...`")
    data = {"device": head.group(1) if head else "unknown GPU", "source": f"make bench ({path.name})", "rows": rows}
    if head:
        data["sm"] = head.group(2)
    return data


def ladder_from_jsonl(text: str, path: Path) -> dict:
    """build/bench/ladder.jsonl: tools/student/bench.py runs, for each size, every lab of solutions/ in order, and each run
    appends a plan line and one bench line. The lab is not in the line, so it is recovered from that order; the
    reductions' lines (the only ones with student_gbps) must fall on the reduction labs, or the file is refused."""
    bench = [json.loads(line) for line in text.splitlines() if line.strip()]
    bench = [r for r in bench if r.get("kind") == "bench"]
    config = load_config()
    labs = [(d.name, lab_of(d, config).pattern) for d in lab_dirs(KIT / "solutions")]
    sizes = []
    for r in bench:
        if not sizes or sizes[-1][0] != r["n"]:
            sizes.append((r["n"], []))
        sizes[-1][1].append(r)
    problem = None
    if not bench:
        problem = "no bench lines"
    for n, group in sizes:
        if len(group) != len(labs):
            problem = f"{len(group)} bench lines at n={n}, but solutions/ has {len(labs)} labs (was --lab used?)"
        elif any((lab[1] == "reduce") != ("student_gbps" in r) for lab, r in zip(labs, group)):
            problem = f"at n={n} the lines do not follow the labs of solutions/ in order"
    if problem:
        raise ValueError(f"{path}: {problem}; draw from build/bench/ladder.md instead, which names each lab")
    rows = []
    for n, group in sizes:
        for (name, pattern), r in zip(labs, group):
            rows.append({"lab": name, "n": size_label(n),
                         "x_baseline": round(r["speedup"], 2) if pattern == "reduce" else None,
                         "x_cub": round(r["cub_ms"] / r["student_ms"], 2),
                         "pct_copy": round(100 * r["copy_ms"] / r["student_ms"])})
    data = {"device": bench[0].get("device", "unknown GPU"), "source": f"make bench ({path.name})", "rows": rows}
    if bench[0].get("sm"):
        data["sm"] = bench[0]["sm"]
    return data


def log_y(v, lo, hi, top, bottom):
    from math import log2
    return bottom - (log2(v) - log2(lo)) / (log2(hi) - log2(lo)) * (bottom - top)


def ladder_figure(data: dict, sizes_wanted=("2^26", "2^28")) -> Svg:
    rows = data["rows"]
    present = list(dict.fromkeys(r["n"] for r in rows))
    sizes = [s for s in sizes_wanted if s in present] or present[-2:]
    labs = list(dict.fromkeys(r["lab"] for r in rows))
    value = {(r["lab"], r["n"]): r for r in rows}
    reductions = [lab for lab in labs if any(value.get((lab, s), {}).get("x_baseline") is not None for s in sizes)]
    width = 980
    plot_left, plot_right = 86, width - 30
    panel_h = 250
    top1 = 136
    bottom1 = top1 + panel_h
    top2 = bottom1 + 120
    bottom2 = top2 + panel_h
    height = bottom2 + 96
    about = [data["device"]]
    for key, fmt in (("driver", "driver {}"), ("cuda", "CUDA {}"), ("sm", "sm {}"), ("date", "{}")):
        if data.get(key):
            about.append(fmt.format(data[key]))
    where = ", ".join(about)
    desc_parts = []
    for r in rows:
        if r["n"] in sizes:
            xb = f"{r['x_baseline']:.2f}x baseline, " if r.get("x_baseline") is not None else ""
            desc_parts.append(f"{r['lab']} at {r['n']}: {xb}{r['x_cub']:.2f}x CUB, {num(r['pct_copy'])}% of copy")
    svg = Svg(width, height, f"Reference ladder on {data['device']}",
              f"Speed of the reference solutions measured on {where} ({data.get('source', 'make bench')}). "
              + "; ".join(desc_parts) + ".")
    svg.text(14, 28, f"The reference ladder on {data['device']}", size=18, anchor="start", weight="bold")
    svg.text(14, 50, f"{where}; {data.get('source', 'make bench')}", size=13, anchor="start", fill="#444444")
    lx = 14
    for k, s in enumerate(sizes):
        svg.rect(lx, 66, 16, 16, fill=SIZE_COLOURS[k % len(SIZE_COLOURS)], stroke="none")
        svg.text(lx + 22, 79, f"n = {s} elements", size=13, anchor="start")
        lx += 170

    def bars(labs_here, top, bottom, get, scale_y, fmt):
        slot = (plot_right - plot_left) / len(labs_here)
        bar_w = min(34, slot * 0.7 / len(sizes))
        for i, lab in enumerate(labs_here):
            centre = plot_left + slot * (i + 0.5)
            for k, s in enumerate(sizes):
                r = value.get((lab, s))
                v = get(r) if r else None
                if v is None:
                    continue
                x = centre + (k - len(sizes) / 2) * bar_w
                y = scale_y(v)
                base = scale_y(base_value)
                svg.rect(x, min(y, base), bar_w - 2, abs(base - y), fill=SIZE_COLOURS[k % len(SIZE_COLOURS)],
                         stroke="none")
                svg.text(x + (bar_w - 2) / 2, min(y, base) - 5, fmt(v), size=11, halo=True)
            number, _, stage = lab.partition("-")
            svg.text(centre, bottom + 18, number, size=13, weight="bold")
            svg.text(centre, bottom + 34, stage, size=12, fill="#444444")

    # panel 1: x baseline, log scale
    svg.text(14, top1 - 14, "Reductions (labs 01-05): speedup over the baseline (lab 01's kernel), log scale",
             size=15, anchor="start", weight="bold")
    peak = max([r["x_baseline"] for r in rows if r.get("x_baseline") is not None and r["n"] in sizes] + [1.0])
    lo, hi = 0.5, 2.0 ** max(1, int(peak * 1.3).bit_length())
    def y1(v):
        return log_y(max(v, lo), lo, hi, top1, bottom1)
    tick = lo
    while tick <= hi:
        yy = y1(tick)
        svg.line(plot_left, yy, plot_right, yy, stroke="#e3e3e3", width=1)
        svg.text(plot_left - 8, yy + 4, f"{num(tick)}x", size=11, anchor="end", fill="#444444")
        tick *= 2
    svg.line(plot_left, y1(1), plot_right, y1(1), stroke="#555555", width=1.2, dash="5,4")
    svg.text(plot_right, y1(1) - 5, "baseline", size=11, anchor="end", fill="#555555")
    base_value = lo
    bars(reductions, top1, bottom1, lambda r: r.get("x_baseline"), y1, lambda v: f"{v:.2f}")
    svg.line(plot_left, bottom1, plot_right, bottom1, stroke=INK, width=1)
    # panel 2: x CUB, linear
    svg.text(14, top2 - 14, "Every lab: fraction of CUB's speed (CUB time / solution time; 1.00 = as fast as CUB)",
             size=15, anchor="start", weight="bold")
    cub_peak = max([r["x_cub"] for r in rows if r["n"] in sizes] + [1.0])
    top_v = 0.25 * int(cub_peak * 1.15 / 0.25 + 1)
    def y2(v):
        return bottom2 - v / top_v * (bottom2 - top2)
    tick = 0.0
    while tick <= top_v + 1e-9:
        yy = y2(tick)
        svg.line(plot_left, yy, plot_right, yy, stroke="#e3e3e3", width=1)
        svg.text(plot_left - 8, yy + 4, f"{tick:.2f}", size=11, anchor="end", fill="#444444")
        tick += 0.25
    svg.line(plot_left, y2(1), plot_right, y2(1), stroke="#555555", width=1.2, dash="5,4")
    svg.text(plot_left + 4, y2(1) - 5, "CUB", size=11, anchor="start", fill="#555555")
    base_value = 0.0
    bars(labs, top2, bottom2, lambda r: r["x_cub"], y2, lambda v: f"{v:.2f}")
    svg.line(plot_left, bottom2, plot_right, bottom2, stroke=INK, width=1)
    svg.text(14, bottom2 + 66, "Labs 01-05 (float sums) are scored against the baseline, labs 06-08 (int scans and "
             "compaction) against CUB's DeviceScan and DeviceSelect.", size=12, anchor="start", fill="#555555")
    return svg
