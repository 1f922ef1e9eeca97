"""Known-wrong submissions, made from the reference solutions and tools/instructor/variants/mutations.toml.

submission(name, root) writes root/name/LAB/FILE: the solution of LAB with its header comment replaced by what is
wrong and the verdict expected, and each edit applied. It returns root/name, a folder shaped like labs/ to grade.
A solution that no longer holds an edit's `old` text exactly once raises ValueError naming it: the mutation must
then be updated with the solution. Each function takes the table to read (default mutations.toml; the simulator's
ordering bugs and correct variants are tests/sim/ordering/variants.toml); an entry's optional `title` replaces the
header's first line ("WRONG ON PURPOSE ...").
"""
import tomllib
from pathlib import Path

from grader.patterns import KIT

MUTATIONS = Path(__file__).resolve().parent / "mutations.toml"


def mutations(table: Path = MUTATIONS) -> dict:
    """The table of mutations: name -> {lab, file, says, edits: [{old, new}], title (optional)}."""
    with open(table, "rb") as f:
        return tomllib.load(f)


def mutated_text(name: str, solutions: Path = KIT / "solutions", table: Path = MUTATIONS) -> str:
    """The text of the wrong submission name."""
    m = mutations(table)[name]
    text = (Path(solutions) / m["lab"] / m["file"]).read_text()
    end = text.index("\n */\n") + len("\n */\n")
    title = m.get("title", "WRONG ON PURPOSE - a test submission for the grader, not a lab to learn from.")
    header = ["/*", f" * {title}", " *"]
    header += [f" * {line}".rstrip() for line in m["says"].splitlines()]
    text = "\n".join(header) + "\n */\n" + text[end:]
    for edit in m.get("edits", []):
        count = text.count(edit["old"])
        if count != 1:
            raise ValueError(f"{Path(table).name} [{name}]: solutions/{m['lab']}/{m['file']} holds this edit's old "
                             f"text {count} times, not once: update the mutation\n{edit['old']}")
        text = text.replace(edit["old"], edit["new"])
    return text


def submission(name: str, root, table: Path = MUTATIONS) -> Path:
    """Writes the wrong submission name under root (a labs/-shaped folder root/name) and returns that folder."""
    m = mutations(table)[name]
    folder = Path(root) / name
    target = folder / m["lab"] / m["file"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(mutated_text(name, table=table))
    return folder
