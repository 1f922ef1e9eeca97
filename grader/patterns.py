"""The registry of the kit's patterns: each folder of patterns/ with a pattern.toml, the pattern's one descriptor
(docs/AUTHORING.md, "A new pattern"). What every tool, the grader and the build know about a pattern comes from it:
grader/labs.toml names each lab's pattern, and the rest follows from here. The build finds the same folders
(mk/harness.mk), and the checker's table is every pattern the build links (harness/checker/pattern.h).

    PATTERNS[name]       the pattern: its student file and function, its headers, the harness runs of make check and
                         make sim, the one case make profile, the estimate and the benchmark time (the `bench` case),
                         the simulator's counting run, the benchmark's yardstick, what its labs may call of the kit,
                         and its suite (the correctness groups and sanitizer runs: config.py lays it under labs.toml)
    read_pattern(folder) one descriptor, checked; PatternError naming the key that is wrong
    parse_size(text)     one size in the harness's --n syntax (1025, 2^20, 2^24+3, 2^10-1), or None
    parse_sizes(text)    a --n list (1,33,2^20+1), or None; the C harness reads the same syntax (harness/checker/cli.c)
    format_size(n)       2^K for a power of two, the number otherwise
    lab_dirs(root)       the lab folders (NN-stage) under root, in order

The harness writes, with each case, the arguments that rerun it (its plan line's "reruns", each result line's
"rerun": harness/checker/results.h), so no tool reads case names apart.
"""
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
PATTERNS_FOLDER = KIT / "patterns"
MAX_EXPONENT = 40  # 2^K sizes: K at most this, as harness/checker/cli.c's ppl_parse_sizes takes them


class PatternError(ValueError):
    """A pattern's descriptor is missing, not valid TOML, or lacks or mistypes a key (a kit bug, or an author's)."""


@dataclass(frozen=True)
class Pattern:
    """One pattern of the kit: a family of labs sharing a harness (patterns/NAME/: check.c, serve.cu, runner.cpp,
    support.cu, include/) and a student file, as its pattern.toml describes it."""

    name: str  # reduce: the folder's name, the checker's --pattern, the lab program NAME_lab
    source: str  # the student's file in every lab of this pattern (reduce.cu)
    call: str  # what the student writes, for messages: reduce()
    element_bytes: int  # one input element's bytes
    output: str  # what a run gives back, for people
    check_runs: tuple  # make check's runs, one harness process each: the small and edge sizes on every data kind
    sim_run: tuple  # make sim's default run: the edge sizes, exact data where there is a choice
    bench_case: tuple  # the case the benchmark times (with --n or --bench): make profile, the estimate
    bench_words: str  # that case, for people
    counts_run: tuple  # the simulator's counting run (grader/sim/simulator.py, counts per kernel)
    yardstick: str  # the benchmark's flag for the library yardstick beside the reference (tools/student/bench.py)
    yardstick_words: str
    headers: tuple = ()  # what the pattern's lab files may include of its own (include/NAME.h)
    calls: dict = field(default_factory=dict)  # [calls]: what its labs may call of the kit (why, names)
    suite: dict = field(default_factory=dict)  # [suite]: labs.toml's [suites.NAME], groups and sanitizers

    @property
    def folder(self) -> Path:
        return PATTERNS_FOLDER / self.name

    @property
    def include_folders(self) -> tuple:
        """What a lab file of this pattern sees (its only include path, mk/harness.mk's STUDENT_INCLUDES):
        harness/include and the pattern's include/."""
        return KIT / "harness" / "include", self.folder / "include"


_STRINGS = ("source", "call", "output", "bench_words", "yardstick", "yardstick_words")
_LISTS = ("sim_run", "bench_case", "counts_run")


def read_pattern(folder: Path) -> Pattern:
    """The pattern of folder (patterns/NAME) from its pattern.toml; PatternError naming the file and the key."""
    folder = Path(folder)
    where = f"patterns/{folder.name}/pattern.toml"
    try:
        data = tomllib.loads((folder / "pattern.toml").read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise PatternError(f"{where}: cannot read it ({e}); docs/AUTHORING.md, \"A new pattern\", says what it "
                           "holds") from None
    known = {*_STRINGS, *_LISTS, "element_bytes", "check_runs", "calls", "suite"}
    unknown = sorted(set(data) - known)
    missing = sorted(known - {"calls", "suite"} - set(data))
    if unknown or missing:
        raise PatternError(f"{where}: " + "; ".join(
            ([f"unknown keys {', '.join(unknown)}"] if unknown else []) +
            ([f"missing keys {', '.join(missing)}"] if missing else [])) + " (docs/AUTHORING.md, \"A new pattern\")")

    def strings(value, key):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise PatternError(f"{where}: {key} must be a list of strings (harness arguments)")
        return tuple(value)

    for key in _STRINGS:
        if not isinstance(data[key], str) or not data[key]:
            raise PatternError(f"{where}: {key} must be a non-empty string")
    if not isinstance(data["element_bytes"], int) or data["element_bytes"] not in (1, 2, 4, 8):
        raise PatternError(f"{where}: element_bytes must be 1, 2, 4 or 8")
    if not isinstance(data["check_runs"], list) or not data["check_runs"]:
        raise PatternError(f"{where}: check_runs must be a list of argument lists")
    calls = data.get("calls", {})
    if not isinstance(calls, dict) or set(calls) - {"why", "names"} or \
            not all(isinstance(n, str) for n in calls.get("names", [])):
        raise PatternError(f"{where}: [calls] has `why` (a string) and `names` (a list of the kit's functions)")
    headers = tuple(sorted(p.name for p in (folder / "include").glob("*.h")))
    return Pattern(name=folder.name, element_bytes=data["element_bytes"],
                   check_runs=tuple(strings(r, "check_runs") for r in data["check_runs"]),
                   **{k: data[k] for k in _STRINGS}, **{k: strings(data[k], k) for k in _LISTS},
                   headers=headers, calls=calls, suite=data.get("suite", {}))


def read_patterns(root: Path = PATTERNS_FOLDER) -> dict:
    """{name: Pattern} of every folder of root with a pattern.toml, by name."""
    return {folder.name: read_pattern(folder) for folder in sorted(Path(root).glob("*/")) if
            (folder / "pattern.toml").is_file()}


PATTERNS = read_patterns()


def pattern(name: str) -> Pattern:
    """The pattern called name; ValueError naming the patterns there are."""
    try:
        return PATTERNS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not a pattern of the kit (the patterns: {', '.join(PATTERNS)})") from None


_SIZE = re.compile(r"(?:2\^(\d+)(?:([+-])(\d+))?|(\d+))")


def parse_size(text: str) -> int | None:
    """One size in the harness's --n syntax: a whole number, or 2^K, 2^K+D, 2^K-D (K at most 40), at least 1; None
    for anything else. The same syntax as harness/checker/cli.c's ppl_parse_sizes, which the C side keeps."""
    m = _SIZE.fullmatch(str(text).strip())
    if not m:
        return None
    if m[4] is not None:
        value = int(m[4])
    else:
        if int(m[1]) > MAX_EXPONENT:
            return None
        value = 1 << int(m[1])
        if m[2]:
            value = value + int(m[3]) if m[2] == "+" else value - int(m[3])
    return value if value >= 1 else None


def parse_sizes(text: str) -> list | None:
    """A comma-separated --n list (1,33,2^20+1) as numbers; None when any entry is not a size."""
    sizes = [parse_size(part) for part in str(text).split(",")]
    return None if not sizes or None in sizes else sizes


def format_size(n: int) -> str:
    """2^K for a power of two, the number otherwise."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def lab_dirs(root: Path = KIT / "solutions", prefix: str = "") -> list:
    """The lab folders (NN-stage) under root, in order; only those prefix picks (select_labs: 03,05 or 3), none
    when it picks none."""
    found = sorted(p for p in Path(root).glob("[0-9][0-9]-*") if p.is_dir())
    try:
        names = select_labs([p.name for p in found], prefix)
    except ValueError:
        return []
    return [p for p in found if p.name in names]


def select_labs(names, lab_filter: str | None) -> list:
    """The lab names among names that lab_filter picks, in names' order: the one lab selector of every target
    (LAB=03,05). Comma-separated items, each a lab's full name, the start of one (03-seq), or its number (3 or 03:
    the lab 03-...); every name for an empty filter. ValueError naming an item that picks no lab."""
    names = list(names)
    if not lab_filter:
        return names
    chosen = set()
    for item in (part.strip() for part in str(lab_filter).split(",")):
        if not item:
            continue
        start = f"{int(item):02d}-" if item.isdigit() else item
        found = {name for name in names if name == item or name.startswith(start)}
        if not found:
            raise ValueError(f"no lab matches {item} (the labs: {', '.join(names) or 'none'})")
        chosen |= found
    return [name for name in names if name in chosen]
