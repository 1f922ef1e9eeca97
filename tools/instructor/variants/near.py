"""Near-threshold kernels for tools/instructor/regrade_bench.py: a reference solution slowed down by a tunable amount, so that
its speedup lands where the benchmark wants it (at a scoring threshold of labs.toml).

The slowdown is an extra pass: after the real reduction has written its sum, reduce() runs the lab's own first pass
again over the leading `fraction` of the input (more than once for a fraction over 1), its block sums going to the
scratch buffer. The answer stays right and the kernel stays the lab's, and the time grows by about fraction times
the first pass's, which is nearly all of it: the speedup drops by a factor of about 1 + fraction.

    text(lab, fraction)                  the slowed solution's source
    submission(lab, fraction, root)      writes it as root/near-LAB/LAB/FILE, a folder shaped like labs/
    fraction_for(speedup, target)        the fraction that brings a kernel at speedup down to target
"""
from pathlib import Path

from grader.patterns import KIT

# The labs that have a variant: the solution's reduce() body line, and the number of elements one block reduces.
# Labs 01 and 02 reduce in place or are too close to the baseline to be worth it; 05 is one pass with atomics.
VARIANTS = {
    "03-sequential": ("reduce.cu", "    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);\n",
                      "BLOCK_DIM"),
    "04-unrolled": ("reduce.cu", "    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);\n",
                    "ELEMS_PER_BLOCK"),
}

HEADER = """/*
 * SLOWED ON PURPOSE - a test submission for tools/instructor/regrade_bench.py, not a lab to learn from.
 *
 * The {lab} reference solution, whose reduce() runs its first pass again over {fraction:.4f} of the input after the
 * sum is written (made by tools/instructor/variants/near.py), so that its speedup sits near a threshold of grader/labs.toml.
 */
"""

EXTRA = """
    /* SLOWED ON PURPOSE: the first pass again over the leading NEAR_FRACTION of the input, sums to scratch */
    for (double left = NEAR_FRACTION * (double)n; left >= (double){per_block}; left -= (double)n) {{
        const size_t count = left < (double)n ? (size_t)left : n;
        reduce_pass(d_in, d_work, count, (unsigned)((count + {per_block} - 1) / {per_block}));
        CUDA_CHECK_LAUNCH();
    }}
"""


def text(lab: str, fraction: float, solutions: Path = KIT / "solutions") -> str:
    """The source of lab's solution slowed by fraction (>= 0); ValueError if the solution no longer holds the line
    the variant edits (update VARIANTS with the solution)."""
    if lab not in VARIANTS:
        raise ValueError(f"no near-threshold variant of {lab}: the variants are {', '.join(VARIANTS)}")
    if not fraction >= 0:
        raise ValueError(f"a slowdown fraction is >= 0, not {fraction}")
    file, line, per_block = VARIANTS[lab]
    source = (Path(solutions) / lab / file).read_text()
    if source.count(line) != 1:
        raise ValueError(f"tools/instructor/variants/near.py: solutions/{lab}/{file} holds the line its variant edits "
                         f"{source.count(line)} times, not once: update VARIANTS\n{line}")
    end = source.index("\n */\n") + len("\n */\n")
    body = source[end:].replace(line, line + EXTRA.format(per_block=per_block))
    return (HEADER.format(lab=lab, fraction=fraction) + f"#define NEAR_FRACTION {fraction:.6f}\n" + body)


def submission(lab: str, fraction: float, root) -> Path:
    """Writes the slowed solution under root and returns the labs/-shaped folder that holds it."""
    folder = Path(root) / f"near-{lab}"
    target = folder / lab / VARIANTS[lab][0]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text(lab, fraction))
    return folder


def fraction_for(speedup: float, target: float) -> float:
    """The extra fraction that takes a kernel measured at speedup down to target (0 if it is there already)."""
    return max(0.0, speedup / target - 1.0)


def recalibrate(fraction: float, reference: float, measured: float, target: float) -> float:
    """A better fraction after one measurement: the slowdown fraction gave (reference / measured - 1) is scaled
    to the one wanted (reference / target - 1), the slowdown being close to proportional to the fraction."""
    got, wanted = reference / measured - 1.0, fraction_for(reference, target)
    if got <= 0.0 or fraction <= 0.0:
        return fraction
    return fraction * wanted / got
