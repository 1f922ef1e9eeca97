"""The table of `make sim-compare` (tools/author/sim_compare.py): the metrics it compares, each row's simulator and
Nsight Compute counters and why the two may differ, the sums over a call's launches, and the table as text and
Markdown."""
import textwrap
from dataclasses import dataclass

from tools.student import nsight

# Nsight Compute's counters, per kernel launch.
INST = "smsp__inst_executed.sum"
THREAD_INST = "smsp__thread_inst_executed.sum"
BRANCH_TARGETS = "smsp__sass_branch_targets.sum"
BRANCH_DIVERGENT = "smsp__sass_branch_targets_threads_divergent.sum"
SHARED_LD = "smsp__inst_executed_op_shared_ld.sum"
SHARED_ST = "smsp__inst_executed_op_shared_st.sum"
BANK_LD = nsight.BANK_LD
BANK_ST = nsight.BANK_ST
REQUESTS_LD = nsight.GLOBAL_REQUESTS
REQUESTS_ST = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
SECTORS_LD = nsight.GLOBAL_SECTORS
SECTORS_ST = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
METRICS = [INST, THREAD_INST, BRANCH_TARGETS, BRANCH_DIVERGENT, SHARED_LD, SHARED_ST, BANK_LD, BANK_ST, REQUESTS_LD,
           REQUESTS_ST, SECTORS_LD, SECTORS_ST]
# Not counters but the launch's shape, from the CSV's own "Grid Size" and "Block Size" columns.
BLOCKS, THREADS, LAUNCHES = "blocks", "threads", "launches"


@dataclass
class Row:
    """One metric of the table: the simulator's count(s) (keys of its JSON report, summed) and Nsight Compute's
    (metrics, summed over launches and over the list), and why the two may differ."""

    key: str
    label: str
    sim: tuple
    ncu: tuple
    why: str
    percent: bool = False


ROWS = [
    Row("warp_instructions", "warp instructions", ("warp_instructions",), (INST,),
        "the simulator counts PTX instructions, the GPU runs SASS that ptxas compiled from it for its architecture: "
        "address arithmetic folded into loads, loops unrolled, branches turned into predication, extra instructions "
        "(BSSY/BSYNC, EXIT) change the count. Expect the same order of magnitude and the same trend between labs, "
        "not equality"),
    Row("thread_instructions", "thread instructions", ("active_lanes",), (THREAD_INST,),
        "active lanes summed over the warp instructions (predicated-off lanes included on both sides): differs as "
        "the warp instructions do"),
    Row("simt_efficiency", "SIMT efficiency", (), (), percent=True,
        why="thread instructions / (32 x warp instructions). Close where the control flow is the same; where ptxas "
            "predicates a short divergent `if` its lanes stay active on the GPU, and SASS's extra uniform "
            "instructions raise or lower the average"),
    Row("branches", "branches", ("branches",), (BRANCH_TARGETS,),
        "simulator: PTX `bra` issued per warp; Nsight Compute: SASS branch targets taken (a divergent branch counts "
        "each of its targets). Loops unrolled differently and branches made predicates change both: compare "
        "trends"),
    Row("divergent_branches", "divergent branches", ("divergent_branches",), (BRANCH_DIVERGENT,),
        "a warp whose lanes go both ways at a branch. Nsight Compute counts divergent targets (the fall-through "
        "too), and ptxas may compile a short divergent `if` to predicated code (0 on the GPU) or split a loop "
        "exit differently; a lab whose tree diverges (01, 02) should show it on both sides"),
    Row("shared_requests", "shared loads + stores", ("shared_requests",), (SHARED_LD, SHARED_ST),
        "warp-wide shared-memory instructions. Should agree closely; the simulator also counts shared atomics, "
        "and ptxas may merge or vectorize accesses, or keep a value in a register instead of reloading it"),
    Row("bank_conflicts", "bank conflicts (shared)", ("shared_extra_wavefronts",), (BANK_LD, BANK_ST),
        "simulator: wavefronts beyond the ideal, by Nsight Compute's phase rules (sim/README.md). Should agree "
        "closely where there are real conflicts; Nsight Compute's counter also counts some extra passes that are not "
        "bank conflicts, so it may read higher than the simulator"),
    Row("global_load_requests", "global load requests", ("global_load_requests",), (REQUESTS_LD,),
        "warp-wide global loads: should agree, unless ptxas merges or splits loads (vector loads, an unrolled "
        "loop's remainder)"),
    Row("global_store_requests", "global store requests", ("global_store_requests",), (REQUESTS_ST,),
        "warp-wide global stores: the simulator counts atomics here too, Nsight Compute's op_st does not (lab 05's "
        "atomicAdd per block, lab 08's flags)"),
    Row("global_sectors", "global sectors (ld + st)", ("global_sectors",), (SECTORS_LD, SECTORS_ST),
        "distinct 32-byte sectors per request, loads and stores: should agree closely for the same requests "
        "(atomics again count on the simulator's side only)"),
    Row("launches", "launches", ("launches",), (LAUNCHES,),
        "kernel launches of the lab in the one call"),
    Row("blocks", "blocks", ("blocks",), (BLOCKS,),
        "thread blocks over those launches. The simulated device has 8 SMs (sim/README.md): a grid sized from the SM "
        "count (lab 05, grid-stride loops) is smaller there, and every count per thread changes with it"),
]
ROW_KEYS = [r.key for r in ROWS]


# ---- the table ----

def _add(values):
    """The sum, or None when any value is None (a partial sum would mislead)."""
    values = list(values)
    return None if not values or any(v is None for v in values) else sum(values)


def totals(per_kernel: dict | None) -> dict | None:
    """Counts summed over kernels: {key: value or None}; None for a side not measured at all."""
    if per_kernel is None:
        return None
    keys = {k for counts in per_kernel.values() for k in counts}
    return {k: _add(counts.get(k) for counts in per_kernel.values()) for k in keys}


def _efficiency(lanes, insts):
    if lanes is None or insts is None or insts == 0:
        return None
    return lanes / (32.0 * insts)


def table_rows(sim: dict | None, ncu: dict | None) -> list:
    """[{key, label, simulator, ncu, ratio, note}] from the two sides' totals (None: not measured). ratio is
    Nsight Compute / simulator; None where either is missing or the simulator's is 0 while ncu's is not."""
    rows = []
    for row in ROWS:
        if row.key == "simt_efficiency":
            s = _efficiency(sim.get("active_lanes"), sim.get("warp_instructions")) if sim else None
            n = _efficiency(ncu.get(THREAD_INST), ncu.get(INST)) if ncu else None
        else:
            s = _add(sim.get(k) for k in row.sim) if sim else None
            n = _add(ncu.get(k) for k in row.ncu) if ncu else None
        if s is None or n is None:
            ratio = None
        elif s == 0:
            ratio = 1.0 if n == 0 else None
        else:
            ratio = n / s
        rows.append({"key": row.key, "label": row.label, "simulator": s, "ncu": n, "ratio": ratio,
                     "percent": row.percent, "note": row.why})
    return rows


def fmt(value, percent=False) -> str:
    if value is None:
        return "-"
    if percent:
        return f"{100.0 * value:.1f} %"
    return f"{value:,.0f}"


def fmt_ratio(row) -> str:
    if row["ratio"] is None:
        return "-" if row["simulator"] is None or row["ncu"] is None else "n/a"
    return f"{row['ratio']:.2f}"


def text_table(rows: list) -> str:
    heads = ("metric", "simulator", "Nsight Compute", "ratio")
    cells = [(r["label"], fmt(r["simulator"], r["percent"]), fmt(r["ncu"], r["percent"]), fmt_ratio(r)) for r in rows]
    widths = [max(len(c[k]) for c in [heads, *cells]) for k in range(4)]
    line = lambda c: f"  {c[0]:<{widths[0]}}  " + "  ".join(f"{x:>{w}}" for x, w in zip(c[1:], widths[1:]))  # noqa
    return "\n".join([line(heads), *(line(c) for c in cells)])


def markdown_table(rows: list) -> str:
    out = ["| metric | simulator | Nsight Compute | ratio |", "|---|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['label']} | {fmt(r['simulator'], r['percent'])} | {fmt(r['ncu'], r['percent'])} | "
                   f"{fmt_ratio(r)} |")
    return "\n".join(out)


def why_text(width: int = 112) -> str:
    out = ["Why the columns may differ (ratio = Nsight Compute / simulator):"]
    for row in ROWS:
        out.append(textwrap.fill(f"{row.label}: {row.why}", width=width, initial_indent="  ",
                                 subsequent_indent="    "))
    return "\n".join(out)


def markdown_report(report: dict) -> str:
    gpu = report["gpu"]
    out = [f"## Simulator vs Nsight Compute: one call per reference solution, n = {report['n']}", ""]
    if gpu.get("measured"):
        out.append(f"GPU: {gpu['name']}; {gpu.get('ncu_version') or 'ncu'}. Ratio = Nsight Compute / simulator; "
                   "counts summed over the launches of the lab's own kernels in that one call.")
    else:
        out.append(f"Simulator column only ({gpu['reason']}). Counts summed over the launches of the lab's own "
                   "kernels in that one call.")
    for lab in report["labs"]:
        out += ["", f"### {lab['lab']}: {lab['call']} ({lab['what']})", ""]
        kernels = ", ".join(f"`{k['kernel']}`" for k in lab["kernels"]) or "none"
        out += [f"Kernels: {kernels}.", ""]
        if lab["rows"]:
            out.append(markdown_table(lab["rows"]))
        for note in lab["notes"]:
            out.append(f"\n- {note}")
    out += ["", "### Why the columns may differ", ""]
    out += [f"- **{row.label}**: {row.why}" for row in ROWS]
    return "\n".join(out) + "\n"
