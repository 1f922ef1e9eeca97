"""Known-wrong submissions, made from the reference solutions and tools/instructor/variants/mutations.toml.

submission(name, root) writes root/name/LAB/FILE: the solution of LAB with its header comment replaced by what is
wrong and the verdict expected, and each edit applied. It returns root/name, a folder shaped like labs/ to grade.
A solution that no longer holds an edit's `old` text exactly once raises ValueError naming it: the mutation must
then be updated with the solution.
"""
import tomllib
from pathlib import Path

from grader.patterns import KIT

MUTATIONS = Path(__file__).resolve().parent / "mutations.toml"


def mutations() -> dict:
    """The table of mutations: name -> {lab, file, says, edits: [{old, new}]}."""
    with open(MUTATIONS, "rb") as f:
        return tomllib.load(f)


def mutated_text(name: str, solutions: Path = KIT / "solutions") -> str:
    """The text of the wrong submission name."""
    m = mutations()[name]
    text = (Path(solutions) / m["lab"] / m["file"]).read_text()
    end = text.index("\n */\n") + len("\n */\n")
    header = ["/*", " * WRONG ON PURPOSE - a test submission for the grader, not a lab to learn from.", " *"]
    header += [f" * {line}".rstrip() for line in m["says"].splitlines()]
    text = "\n".join(header) + "\n */\n" + text[end:]
    for edit in m.get("edits", []):
        count = text.count(edit["old"])
        if count != 1:
            raise ValueError(f"{MUTATIONS.name} [{name}]: solutions/{m['lab']}/{m['file']} holds this edit's old "
                             f"text {count} times, not once: update the mutation\n{edit['old']}")
        text = text.replace(edit["old"], edit["new"])
    return text


def submission(name: str, root) -> Path:
    """Writes the wrong submission name under root (a labs/-shaped folder root/name) and returns that folder."""
    m = mutations()[name]
    folder = Path(root) / name
    target = folder / m["lab"] / m["file"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(mutated_text(name))
    return folder
