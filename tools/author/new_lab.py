"""Scaffold a new lab: the files it needs, started from a lab like it (or, for the first lab of a pattern, from the
pattern's descriptor), and what is left to do.

    python3 -m tools.author.new_lab 10-warp-reduce --like 04-unrolled --title "the whole block with shuffles"
    make new-lab NAME=10-warp-reduce LIKE=04-unrolled TITLE="the whole block with shuffles"
    make new-lab NAME=09-histogram PATTERN=histogram TITLE="privatized bins"   (a pattern of patterns/ with no lab)

It writes, and never overwrites (a file that is already there stops it before anything is written):

    solutions/NAME/   the like lab's solution file (its mentions of the like lab renamed) and Makefile, and a README
                      naming the new lab and its handout
    labs/NAME/        the same Makefile and README; not the lab's file: `make skeletons` derives it from the
                      solution once that is written (a skeleton written now would be of the like lab's solution, and
                      make skeletons rightly refuses to replace a file it did not derive from the solution as it is)
    handouts/NAME.md  a handout with the sections every handout has, each saying what it still needs
    grader/labs.toml  a [labs.NAME] table appended: the like lab's pattern, file, suite and arguments, and its
                      performance table with the like lab's thresholds, marked as not calibrated

then checks that grader/labs.toml still loads, and prints the steps docs/AUTHORING.md lists for the rest (the
kernel itself, the handout's text, the calibration on a GPU, the ladder figure, wrong variants). Exit status 0, or 2
with a message when NAME or LIKE is not usable.

The new lab reuses the like lab's pattern (its checker, device program, datasets and yardstick). With --pattern
instead of --like, the solution file is a start: the header the pattern's include/ declares, one SOLUTION block for the
function, and the performance table is CUB's, with placeholder thresholds marked as not calibrated. The pattern itself
comes first: docs/AUTHORING.md, "A new pattern".
"""
import argparse
import re
import sys
from pathlib import Path

from grader.config import ConfigError, load_config
from grader.patterns import KIT, PATTERNS
from tools.author.make_skeletons import MarkerError, blank_out

NAME = re.compile(r"^(\d\d)-[a-z0-9]+(-[a-z0-9]+)*$")
GUIDE = "docs/AUTHORING.md"


class NewLabError(Exception):
    """NAME or LIKE cannot be used (the message says why and what to do)."""


def _like_lab(config, like: str):
    found = [lab for lab in config.labs if lab.name == like or lab.name.startswith(f"{like}-")]
    if len(found) != 1:
        names = ", ".join(lab.name for lab in config.labs)
        raise NewLabError(f"--like {like}: no single lab of grader/labs.toml has that name (the labs: {names})")
    return found[0]


def _check_name(config, name: str, kit: Path) -> None:
    if not NAME.match(name):
        raise NewLabError(f"{name}: a lab's name is two digits, a dash and lowercase words joined by dashes "
                          f"(10-warp-reduce)")
    number = name[:2]
    taken = [lab.name for lab in config.labs if lab.name[:2] == number]
    if taken:
        raise NewLabError(f"{name}: lab number {number} is taken by {taken[0]} (grader/labs.toml); pick the next "
                          f"free number")
    there = [p for p in (kit / "labs" / name, kit / "solutions" / name, kit / "handouts" / f"{name}.md")
             if p.exists()]
    if there:
        raise NewLabError(f"{name}: {', '.join(str(p.relative_to(kit)) for p in there)} already exists; nothing "
                          f"was written (this tool never replaces a file: move it away first)")


def _renamed(text: str, like: str, name: str) -> str:
    """The like lab's solution with its mentions of the like lab ("Lab 04", handouts/04-unrolled.md) made the new
    lab's."""
    return re.sub(rf"\bLab {like[:2]}\b", f"Lab {name[:2]}", text.replace(like, name))


def _readme(name: str, title: str, source: str) -> str:
    return (f"# Lab {name[:2]}: {title}\n\n"
            f"Read the handout: [handouts/{name}.md](../../handouts/{name}.md). Fill in the `@@ TODO` lines of "
            f"`{source}`,\nthen `make run` to check and `make grade` to grade. Edit only `{source}`.\n")


def _makefile(like_makefile: str, name: str) -> str:
    lines = like_makefile.splitlines()
    if lines and lines[0].startswith("# Lab "):
        lines[0] = re.sub(r"^# Lab \d\d:", f"# Lab {name[:2]}:", lines[0])
    return "\n".join(lines) + "\n"


def _handout(name: str, title: str, like: str) -> str:
    goal = (f"what the student's kernel computes, and what makes it fast ({like}'s first lab)."
            if like.startswith("the pattern") else f"what the student's kernel does better than lab {like}'s, and "
            "why it is faster.")
    return f"""# Lab {name[:2]}: {title}

**Goal.** TODO: one or two sentences: {goal}

## Background
TODO: the idea, with its source (a PMPP chapter, a paper, the CUDA C++ Programming Guide section), and a figure from
handouts/figures/ where a picture says it better (tools/author/figures.py draws them; docs/AUTHORING.md, "Figures").

## Your task
TODO: each `@@ TODO` blank of `labs/{name}/` and what it must do, in the order the student meets them.

## Check and grade
`make run` checks your kernel on the datasets and random inputs; `make grade` grades it as the grader does
(correctness, compute-sanitizer, then the speedup over the baseline against the thresholds of grader/labs.toml).

## Going further
TODO: what the next lab builds on, or a question to think about.
"""


def _labs_toml_block(name: str, like, config_text: str) -> str:
    """[labs.NAME] as the like lab's, its performance table's thresholds copied and marked as not calibrated."""
    perf = like.performance
    args = ", ".join(f'"{a}"' for a in like.args)
    block = [f"", f"[labs.{name}]", f'pattern = "{like.pattern}"', f'source = "{like.source}"']
    suite = re.search(rf'^\[labs\.{re.escape(like.name)}\][^\[]*?^suite = "([^"]+)"', config_text, re.M | re.S)
    if suite:
        block.append(f'suite = "{suite.group(1)}"')
    if like.args:
        block.append(f"args = [{args}]")
    if perf is not None:
        block += [f"", f"[labs.{name}.performance]",
                  f"# NOT CALIBRATED: copied from {like.name}. Run `make calibrate LAB={name[:2]}` on each GPU model "
                  f"({GUIDE}, \"Calibrating thresholds\").",
                  f"points = {perf.points:g}", f'bench = "{perf.bench}"']
        if perf.timeout:
            block.append(f"timeout = {perf.timeout:g}")
        if perf.yardstick != "baseline":
            block.append(f'yardstick = "{perf.yardstick}"')
        block += [f"lower = {perf.lower:g}", f"full = {perf.full:g}"]
    return "\n".join(block) + "\n"


def _first_lab(name: str, pattern, title: str) -> tuple:
    """(the solution file, the Makefile, the [labs.NAME] table) of the first lab of pattern."""
    header = pattern.headers[0] if pattern.headers else f"{pattern.name}.h"
    solution = f"""/*
 * Lab {name[:2]} - {title}.      handout: handouts/{name}.md
 *
 * TODO: what the lab teaches, and where the algorithm comes from (a PMPP chapter, a paper).
 *
 * Build and check:  make run          Grade this lab:  make grade
 * Fill in each `@@ TODO` line; the number of lines it needs is in its parentheses. Edit only this file.
 */
#include "{header}"

// @@ BEGIN SOLUTION (about 20 lines): the kernels and {pattern.call}, as patterns/{pattern.name}/include/{header} declares it
// @@ END SOLUTION
"""
    makefile = (f"# Lab {name[:2]}: builds build/{pattern.name}_lab from the kit's harness and {pattern.source}. "
                f"`make run` checks it, `make grade` grades it.\nKIT := ../..\nPATTERN := {pattern.name}\n"
                f"include $(KIT)/mk/lab.mk\n")
    block = "\n".join(["", f"[labs.{name}]", f'pattern = "{pattern.name}"', f'source = "{pattern.source}"',
                       f'suite = "{pattern.name}"', "", f"[labs.{name}.performance]",
                       f"# NOT CALIBRATED: placeholders. Run `make calibrate LAB={name[:2]}` on each GPU model "
                       f"({GUIDE}, \"Calibrating thresholds\").",
                       "points = 50", 'bench = "2^26"', "timeout = 300", 'yardstick = "cub"', "lower = 0.5",
                       "full = 0.9"]) + "\n"
    return solution, makefile, block


def scaffold(name: str, like_name: str | None, title: str, kit: Path = KIT, config_path: Path | None = None,
             pattern_name: str | None = None) -> list:
    """Writes the new lab's files (module docstring) and returns the steps left, as lines. NewLabError when NAME,
    LIKE or PATTERN cannot be used; nothing is written then."""
    config_path = config_path or kit / "grader" / "labs.toml"
    config = load_config(config_path)
    config_text = config_path.read_text()
    if pattern_name:
        if pattern_name not in PATTERNS:
            raise NewLabError(f"--pattern {pattern_name}: no such pattern (patterns/ has {', '.join(PATTERNS)}); a new "
                              f"pattern comes first: {GUIDE}, \"A new pattern\"")
        taken = [lab.name for lab in config.labs if lab.pattern == pattern_name]
        if taken:
            raise NewLabError(f"--pattern {pattern_name}: {taken[0]} is already a lab of it; start from it with "
                              f"--like {taken[0][:2]}")
        _check_name(config, name, kit)
        source = PATTERNS[pattern_name].source
        solution, like_makefile, labs_block = _first_lab(name, PATTERNS[pattern_name], title)
        like_title = f"the pattern {pattern_name}"
    else:
        like = _like_lab(config, like_name)
        _check_name(config, name, kit)
        source = like.source
        solution = _renamed((kit / "solutions" / like.name / source).read_text(), like.name, name)
        like_makefile = (kit / "solutions" / like.name / "Makefile").read_text()
        labs_block, like_title = _labs_toml_block(name, like, config_text), like.name
    try:
        blank_out(solution, f"solutions/{name}/{source}")  # its markers pair up, so make skeletons can derive it
    except MarkerError as e:
        raise NewLabError(f"{e}: fix the markers of the lab to start from") from e
    written = []

    def write(rel: str, text: str) -> None:
        path = kit / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x") as f:  # never replaces a file
            f.write(text)
        written.append(rel)

    write(f"solutions/{name}/{source}", solution)
    write(f"solutions/{name}/Makefile", _makefile(like_makefile, name))
    write(f"solutions/{name}/README.md", _readme(name, title, source))
    write(f"labs/{name}/Makefile", _makefile(like_makefile, name))
    write(f"labs/{name}/README.md", _readme(name, title, source))
    write(f"handouts/{name}.md", _handout(name, title, like_title))
    with open(config_path, "a") as f:
        f.write(labs_block)
    written.append(str(config_path.relative_to(kit)) if config_path.is_relative_to(kit) else str(config_path))
    try:
        load_config(config_path)
    except ConfigError as e:  # the kit's own doing: say so, with the table to fix
        raise NewLabError(f"grader/labs.toml no longer loads after [labs.{name}] was appended ({e}): fix that table "
                          f"by hand") from e
    number = name[:2]
    return [f"wrote {rel}" for rel in written] + [
        "",
        f"Left to do ({GUIDE}, 'A new lab of an existing pattern'):",
        f"  1. Write the kernel in solutions/{name}/{source} (the host function keeps its signature and its output:",
        f"     its pattern's header and docs/DESIGN.md, 'The student's side of ...'): the parts the student writes",
        f"     go between",
        f"     '// @@ BEGIN SOLUTION (about N lines): what belongs here' and '// @@ END SOLUTION'; then",
        f"     `make skeletons` writes labs/{name}/{source}, the blank the students get; `git add` the new files.",
        f"  2. `make sim LAB={number} SUBMISSION=solutions` passes; `make grade SIM=1 LAB={number}` gives the blank 0.",
        f"  3. Write handouts/{name}.md (its TODO lines) and add its row to handouts/README.md and README.md's labs table.",
        f"  4. On a GPU: `make grade SUBMISSION=solutions LAB={number}`, then `make calibrate LAB={number}` for each GPU",
        f"     model; `make bench` and `make figures LADDER=build/bench/ladder.md` redraw the ladder with it.",
        f"  5. Wrong variants that must lose points: tests/sim/ordering/variants.toml ({GUIDE}, 'A wrong variant').",
        f"  6. `make test`: its failures name the step of {GUIDE} still missing.",
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tools.author.new_lab", description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the new lab's name: two digits, a dash, words (10-warp-reduce)")
    start = parser.add_mutually_exclusive_group(required=True)
    start.add_argument("--like", help="the lab of the same pattern to start from (04 or 04-unrolled)")
    start.add_argument("--pattern", help="for the first lab of a pattern of patterns/: its name (histogram)")
    parser.add_argument("--title", default="TODO: a title", help="the lab's title, for its README and handout")
    args = parser.parse_args(argv)
    try:
        lines = scaffold(args.name, args.like, args.title, pattern_name=args.pattern)
    except NewLabError as e:
        print(f"make new-lab: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
