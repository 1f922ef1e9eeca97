"""The labs of the kit as their Makefiles describe them (shared by tools/student/bench.py and tests/run.py)."""
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent


def lab_settings(lab_dir: Path) -> dict:
    """The `NAME := value` lines of a lab's Makefile: PATTERN (the harness family) and LAB_SRC (the student's file)."""
    settings = {}
    for line in (Path(lab_dir) / "Makefile").read_text().splitlines():
        name, sep, value = line.partition(":=")
        if sep:
            settings[name.strip()] = value.strip()
    return settings


def lab_dirs(root: Path = KIT / "solutions", prefix: str = "") -> list:
    """The lab folders (NN-stage) under root, in order; only those whose name starts with prefix."""
    return sorted(p for p in Path(root).glob("[0-9][0-9]-*") if p.is_dir() and p.name.startswith(prefix))
