"""`make figures`: draw the handouts' figures as SVG, computed from the algorithms they show (standard library only).

    python3 -m tools.author.figures                  every figure into handouts/figures/
    python3 -m tools.author.figures --out DIR        the same into DIR (the test regenerates into a temporary folder)
    python3 -m tools.author.figures --ladder FILE    ladder.svg from another measurement: FILE is
                                                     build/bench/ladder.jsonl or build/bench/ladder.md (what `make
                                                     bench` writes) or a JSON file shaped like ladder.json
    python3 -m tools.author.figures --ladder FILE --save-data handouts/figures/ladder.json
                                                     also store that measurement as the committed data file, so that
                                                     a plain `make figures` (and the figures test) redraws the same

Figures (each one is computed: the trees and scans are simulated step by step, the bank table from
bank = word index mod 32, the look-back from a list of tile totals, the histogram's bins by counting a fixed
input block by block, the ladder from its data file):

  reduce-tree-interleaved.svg  labs 01-02: stride 1, 2, 4, 8; active threads spread over every warp
  reduce-tree-sequential.svg   lab 03: stride 8, 4, 2, 1; active threads contiguous
  bank-conflicts.svg           which bank each active lane of warp 0 hits, and how many ways the access conflicts
  scan-kogge-stone.svg         lab 06: Kogge-Stone on 16 elements, with its additions and steps
  scan-brent-kung.svg          lab 06: Brent-Kung on 16 elements (up-sweep, down-sweep)
  lookback.svg                 lab 08: tiles with X/A/P status, one tile looking back to the nearest P
  histogram-privatization.svg  lab 09: blocks count into private shared bins, merged with one atomicAdd per bin
  ladder.svg                   the reference ladder: x baseline (labs 01-05) and x CUB (every lab); ladder_figure.py

The output is byte-identical on every run: no dates, no random numbers, fixed number formatting.
"""
import argparse
import json
import sys
from pathlib import Path

from grader.patterns import KIT
from tools.author.ladder_figure import ladder_figure, load_ladder
from tools.author.svg import (ACTIVE, ACTIVE_EDGE, BAD, BUSY_WARP, CELL, INK, LINE, MUTED, OK, SIZE_COLOURS, STALE,
                               STATUS_EDGE, STATUS_FILL, Svg, num)

FIGURES = KIT / "handouts" / "figures"
LADDER_DATA = FIGURES / "ladder.json"

# ---- the algorithms, simulated ------------------------------------------------------------------------------------

def interval_label(iv) -> str:
    lo, hi = iv
    return f"x{lo}" if lo == hi else f"{lo}..{hi}"


def set_label(members, n) -> str:
    """A cell of a reduction tree: x3, 0..7 (contiguous), 0+8, 0+4+8+12, evens / odds."""
    m = sorted(members)
    if len(m) == 1:
        return f"x{m[0]}"
    if m[-1] - m[0] == len(m) - 1:
        return f"{m[0]}..{m[-1]}"
    if len(m) <= 4:
        return "+".join(map(str, m))
    if len(m) * 2 == n and all(b - a == 2 for a, b in zip(m, m[1:])):
        return "evens" if m[0] == 0 else "odds"
    return f"{m[0]},{m[1]}..{m[-1]}"


def add_intervals(left, right):
    """The sum of x[left] and x[right] as an interval; the two must be adjacent (that is what makes it a sum)."""
    assert left[1] + 1 == right[0], (left, right)
    return (left[0], right[1])


def reduction_steps(n: int, sequential: bool):
    """Each step of a block's reduction tree: (stride, {thread t: (source index, destination index)})."""
    steps = []
    strides = [n >> k for k in range(1, n.bit_length())] if sequential else [1 << k for k in range(n.bit_length() - 1)]
    for stride in strides:
        if sequential:  # lab 03: if (t < stride) partial[t] += partial[t + stride]
            ops = {t: (t + stride, t) for t in range(n) if t < stride}
        else:           # labs 01-02: if (t % (2*stride) == 0) partial[t] += partial[t + stride]
            ops = {t: (t + stride, t) for t in range(n) if t % (2 * stride) == 0}
        steps.append((stride, ops))
    return steps


def kogge_stone_steps(n: int):
    """Lab 06's Kogge-Stone: at stride 1, 2, 4, ... s[t] += s[t - stride] for t >= stride."""
    return [(f"stride {stride}", [(t - stride, t) for t in range(stride, n)])
            for stride in (1 << k for k in range(n.bit_length() - 1))]


def brent_kung_steps(n: int):
    """Lab 06's Brent-Kung, as solutions/06-scan/scan.cu writes it (k = (t + 1) * 2 * stride - 1)."""
    steps = []
    stride = 1
    while stride < n:
        steps.append((f"up-sweep, stride {stride}",
                      [(k - stride, k) for k in ((t + 1) * 2 * stride - 1 for t in range(n)) if k < n]))
        stride *= 2
    stride = n // 4
    while stride > 0:
        steps.append((f"down-sweep, stride {stride}",
                      [(k, k + stride) for k in ((t + 1) * 2 * stride - 1 for t in range(n)) if k + stride < n]))
        stride //= 2
    return steps


def run_scan(n: int, steps):
    """Apply the steps to intervals; every element must end with its inclusive prefix 0..i."""
    state = [(i, i) for i in range(n)]
    rows = []
    for label, ops in steps:
        new = list(state)
        for src, dst in ops:  # each step reads the old values, then writes (the barrier between read and write)
            new[dst] = add_intervals(state[src], state[dst])
        state = new
        rows.append((label, ops, list(state)))
    assert state == [(0, i) for i in range(n)], state
    return rows


# ---- figures 1-2: the reduction trees -----------------------------------------------------------------------------

TREE_N = 16
TREE_WARP = 4  # lanes per warp in the picture (32 on the GPU)


def cell_text(svg, x, y, w, h, label, weight=None, fill=INK, largest=13):
    """A cell's label in monospace, as large as fits (a glyph is 0.6 em wide); a long sum goes on two lines."""
    lines = [label]
    if len(label) > 6 and "+" in label:
        cut = label.index("+", len(label) // 2 - 1)
        lines = [label[:cut], label[cut:]]
    size = min(largest, round((w - 6) / (0.61 * max(map(len, lines))), 1))
    if len(lines) == 1:
        svg.text(x + w / 2, y + h / 2 + size * 0.36, label, size=size, mono=True, weight=weight, fill=fill)
    else:
        size = min(size, 12)
        svg.text(x + w / 2, y + h / 2 - 2, lines[0], size=size, mono=True, weight=weight, fill=fill)
        svg.text(x + w / 2, y + h / 2 + size - 1, lines[1], size=size, mono=True, weight=weight, fill=fill)


def draw_array_rows(svg, x0, y0, n, rows, cell_w, gap, row_h, pitch, arrows_from, label_x, warp=None):
    """Rows of n cells: rows[r] = (label, sublabel, written {index: text}, values [text], arrows [(src, dst)])."""
    for r, (label, sublabel, written, values, arrows) in enumerate(rows):
        y = y0 + r * pitch
        if warp:
            for w in range(n // warp):
                busy = any(i in written for i in range(w * warp, (w + 1) * warp))
                if busy and r > 0:
                    svg.rect(x0 + w * warp * (cell_w + gap) - gap / 2 - 2, y - 6, warp * (cell_w + gap) + 4,
                             row_h + 12, fill=BUSY_WARP, stroke="#9db8d9", rx=5)
        svg.text(label_x, y + row_h / 2, label, size=14, anchor="end", weight="bold")
        if sublabel:
            svg.text(label_x, y + row_h / 2 + 17, sublabel, size=12, anchor="end", fill="#444444")
        for i in range(n):
            cx = x0 + i * (cell_w + gap)
            if r == 0:
                svg.rect(cx, y, cell_w, row_h, fill=CELL, stroke=LINE)
                cell_text(svg, cx, y, cell_w, row_h, values[i])
            elif i in written:
                svg.rect(cx, y, cell_w, row_h, fill=ACTIVE, stroke=ACTIVE_EDGE, width=1.6)
                cell_text(svg, cx, y, cell_w, row_h, values[i], weight="bold")
            else:
                svg.rect(cx, y, cell_w, row_h, fill=STALE, stroke="#c8c8c8")
                cell_text(svg, cx, y, cell_w, row_h, values[i], fill=MUTED, largest=12)
        if r > 0:
            top = y - 2
            bottom = y - pitch + row_h + 2
            for src, dst in arrows:
                sx = x0 + src * (cell_w + gap) + cell_w / 2
                dx = x0 + dst * (cell_w + gap) + cell_w / 2
                if arrows_from == "both":
                    svg.line(dx, bottom, dx, top, arrow=True)
                svg.line(sx, bottom, dx + (4 if sx > dx else -4 if sx < dx else 0), top, arrow=True)


def reduce_tree_figure(sequential: bool) -> Svg:
    n, warp = TREE_N, TREE_WARP
    steps = reduction_steps(n, sequential)
    cell_w, gap, row_h, pitch = 50, 6, 34, 84
    x0, y0 = 170, 122
    width = x0 + n * (cell_w + gap) + 14
    height = y0 + len(steps) * pitch + row_h + 96
    name = "sequential addressing (lab 03)" if sequential else "interleaved pairs (labs 01 and 02)"
    code = ("if (t < stride) partial[t] += partial[t + stride];" if sequential
            else "if (t % (2*stride) == 0) partial[t] += partial[t + stride];")
    state = [frozenset([i]) for i in range(n)]
    rows = [("input", "", {}, [set_label(m, n) for m in state], [])]
    warp_steps = 0
    adds = 0
    for stride, ops in steps:
        new = list(state)
        for t, (src, dst) in ops.items():
            assert not state[dst] & state[src]  # every element is added once
            new[dst] = state[dst] | state[src]
        state = new
        busy = len({t // warp for t in ops})
        warp_steps += busy
        adds += len(ops)
        threads = f"{len(ops)} thread{'s' if len(ops) != 1 else ''}"
        rows.append((f"stride {stride}", f"{threads}, {busy} of {n // warp} warps",
                     {dst: None for _, (_, dst) in ops.items()},
                     [set_label(m, n) for m in state],
                     [(src, dst) for _, (src, dst) in ops.items()]))
    assert state[0] == frozenset(range(n)) and adds == n - 1
    desc = (f"Reduction tree over {n} elements with {name}. Each row is one step; the orange cells are written at "
            f"that step, by the thread of the same index; a..b means x_a + ... + x_b and 0+8 means x0 + x8. "
            f"Blue bands mark the warps "
            f"(of {warp} lanes in the picture) that have at least one active thread and so must issue. "
            f"{adds} additions in {len(steps)} steps; {warp_steps} warp-steps issued.")
    svg = Svg(width, height, f"Reduction tree, {name}", desc)
    svg.text(14, 28, f"Reduction tree, {name}", size=18, anchor="start", weight="bold")
    svg.text(14, 50, code, size=13, anchor="start", mono=True)
    # warp brackets and thread indices over the columns
    for w in range(n // warp):
        left = x0 + w * warp * (cell_w + gap)
        right = left + warp * (cell_w + gap) - gap
        svg.line(left, 80, right, 80, stroke="#3b6fb6", width=2)
        svg.text((left + right) / 2, 76, f"warp {w}", size=13, fill="#3b6fb6", weight="bold")
    svg.text(x0 - 14, 102, "thread t", size=12, anchor="end", fill="#444444")
    for i in range(n):
        svg.text(x0 + i * (cell_w + gap) + cell_w / 2, 102, str(i), size=12, fill="#444444", mono=True)
    draw_array_rows(svg, x0, y0, n, rows, cell_w, gap, row_h, pitch, "both", x0 - 14, warp=warp)
    foot = y0 + len(steps) * pitch + row_h + 30
    svg.text(14, foot, f"{adds} additions in {len(steps)} steps; the warps issue {warp_steps} warp-steps in all "
             f"(blue bands).", size=13, anchor="start")
    if sequential:
        note = ("Active threads are the lowest ones: a warp is either all busy or idle until fewer threads than a "
                "warp remain.")
    else:
        note = ("Active threads are spread out: every warp stays busy for a few lanes at every step "
                "(control divergence).")
    svg.text(14, foot + 20, note, size=13, anchor="start")
    svg.text(14, foot + 40, f"Drawn with warps of {warp} lanes to fit {n} elements; on the GPU a warp has 32 lanes "
             f"and a block 1024 threads, with the same pattern.", size=12, anchor="start", fill="#555555")
    return svg


# ---- figure 3: bank conflicts -------------------------------------------------------------------------------------

BANKS = 32
BLOCK = 1024


def bank_access(words):
    """Distinct words per bank for one warp-wide access (lanes reading the same word share one broadcast)."""
    per_bank = [set() for _ in range(BANKS)]
    for w in words:
        per_bank[w % BANKS].add(w)
    counts = [len(s) for s in per_bank]
    return counts, max(counts) if words else 0


def bank_panels():
    """(title, code, [(stride, active lanes of warp 0, words those lanes read as partial[...])])."""
    lanes = range(32)
    modulo = [(s, [t for t in lanes if t % (2 * s) == 0]) for s in (1, 2, 4, 8, 16)]
    strided = [(s, [t for t in lanes if 2 * s * t < BLOCK]) for s in (1, 2, 4, 8, 16)]
    sequential = [(s, [t for t in lanes if t < s]) for s in (512, 16, 8, 4, 2, 1)]
    return [
        ("Lab 02, interleaved: the lanes that work read their own word",
         "if (t % (2*stride) == 0) partial[t] += partial[t + stride];",
         [(s, act, [t for t in act]) for s, act in modulo]),
        ("Interleaved with a strided index (Harris's kernel 2, not one of the labs): no divergence, but conflicts",
         "int k = 2*stride*t; if (k < blockDim.x) partial[k] += partial[k + stride];",
         [(s, act, [2 * s * t for t in act]) for s, act in strided]),
        ("Lab 03, sequential addressing: consecutive lanes, consecutive words",
         "if (t < stride) partial[t] += partial[t + stride];",
         [(s, act, [t for t in act]) for s, act in sequential]),
    ]


def bank_conflicts_figure() -> Svg:
    panels = bank_panels()
    cell, x0 = 22, 250
    width = x0 + BANKS * cell + 110
    row_h, panel_gap = 26, 74
    height = 92 + sum(len(rows) * row_h + panel_gap for _, _, rows in panels) + 70
    summary = []
    for title, _, rows in panels:
        summary.append(title.split(":")[0] + ": " + ", ".join(
            f"stride {s} {bank_access(words)[1]}-way" for s, _, words in rows))
    desc = ("Shared-memory banks hit by the active lanes of warp 0 for the first operand of the tree's add "
            "(bank = word index mod 32; the number in a bank is how many different words the warp asks it for, "
            "and the access takes as many passes as the largest number). " + "; ".join(summary) + ".")
    svg = Svg(width, height, "Shared-memory bank conflicts of the reduction trees", desc)
    svg.text(14, 28, "Shared-memory banks hit by warp 0 (first operand of the add)", size=18, anchor="start",
             weight="bold")
    svg.text(14, 50, "bank = word index mod 32. A number is how many different words of that bank the warp asks for; "
             "the access takes that many passes (n-way conflict).", size=13, anchor="start")
    y = 92
    for title, code, rows in panels:
        svg.text(14, y, title, size=15, anchor="start", weight="bold")
        svg.text(14, y + 19, code, size=12, anchor="start", mono=True)
        y += 34
        svg.text(x0 - 10, y + 12, "bank", size=11, anchor="end", fill="#444444")
        for b in range(BANKS):
            svg.text(x0 + b * cell + cell / 2, y + 12, str(b), size=10, fill="#444444")
        svg.text(x0 + BANKS * cell + 12, y + 12, "conflict", size=11, anchor="start", fill="#444444")
        y += 18
        for stride, active, words in rows:
            counts, ways = bank_access(words)
            label = f"stride {stride}" if stride < 32 else f"stride {stride}..32"
            svg.text(14, y + 17, label, size=13, anchor="start", weight="bold")
            svg.text(x0 - 10, y + 17, f"{len(active)} lane{'s' if len(active) != 1 else ''} active", size=12,
                     anchor="end")
            for b in range(BANKS):
                c = counts[b]
                fill = CELL if c == 0 else OK if c == 1 else BAD[min(c.bit_length() - 2, len(BAD) - 1)]
                svg.rect(x0 + b * cell, y + 2, cell, row_h - 4, fill=fill, stroke="#b5b5b5", width=0.8)
                if c:
                    svg.text(x0 + b * cell + cell / 2, y + 18, str(c), size=11, mono=True)
            verdict = "none" if ways <= 1 else f"{ways}-way"
            svg.text(x0 + BANKS * cell + 12, y + 18, verdict, size=13, anchor="start",
                     weight="bold" if ways > 1 else None, fill="#b3261e" if ways > 1 else "#2e7d32")
            y += row_h
        y += panel_gap - 34
    svg.text(14, y + 6, "The second operand, partial[... + stride], hits the same pattern shifted by stride. Words of "
             "other warps do not conflict: a warp's access is served on its own.", size=12, anchor="start",
             fill="#555555")
    return svg


# ---- figures 4-5: the scans ---------------------------------------------------------------------------------------

SCAN_N = 16


def scan_figure(kind: str) -> Svg:
    n = SCAN_N
    steps = kogge_stone_steps(n) if kind == "kogge-stone" else brent_kung_steps(n)
    result = run_scan(n, steps)
    adds = sum(len(ops) for _, ops in steps)
    log2n = n.bit_length() - 1
    if kind == "kogge-stone":
        assert adds == n * log2n - n + 1 and len(steps) == log2n
        name, formula = "Kogge-Stone", f"n log2 n - n + 1 = {adds} additions in log2 n = {len(steps)} steps"
        code = "for stride = 1, 2, 4, ...:  if (t >= stride) s[t] += s[t - stride]   (read, barrier, write, barrier)"
    else:
        assert adds == 2 * n - 2 - log2n and len(steps) == 2 * log2n - 1
        name, formula = "Brent-Kung", f"2n - 2 - log2 n = {adds} additions in 2 log2 n - 1 = {len(steps)} steps"
        code = "k = (t+1)*2*stride - 1;  up: s[k] += s[k - stride];  down: s[k + stride] += s[k]"
    cell_w, gap, row_h, pitch = 44, 6, 30, 80
    x0, y0 = 190, 96
    width = x0 + n * (cell_w + gap) + 14
    height = y0 + len(steps) * pitch + row_h + 84
    desc = (f"{name} inclusive scan of {n} elements. Each row is one step; the orange cells are written at that "
            f"step, each from the cell its arrow starts at, and a..b means x_a + ... + x_b. {formula}; "
            f"per step: " + ", ".join(f"{label} {len(ops)}" for label, ops in steps) + ".")
    svg = Svg(width, height, f"{name} scan of {n} elements", desc)
    svg.text(14, 28, f"{name} scan of {n} elements", size=18, anchor="start", weight="bold")
    svg.text(14, 50, code, size=12, anchor="start", mono=True)
    svg.text(x0 - 14, 82, "index", size=12, anchor="end", fill="#444444")
    for i in range(n):
        svg.text(x0 + i * (cell_w + gap) + cell_w / 2, 82, str(i), size=12, fill="#444444", mono=True)
    rows = [("input", "", {}, [f"x{i}" for i in range(n)], [])]
    for label, ops, state in result:
        head, _, tail = label.rpartition(", ")
        rows.append((tail, f"{head + ': ' if head else ''}{len(ops)} add{'s' if len(ops) != 1 else ''}",
                     {dst: None for _, dst in ops}, [interval_label(iv) for iv in state], ops))
    draw_array_rows(svg, x0, y0, n, rows, cell_w, gap, row_h, pitch, "both", x0 - 14)
    foot = y0 + len(steps) * pitch + row_h + 34
    svg.text(14, foot, f"{name}: {formula}.", size=14, anchor="start", weight="bold")
    overlap = any({src for src, _ in ops} & {dst for _, dst in ops} for _, ops in steps)
    assert overlap == (kind == "kogge-stone")
    other = ("Few steps, but about n log2 n additions: not work-efficient. A step reads cells that the same step "
             "writes: read, barrier, then write." if kind == "kogge-stone" else
             "About 2n additions (work-efficient), at the price of more steps with fewer threads busy. No step "
             "reads a cell it writes: one barrier per step.")
    svg.text(14, foot + 22, other, size=13, anchor="start")
    return svg


# ---- figure 6: decoupled look-back --------------------------------------------------------------------------------

LOOKBACK_AGGREGATES = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]
LOOKBACK_STATUS = "PPPPPAPAAAAAAAXX"  # what the status words hold at the moment drawn
LOOKBACK_TILE = 13
LOOKBACK_WINDOW = 4  # lanes per look-back window in the picture (32 in lab 08)


def lookback_walk(statuses, values, tile, window):
    """Lab 08's look-back: windows of `window` predecessors, nearest first; sum up to the nearest P, stop there."""
    prefix, windows = 0, []
    for end in range(tile - 1, -1, -window):
        lanes = [end - lane for lane in range(window)]
        seen = [(statuses[k], values[k]) if k >= 0 else ("P", 0) for k in lanes]
        assert all(s != "X" for s, _ in seen), "the warp would wait here"
        first_p = next((lane for lane, (s, _) in enumerate(seen) if s == "P"), None)
        used = lanes if first_p is None else lanes[:first_p + 1]
        prefix += sum(values[k] for k in used if k >= 0)
        windows.append((lanes, used, first_p is not None))
        if first_p is not None:
            break
    return prefix, windows


def lookback_figure() -> Svg:
    a = LOOKBACK_AGGREGATES
    inclusive = [sum(a[:k + 1]) for k in range(len(a))]
    values = [inclusive[k] if s == "P" else a[k] if s == "A" else 0 for k, s in enumerate(LOOKBACK_STATUS)]
    tile = LOOKBACK_TILE
    prefix, windows = lookback_walk(LOOKBACK_STATUS, values, tile, LOOKBACK_WINDOW)
    assert prefix == inclusive[tile - 1]
    n = len(a)
    box, gap = 54, 8
    x0, y0 = 24, 118
    width = x0 + n * (box + gap) + 16
    height = y0 + box + 44 + 54 + 20 * len(windows) + 28 + 64
    used = [k for _, u, _ in windows for k in u]
    desc = (f"Decoupled look-back over {n} tiles. Status words: " +
            ", ".join(f"tile {k} {s}" + (f" {values[k]}" if s != "X" else "") for k, s in enumerate(LOOKBACK_STATUS)) +
            f". Tile {tile} has published its aggregate A {a[tile]} and looks back in windows of "
            f"{LOOKBACK_WINDOW} tiles: it adds tiles {', '.join(map(str, used))} (stopping at the P of tile "
            f"{used[-1]}), so its exclusive prefix is {prefix}, and it publishes P {prefix + a[tile]}.")
    svg = Svg(width, height, "Decoupled look-back (lab 08)", desc)
    svg.text(14, 28, "Decoupled look-back: tile 13 finds the sum of everything before it", size=18, anchor="start",
             weight="bold")
    legend = [("X", "nothing published yet"), ("A", "aggregate: the tile's own total"),
              ("P", "inclusive prefix: everything up to its end")]
    lx = 14
    for s, text in legend:
        svg.rect(lx, 42, 22, 22, fill=STATUS_FILL[s], stroke=STATUS_EDGE[s], rx=3)
        svg.text(lx + 11, 58, s, size=14, weight="bold")
        svg.text(lx + 30, 58, text, size=13, anchor="start")
        lx += 30 + 8.2 * len(text) + 24
    svg.text(14, 90, "status word of each tile (flag and value in one 64-bit word), at one moment:", size=13,
             anchor="start", fill="#444444")
    for k, s in enumerate(LOOKBACK_STATUS):
        x = x0 + k * (box + gap)
        svg.text(x + box / 2, y0 - 8, f"tile {k}", size=12, fill="#444444")
        current = k == tile
        svg.rect(x, y0, box, box, fill=STATUS_FILL[s], stroke="#1f4e9c" if current else STATUS_EDGE[s],
                 width=3 if current else 1.2, rx=5)
        svg.text(x + box / 2, y0 + 25, s, size=20, weight="bold")
        svg.text(x + box / 2, y0 + 45, str(values[k]) if s != "X" else "-", size=13, mono=True)
        if k > tile:
            svg.text(x + box / 2, y0 + box + 18, "loading", size=11, fill="#555555", italic=True)
    cx = x0 + tile * (box + gap) + box / 2
    svg.text(cx, y0 + box + 18, "this tile", size=12, fill="#1f4e9c", weight="bold")
    # the windows, nearest first, as brackets under the tiles
    y = y0 + box + 44
    for w, (lanes, used_here, stops) in enumerate(windows):
        right = x0 + lanes[0] * (box + gap) + box
        left = x0 + lanes[-1] * (box + gap)
        svg.path(f"M{num(left)},{num(y - 8)} L{num(left)},{num(y)} L{num(right)},{num(y)} L{num(right)},{num(y - 8)}",
                 stroke="#1f4e9c", width=1.6)
        for k in used_here:
            kx = x0 + k * (box + gap) + box / 2
            svg.line(kx, y, kx, y + 16, stroke="#1f4e9c", width=1.6)
            svg.text(kx, y + 32, f"+{values[k]}", size=13, mono=True, fill="#1f4e9c", weight="bold")
        if stops:
            text = (f"window {w + 1}: tile {used_here[-1]} is P: add tiles {used_here[0]}..{used_here[-1]}, stop "
                    f"(tile {lanes[-1]} is not needed)" if used_here != lanes else
                    f"window {w + 1}: tile {used_here[-1]} is P: add all, stop")
        else:
            text = f"window {w + 1}: tiles {lanes[0]}..{lanes[-1]} all A: add all, look further back"
        svg.text(right, y + 54 + 20 * w, text, size=12, anchor="end", fill="#1f4e9c")
        if w == 0:
            svg.path(f"M{num(cx)},{num(y0 + box + 24)} C{num(cx)},{num(y0 + box + 40)} {num(right + 20)},"
                     f"{num(y - 14)} {num(right + 4)},{num(y - 4)}", stroke="#1f4e9c", width=1.6, arrow=True)
    y += 54 + 20 * len(windows) + 28
    terms = " + ".join(str(values[k]) for k in used)
    svg.text(14, y, f"exclusive prefix of tile {tile} = {terms} = {prefix}", size=14, anchor="start", weight="bold",
             mono=True)
    svg.text(14, y + 24, f"tile {tile} then publishes P {prefix} + {a[tile]} = {prefix + a[tile]} and writes its "
             f"outputs. It waited only for its predecessors' A's, never for their look-backs.", size=13,
             anchor="start")
    svg.text(14, y + 46, f"Windows of {LOOKBACK_WINDOW} tiles are drawn, one lane each; lab 08 reads 32 at once. "
             f"A window with an X in it is read again after a pause (__nanosleep) until the X is gone.",
             size=12, anchor="start", fill="#555555")
    return svg


# ---- figure 7: privatized histogram bins --------------------------------------------------------------------------

HIST_VALUES = [2, 0, 3, 1, 2, 2, 0, 1, 3, 2, 1, 2, 0, 2, 3, 1, 2, 0, 2, 1, 3, 2, 2, 0]  # 24 elements, 4 bins
HIST_BINS = 4            # 256 on the GPU
HIST_BLOCKS = 3
HIST_THREADS = 2         # threads per block in the picture
BLOCK_TINTS = ["#dbe8f6", "#fde3c3", "#d6ecd9"]  # light versions of SIZE_COLOURS[0..2]


def privatized_bins(values, bins, blocks, threads):
    """Lab 09's privatization with a grid-stride loop: element i goes to thread i mod (blocks*threads), so to block
    (i mod (blocks*threads)) // threads; each block counts its elements into its own bins, and the blocks' nonzero
    bins are added to the global ones. Returns (block of each element, each block's bins, the global bins, merges)."""
    grid = blocks * threads
    owner = [(i % grid) // threads for i in range(len(values))]
    private = [[0] * bins for _ in range(blocks)]
    for i, v in enumerate(values):
        private[owner[i]][v] += 1                      # atomicAdd(&bins_s[v], 1) in block owner[i]
    merged, merges = [0] * bins, 0
    for block in private:
        for b, count in enumerate(block):
            if count:                                  # one atomicAdd(&bins[b], bins_s[b]) per nonzero bin
                merged[b] += count
                merges += 1
    assert merged == [values.count(b) for b in range(bins)]
    return owner, private, merged, merges


def privatization_figure() -> Svg:
    values, bins, blocks, threads = HIST_VALUES, HIST_BINS, HIST_BLOCKS, HIST_THREADS
    owner, private, merged, merges = privatized_bins(values, bins, blocks, threads)
    n, grid = len(values), blocks * threads
    cell, gap, x0 = 30, 4, 150
    width = x0 + n * (cell + gap) + 20
    in_y = 112
    box_w, box_h, box_y = 290, 132, 216
    box_gap = (width - 28 - blocks * box_w) / (blocks - 1)
    bin_w, bin_h, bin_y = 48, 34, box_y + 72
    out_w, out_h, out_y = 76, 44, 450
    height = out_y + out_h + 128
    desc = (f"Privatization over {n} elements of {bins} bins, read by {blocks} blocks of {threads} threads with a "
            f"grid-stride loop (element i goes to thread i mod {grid}). Input: " + " ".join(map(str, values)) + ". " +
            "; ".join(f"block {k} counts elements " + ", ".join(str(i) for i in range(n) if owner[i] == k) +
                      " into its shared bins " + " ".join(map(str, private[k])) for k in range(blocks)) +
            f". After a barrier each block adds each nonzero bin to the global bins with one atomicAdd: {merges} "
            f"global atomics, against {n} for one atomic per element. Global bins: " +
            ", ".join(f"bin {b} = {c}" for b, c in enumerate(merged)) + ".")
    svg = Svg(width, height, "Privatized histogram bins (lab 09)", desc)
    svg.text(14, 28, "Privatization: each block counts into its own bins in shared memory, then merges them",
             size=18, anchor="start", weight="bold")
    svg.text(14, 50, "atomicAdd(&bins_s[x], 1) per element (shared memory, one block);  __syncthreads();  "
             "atomicAdd(&bins[b], bins_s[b]) per bin", size=12, anchor="start", mono=True)
    # the input, each element tinted with the block that reads it, and the thread that reads it
    svg.text(x0 - 14, in_y - 12, "index i", size=12, anchor="end", fill="#444444")
    svg.text(x0 - 14, in_y + cell / 2 + 5, "input", size=14, anchor="end", weight="bold")
    svg.text(x0 - 14, in_y + cell + 18, "thread", size=12, anchor="end", fill="#444444")
    for i, v in enumerate(values):
        x = x0 + i * (cell + gap)
        svg.text(x + cell / 2, in_y - 12, str(i), size=11, fill="#444444", mono=True)
        svg.rect(x, in_y, cell, cell, fill=BLOCK_TINTS[owner[i]], stroke=SIZE_COLOURS[owner[i]], width=1.4)
        svg.text(x + cell / 2, in_y + cell / 2 + 5, str(v), size=14, mono=True, weight="bold")
        svg.text(x + cell / 2, in_y + cell + 18, str(i % grid), size=11, fill=SIZE_COLOURS[owner[i]], mono=True,
                 weight="bold")
    svg.text(x0, in_y + cell + 44, f"grid-stride loop: thread t reads elements t, t + {grid}, t + {2 * grid}, ...; "
             f"threads {', '.join(str(t) for t in range(threads))} are block 0, the next {threads} block 1, ...",
             size=12, anchor="start", fill="#444444")
    # the blocks and their private bins
    bin_centres = []
    for k in range(blocks):
        bx = 14 + k * (box_w + box_gap)
        colour = SIZE_COLOURS[k]
        mine = [i for i in range(n) if owner[i] == k]
        svg.rect(bx, box_y, box_w, box_h, fill=BLOCK_TINTS[k], stroke=colour, width=1.6, rx=6)
        svg.text(bx + 10, box_y + 21, f"block {k}", size=14, anchor="start", weight="bold", fill=colour)
        svg.text(bx + 74, box_y + 21, "threads " + ", ".join(str(k * threads + t) for t in range(threads)), size=12,
                 anchor="start")
        svg.text(bx + 10, box_y + 41, "elements " + " ".join(map(str, mine)), size=12, anchor="start", mono=True)
        svg.text(bx + 10, box_y + 61, f"bins_s in shared memory: {len(mine)} atomics", size=12, anchor="start",
                 fill="#444444")
        left = bx + (box_w - bins * bin_w - (bins - 1) * 8) / 2
        centres = []
        for b in range(bins):
            x = left + b * (bin_w + 8)
            svg.rect(x, bin_y, bin_w, bin_h, fill=CELL, stroke=LINE)
            svg.text(x + bin_w / 2, bin_y + bin_h / 2 + 5, str(private[k][b]), size=15, mono=True, weight="bold")
            svg.text(x + bin_w / 2, bin_y + bin_h + 15, f"bin {b}", size=11, fill="#444444")
            centres.append(x + bin_w / 2)
        bin_centres.append(centres)
    # the merge into the global bins
    out_left = (width - bins * out_w - (bins - 1) * 40) / 2
    svg.text(out_left - 14, out_y + out_h / 2 + 5, "bins (global)", size=14, anchor="end", weight="bold")
    for b in range(bins):
        x = out_left + b * (out_w + 40)
        for k in range(blocks):
            if private[k][b]:
                svg.line(bin_centres[k][b], bin_y + bin_h + 22, x + out_w / 2 + (k - (blocks - 1) / 2) * 14, out_y - 2,
                         stroke=SIZE_COLOURS[k], width=1.1, arrow=True)
        svg.rect(x, out_y, out_w, out_h, fill=ACTIVE, stroke=ACTIVE_EDGE, width=1.6)
        svg.text(x + out_w / 2, out_y + out_h / 2 + 6, str(merged[b]), size=17, mono=True, weight="bold")
        svg.text(x + out_w / 2, out_y + out_h + 16, f"bin {b}", size=11, fill="#444444")
    svg.text(width / 2, out_y + out_h + 40, f"after a barrier, each block adds each of its nonzero bins: "
             f"atomicAdd(&bins[b], bins_s[b]), {merges} global atomics in all", size=13)
    foot = out_y + out_h + 78
    svg.text(14, foot, f"{n} elements: {n} atomics in shared memory, each contended only within its block, then "
             f"{merges} global atomics.", size=13, anchor="start")
    svg.text(14, foot + 19, f"One global atomic per element would be {n}, all {grid} threads contending for the same "
             f"{bins} counters in the L2.", size=13, anchor="start")
    svg.text(14, foot + 41, f"Drawn with {bins} bins and {blocks} blocks of {threads} threads; lab 09 has 256 bins, "
             f"and each block counts many vectors of 16 bytes (coarsening) before its one merge.", size=12,
             anchor="start", fill="#555555")
    return svg


# ---- main ---------------------------------------------------------------------------------------------------------

def all_figures(ladder: dict) -> dict:
    return {
        "reduce-tree-interleaved.svg": reduce_tree_figure(sequential=False),
        "reduce-tree-sequential.svg": reduce_tree_figure(sequential=True),
        "bank-conflicts.svg": bank_conflicts_figure(),
        "scan-kogge-stone.svg": scan_figure("kogge-stone"),
        "scan-brent-kung.svg": scan_figure("brent-kung"),
        "lookback.svg": lookback_figure(),
        "histogram-privatization.svg": privatization_figure(),
        "ladder.svg": ladder_figure(ladder),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=FIGURES, help="where to write the SVGs (default: handouts/figures)")
    parser.add_argument("--ladder", type=Path, default=LADDER_DATA,
                        help="the ladder's numbers: .json (our format), or build/bench/ladder.jsonl or ladder.md")
    parser.add_argument("--save-data", type=Path, help="also write the ladder's numbers as JSON (our format) here")
    args = parser.parse_args(argv)
    try:
        ladder = load_ladder(args.ladder)
    except (OSError, ValueError, KeyError) as err:
        print(f"figures: cannot read the ladder: {err}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for name, svg in all_figures(ladder).items():
        (args.out / name).write_text(svg.render(), encoding="utf-8")
        print(f"wrote {args.out / name}")
    if args.save_data:
        args.save_data.write_text(json.dumps(ladder, indent=2) + "\n")
        print(f"wrote {args.save_data}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
