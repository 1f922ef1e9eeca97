"""Loading and checking grader/labs.toml: the labs, their test groups, points and thresholds.

load_config() returns a Config or raises ConfigError with a message naming the file and the key at fault.
"""
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from grader.score import late
from grader.patterns import PATTERNS, parse_size, select_labs

DEFAULT_PATH = Path(__file__).resolve().parent / "labs.toml"
LAB_NAME = re.compile(r"^[0-9][0-9]-[a-z0-9][a-z0-9-]*$")
# Arguments the grader adds itself (grader/run/run.py turns --seed into --seed-fd); a group's runs must not set them.
GRADER_ARGS = ("--seed", "--result", "--bench", "--dataset", "--expected", "--seed-fd", "--result-fd", "--in-process",
               "--host-memory-mib", "--cpu-seconds")
# What a lab's benchmark compares against: the kit's baseline kernel (speedup = baseline_ms / student_ms) or CUB
# (speedup = cub_ms / student_ms, the fraction of CUB's speed).
YARDSTICKS = ("baseline", "cub")
# The compute-sanitizer tools a lab's sanitizers row may run (grader/sanitize/), and that row's name.
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
SANITIZERS = "sanitizers"
# Who sees a test's row on Gradescope, and when (a group's, the sanitizers' or performance's `visibility`), and how
# its text is shown ([gradescope] output_format): Gradescope's own words (its autograder results.json spec).
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
OUTPUT_FORMATS = ("text", "md", "html", "simple_format", "ansi")


class ConfigError(ValueError):
    """labs.toml is missing, unreadable or inconsistent."""


@dataclass(frozen=True)
class Group:
    """A correctness group: all or nothing over every case of every run."""

    name: str
    points: float
    runs: tuple  # tuple of argument tuples, one harness process each
    datasets: str | None  # folder (relative to the kit) of dataset folders; then runs is empty
    timeout: float | None
    expected: bool = True  # datasets only: each folder holds expected.raw too (else the harness computes it)
    visibility: str = "visible"  # on Gradescope: one of VISIBILITIES


@dataclass(frozen=True)
class Scoring:
    """How a speedup becomes performance points: labs.toml's [scoring] table (its header says why).

    steps 0: points linear in the speedup between lower and full (no margin; the rule without a [scoring] table).
    steps N: points in N equal steps; step k is earned when the credited speedup, speedup * (1 + margin), reaches
    lower + k/N * (full - lower), where margin = spread_factor * (the benchmark's spread of the speedup), at least
    min_margin and at most max_margin.
    """

    steps: int = 0
    min_margin: float = 0.0
    max_margin: float = 0.0
    spread_factor: float = 0.0


@dataclass(frozen=True)
class Performance:
    """The timed comparison against the baseline, scored between lower and full speedup by its Scoring."""

    points: float
    bench: str
    lower: float
    full: float
    measured: float | None
    timeout: float | None
    yardstick: str = "baseline"  # "baseline" or "cub": see YARDSTICKS
    gpus: tuple = ()  # (GPU name as the device reports it, GpuThresholds), for GPUs calibrated on their own
    scoring: Scoring = Scoring()  # labs.toml's [scoring], the same for every lab
    visibility: str = "visible"  # on Gradescope: one of VISIBILITIES

    def calibrated(self, device: str):
        """The GpuThresholds labs.toml has for this device (the name must match exactly), else None."""
        return next((t for name, t in self.gpus if name == device), None)

    def thresholds_for(self, device: str):
        """(lower, full, gpu name) for this device: its own calibrated thresholds where labs.toml has them, else the
        defaults (lower, full, "")."""
        t = self.calibrated(device)
        return (t.lower, t.full, device) if t else (self.lower, self.full, "")


@dataclass(frozen=True)
class GpuThresholds:
    """Thresholds calibrated on one GPU model, and the reference solution's speedup measured there."""

    lower: float
    full: float
    measured: float | None
    run_seconds: tuple = ()  # (group name, the reference solution's slowest run of that group there, seconds)


@dataclass(frozen=True)
class Sanitizers:
    """The lab's program run under compute-sanitizer (grader/sanitize/): each tool once per run, on small inputs.
    A finding in the student's file fails the row (0 of its points), takes hazard_cost of every correctness group's
    points (grader/score/score.py's apply_hazards) and, like a failed group, stops performance."""

    points: float
    tools: tuple  # names from SANITIZER_TOOLS, in the order they run
    runs: tuple  # argument tuples, one harness process per tool each; the grader adds --seed and the lab's args
    timeout: float | None  # seconds per tool and run (the grader's --timeout applies when it is larger)
    visibility: str = "visible"  # on Gradescope: one of VISIBILITIES
    hazard_cost: float = 1.0  # the share of each correctness group's points a hazard in the student's code takes


@dataclass(frozen=True)
class Lab:
    name: str
    pattern: str
    source: str
    groups: tuple
    performance: Performance | None
    args: tuple = ()  # harness arguments added to every correctness run of this lab (not to the benchmark)
    bonus: bool = False  # a bonus lab: its points add to the total, its maximum does not
    sanitizers: Sanitizers | None = None  # the compute-sanitizer row, from its suite (or the lab's own table)
    due: object = None  # the lab's own due date (an aware datetime; grader/score/late.py), over [late]'s
    lms_name: str = ""  # the assignment's name in the course's grade systems (canvas.csv, gradescope.csv's column)
    # A group that the simulator's check cannot judge because of the student's file (its work budget) keeps the
    # GPU's verdict instead of losing its points (grader/sim/sim_check.py): a course's relaxation, which the report
    # names. False (the default): the check fails closed.
    simulator_check_open: bool = False

    @property
    def max_score(self) -> float:
        return (sum(g.points for g in self.groups) + (self.performance.points if self.performance else 0)
                + (self.sanitizers.points if self.sanitizers else 0))

    def reference_run_seconds(self, device: str, group: str) -> float | None:
        """The wall seconds of the reference solution's slowest run of group on the GPU named device, as `make
        calibrate` measured it (performance.gpus."GPU".run_seconds); None where that was not measured."""
        t = self.performance.calibrated(device) if self.performance else None
        return dict(t.run_seconds).get(group) if t else None


@dataclass(frozen=True)
class Limits:
    """labs.toml's [limits]: the host memory, in MiB, that the runner (the process that runs the student's code)
    may take: RLIMIT_DATA, past which malloc returns NULL and new throws (harness/checker/sandbox.h). The defaults
    are the harness's own (`make check` and `make sim` use them too): 8 GiB on a GPU (the largest run, 2^29 + 1
    elements, peaks at 2.2 GB on an H100), 512 MiB on the simulator (whose sizes stop at 8 MiB of floats, and whose
    device process gets the same)."""

    host_memory_mib: int = 8192
    simulator_host_memory_mib: int = 512
    run_floor_seconds: float | None = None  # see run_limit
    run_reference_factor: float | None = None
    lab_file_kib: int = 256  # the largest lab file graded (or compared for similarity); see lab_file_bytes
    simulator_check: bool = True  # a GPU grading also grades each lab on the simulator (grader/sim/sim_check.py)
    simulator_check_seconds: float = 900.0  # the simulator's share of a lab's grading: its runs past it not graded
    simulator_cpu_seconds: float = 60.0  # CPU seconds each process of a simulated lab program may use (RLIMIT_CPU)

    @property
    def lab_file_bytes(self) -> int:
        """The size past which a lab's file is refused before anything reads it (grader/grade.py) and left out of
        the similarity report (grader/classroom/similarity.py): a lab file is a few KiB of code."""
        return self.lab_file_kib << 10

    def for_run(self, simulator: bool) -> int:
        return self.simulator_host_memory_mib if simulator else self.host_memory_mib

    def run_limit(self, reference_seconds: float | None) -> float | None:
        """The time limit of one run on a GPU whose reference solution's slowest run of the same group took
        reference_seconds: run_reference_factor times that, at least run_floor_seconds; None (the grader's --timeout
        then) where the GPU or the group was not calibrated or labs.toml sets no such limit."""
        if reference_seconds is None or self.run_floor_seconds is None or self.run_reference_factor is None:
            return None
        return round(max(self.run_floor_seconds, self.run_reference_factor * reference_seconds), 1)


def _limits(raw, where: str) -> Limits:
    raw = _table(raw, where)
    _check_keys(raw, where, set(), {"host_memory_mib", "simulator_host_memory_mib", "run_floor_seconds",
                                    "run_reference_factor", "lab_file_kib", "simulator_check",
                                    "simulator_check_seconds", "simulator_cpu_seconds"})
    values = {}
    for key in raw:
        value = raw[key]
        if key == "simulator_check":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}.{key}: expected true or false, got {value!r}")
        elif key.startswith("run_") or key in ("simulator_check_seconds", "simulator_cpu_seconds"):
            _positive(raw, key, where)
        elif key == "lab_file_kib":
            if isinstance(value, bool) or not isinstance(value, int) or not 16 <= value <= 64 << 10:
                raise ConfigError(f"{where}.{key}: expected a whole number of KiB from 16 to 65536, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 64:
            raise ConfigError(f"{where}.{key}: expected a whole number of MiB, at least 64, got {value!r}")
        values[key] = value
    if ("run_floor_seconds" in values) != ("run_reference_factor" in values):
        raise ConfigError(f"{where}: run_floor_seconds and run_reference_factor come together")
    return Limits(**values)


@dataclass(frozen=True)
class Config:
    path: Path
    calibration: dict
    labs: tuple
    late: object = None  # grader.score.late.Policy of [late], None without one (nothing is late)
    course: Path | None = None  # the course's labs.toml laid over this one (course_file), None without one
    limits: Limits = Limits()  # [limits]: the host memory of a run
    gradescope: tuple = ()  # [gradescope]'s settings as (key, value): output_format, visibility

    def select(self, lab_filter: str | None) -> list:
        """The labs lab_filter picks (grader/patterns.py's select_labs: 03,05, or 3 for 03; all labs for None);
        ConfigError naming an item that picks none."""
        try:
            names = select_labs([lab.name for lab in self.labs], lab_filter)
        except ValueError as e:
            raise ConfigError(f"--lab {lab_filter}: {e}") from None
        return [lab for lab in self.labs if lab.name in names]

    def named(self, name: str):
        """The lab called name (a lab folder's name), or None."""
        return next((lab for lab in self.labs if lab.name == name), None)


def _check_keys(table: dict, where: str, required: set, optional: set = frozenset()):
    missing = required - table.keys()
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(sorted(missing))}")
    unknown = table.keys() - required - optional
    if unknown:
        raise ConfigError(f"{where}: unknown key {', '.join(sorted(unknown))}")


def _table(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table")
    return value


def _string(table: dict, key: str, where: str) -> str:
    value = table[key]
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}.{key}: expected a non-empty string, got {value!r}")
    return value


def _number(table: dict, key: str, where: str, positive: bool = False) -> float | None:
    if key not in table:
        return None
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (positive and value == 0):
        kind = "a positive number" if positive else "a number >= 0"
        raise ConfigError(f"{where}.{key}: expected {kind}, got {value!r}")
    return float(value)


def _bool(table: dict, key: str, where: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key}: expected true or false, got {value!r}")
    return value


def _visibility(table: dict, where: str) -> str:
    value = table.get("visibility", "visible")
    if value not in VISIBILITIES:
        raise ConfigError(f"{where}.visibility: expected one of {', '.join(VISIBILITIES)}, got {value!r}")
    return value


def gradescope_settings(config) -> dict:
    """labs.toml's [gradescope] settings of config, with their defaults."""
    return {"output_format": "text", "visibility": "visible", **dict(getattr(config, "gradescope", ()) or ())}


def _gradescope(raw, where: str) -> tuple:
    """The [gradescope] table: output_format (how Gradescope shows the outputs) and visibility (the default of the
    whole result; a test's own visibility overrides it)."""
    raw = _table(raw, where)
    _check_keys(raw, where, set(), {"output_format", "visibility"})
    fmt = raw.get("output_format", "text")
    if fmt not in OUTPUT_FORMATS:
        raise ConfigError(f"{where}.output_format: expected one of {', '.join(OUTPUT_FORMATS)}, got {fmt!r}")
    return (("output_format", fmt), ("visibility", _visibility(raw, where)))


def _args(value, where: str) -> tuple:
    """A list of harness arguments (strings), none of them one the grader sets itself."""
    if not isinstance(value, list) or not value or not all(isinstance(a, str) and a for a in value):
        raise ConfigError(f"{where}: expected a non-empty list of non-empty strings")
    owned = [a for a in value if a in GRADER_ARGS]
    if owned:
        raise ConfigError(f"{where}: {owned[0]} is set by the grader, not in labs.toml")
    return tuple(value)


def _group(raw, where: str) -> Group:
    raw = _table(raw, where)
    _check_keys(raw, where, {"name", "points"}, {"runs", "datasets", "expected", "timeout", "visibility"})
    if ("runs" in raw) == ("datasets" in raw):
        raise ConfigError(f"{where}: give exactly one of runs and datasets")
    if "expected" in raw and "datasets" not in raw:
        raise ConfigError(f"{where}.expected: only a datasets group has expected files")
    runs = ()
    if "runs" in raw:
        value = raw["runs"]
        if (not isinstance(value, list) or not value or
                not all(isinstance(r, list) and r and all(isinstance(a, str) for a in r) for r in value)):
            raise ConfigError(f"{where}.runs: expected a non-empty list of non-empty lists of strings")
        runs = tuple(_args(r, f"{where}.runs") for r in value)
    return Group(name=_string(raw, "name", where), points=_number(raw, "points", where),
                 runs=runs, datasets=_string(raw, "datasets", where) if "datasets" in raw else None,
                 timeout=_number(raw, "timeout", where, positive=True),
                 expected=_bool(raw, "expected", where, True), visibility=_visibility(raw, where))


def _performance(raw, where: str) -> Performance:
    raw = _table(raw, where)
    _check_keys(raw, where, {"points", "bench", "lower", "full"},
                {"measured", "timeout", "yardstick", "gpus", "visibility"})
    bench = raw["bench"]
    if isinstance(bench, int) and not isinstance(bench, bool) and bench > 0:
        bench = str(bench)
    if not isinstance(bench, str) or parse_size(bench) is None:  # the harness's --n syntax (grader/patterns.py)
        raise ConfigError(f"{where}.bench: expected a size like 67108864 or \"2^26\", got {raw['bench']!r}")
    perf = Performance(points=_number(raw, "points", where), bench=bench,
                       lower=_number(raw, "lower", where, positive=True),
                       full=_number(raw, "full", where, positive=True),
                       measured=_number(raw, "measured", where, positive=True),
                       timeout=_number(raw, "timeout", where, positive=True),
                       yardstick=_string(raw, "yardstick", where) if "yardstick" in raw else "baseline",
                       visibility=_visibility(raw, where))
    gpus = []
    for gpu, t in _table(raw.get("gpus", {}), f"{where}.gpus").items():
        w = f"{where}.gpus.{gpu!r}"
        t = _table(t, w)
        _check_keys(t, w, {"lower", "full"}, {"measured", "run_seconds"})
        runs = _table(t.get("run_seconds", {}), f"{w}.run_seconds")
        for group in runs:
            _positive(runs, group, f"{w}.run_seconds")
        g = GpuThresholds(_number(t, "lower", w, positive=True), _number(t, "full", w, positive=True),
                          _number(t, "measured", w, positive=True), tuple(runs.items()))
        if g.lower > g.full:
            raise ConfigError(f"{w}: lower ({g.lower:g}) must not exceed full ({g.full:g})")
        gpus.append((gpu, g))
    perf = replace(perf, gpus=tuple(gpus))
    if perf.yardstick not in YARDSTICKS:
        raise ConfigError(f"{where}.yardstick: expected one of {', '.join(YARDSTICKS)}, got {perf.yardstick!r}")
    if perf.lower > perf.full:
        raise ConfigError(f"{where}: lower ({perf.lower:g}) must not exceed full ({perf.full:g})")
    return perf


def _sanitizers(raw: dict, where: str) -> Sanitizers:
    """A [suites.NAME.sanitizers] table, with a lab's own [labs.NN-stage.sanitizers] keys already laid over it."""
    _check_keys(raw, where, {"points", "tools", "runs"}, {"timeout", "visibility", "hazard_cost"})
    cost = _number(raw, "hazard_cost", where) if "hazard_cost" in raw else 1.0
    if not 0 <= cost <= 1:
        raise ConfigError(f"{where}.hazard_cost: expected a share from 0 to 1 (1: a hazard takes every correctness "
                          f"point), got {cost:g}")
    tools = raw["tools"]
    if not isinstance(tools, list) or not tools or not all(isinstance(x, str) for x in tools):
        raise ConfigError(f"{where}.tools: expected a non-empty list of tool names")
    unknown = [x for x in tools if x not in SANITIZER_TOOLS]
    if unknown:
        raise ConfigError(f"{where}.tools: unknown tool {unknown[0]!r}; the tools are {', '.join(SANITIZER_TOOLS)}")
    if len(set(tools)) != len(tools):
        raise ConfigError(f"{where}.tools: a tool appears twice")
    runs = raw["runs"]
    if not isinstance(runs, list) or not runs or not all(isinstance(r, list) for r in runs):
        raise ConfigError(f"{where}.runs: expected a non-empty list of non-empty lists of strings")
    return Sanitizers(points=_number(raw, "points", where), tools=tuple(tools),
                      runs=tuple(_args(r, f"{where}.runs") for r in runs),
                      timeout=_number(raw, "timeout", where, positive=True), visibility=_visibility(raw, where),
                      hazard_cost=cost)


def _scoring(raw, where: str) -> Scoring:
    """The [scoring] table: steps (a whole number >= 0) and the margin's min_margin <= max_margin (both under 0.5)
    and spread_factor."""
    raw = _table(raw, where)
    _check_keys(raw, where, {"steps", "min_margin", "max_margin", "spread_factor"})
    steps = raw["steps"]
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ConfigError(f"{where}.steps: expected a whole number >= 0 (0: linear), got {steps!r}")
    scoring = Scoring(steps=steps, min_margin=_number(raw, "min_margin", where),
                      max_margin=_number(raw, "max_margin", where), spread_factor=_number(raw, "spread_factor", where))
    if scoring.max_margin >= 0.5:
        raise ConfigError(f"{where}.max_margin: expected a fraction under 0.5 (0.05 is 5%), got {scoring.max_margin:g}")
    if scoring.min_margin > scoring.max_margin:
        raise ConfigError(f"{where}: min_margin ({scoring.min_margin:g}) must not exceed max_margin "
                          f"({scoring.max_margin:g})")
    return scoring


def parse_config(data: dict, path: Path) -> Config:
    """Checks the parsed TOML `data` (read from path), with the patterns' suites it does not write itself
    (with_pattern_suites), and builds a Config; ConfigError on any problem."""
    name = path.name
    data = with_pattern_suites(data)
    _check_keys(data, name, {"calibration", "labs"}, {"suites", "scoring", "late", "gradescope", "limits"})
    scoring = _scoring(data["scoring"], f"{name}: scoring") if "scoring" in data else Scoring()
    calibration = _table(data["calibration"], f"{name}: calibration")
    _check_keys(calibration, f"{name}: calibration", {"gpu", "calibrated_on"}, {"bench"})
    for key in calibration:
        _string(calibration, key, f"{name}: calibration")

    suites = {}
    suite_sanitizers = {}  # suite name -> its raw sanitizers table, checked with each lab's own keys laid over it
    for suite_name, suite in _table(data.get("suites", {}), f"{name}: suites").items():
        where = f"{name}: suites.{suite_name}"
        suite = _table(suite, where)
        _check_keys(suite, where, {"groups"}, {SANITIZERS})
        if SANITIZERS in suite:
            suite_sanitizers[suite_name] = _table(suite[SANITIZERS], f"{where}.{SANITIZERS}")
        if not isinstance(suite["groups"], list) or not suite["groups"]:
            raise ConfigError(f"{where}.groups: expected a non-empty list of groups")
        groups = tuple(_group(g, f"{where}.groups[{k}]") for k, g in enumerate(suite["groups"]))
        seen = [g.name for g in groups]
        dupes = {g for g in seen if seen.count(g) > 1}
        if dupes:
            raise ConfigError(f"{where}: group name {sorted(dupes)[0]!r} appears twice")
        if SANITIZERS in seen:
            raise ConfigError(f"{where}: a correctness group may not be called {SANITIZERS!r}")
        suites[suite_name] = groups

    labs = []
    raw_labs = _table(data["labs"], f"{name}: labs")
    if not raw_labs:
        raise ConfigError(f"{name}: labs: no labs")
    for lab_name, raw in raw_labs.items():
        where = f"{name}: labs.{lab_name}"
        if not LAB_NAME.match(lab_name):
            raise ConfigError(f"{where}: a lab's name is its folder's, like 03-sequential")
        raw = _table(raw, where)
        _check_keys(raw, where, {"pattern", "source", "suite"},
                    {"performance", "args", "bonus", SANITIZERS, "due", "lms_name", "simulator_check_open"})
        source = _string(raw, "source", where)
        if "/" in source or source.startswith("."):
            raise ConfigError(f"{where}.source: expected a file name inside the lab folder, got {source!r}")
        suite = _string(raw, "suite", where)
        if suite not in suites:
            raise ConfigError(f"{where}.suite: no [suites.{suite}] in {name}")
        perf = _performance(raw["performance"], f"{where}.performance") if "performance" in raw else None
        perf = replace(perf, scoring=scoring) if perf else None
        if perf and any(g.name == "performance" for g in suites[suite]):
            raise ConfigError(f"{where}: a correctness group may not be called 'performance'")
        args = _args(raw["args"], f"{where}.args") if "args" in raw else ()
        pattern = _string(raw, "pattern", where)
        if pattern not in PATTERNS:
            raise ConfigError(f"{where}.pattern: expected a harness family, one of {', '.join(PATTERNS)} "
                              f"(grader/patterns.py), got {pattern!r}")
        if source != PATTERNS[pattern].source:
            raise ConfigError(f"{where}.source: every {pattern} lab's file is {PATTERNS[pattern].source} "
                              f"(grader/patterns.py), got {source!r}")
        sanitizers = None
        if SANITIZERS in raw or suite in suite_sanitizers:  # the lab's own keys override its suite's
            own = _table(raw.get(SANITIZERS, {}), f"{where}.{SANITIZERS}")
            sanitizers = _sanitizers({**suite_sanitizers.get(suite, {}), **own},
                                     f"{where}.{SANITIZERS}" if own else f"{name}: suites.{suite}.{SANITIZERS}")
        for gpu, t in perf.gpus if perf else ():
            unknown = sorted(set(dict(t.run_seconds)) - {g.name for g in suites[suite]})
            if unknown:
                raise ConfigError(f"{where}.performance.gpus.{gpu!r}.run_seconds: no such group in suites.{suite}: "
                                  f"{', '.join(unknown)}")
        labs.append(Lab(name=lab_name, pattern=pattern, source=source,
                        groups=suites[suite], performance=perf, args=args, bonus=_bool(raw, "bonus", where, False),
                        sanitizers=sanitizers, due=_due(raw, where),
                        lms_name=_string(raw, "lms_name", where) if "lms_name" in raw else "",
                        simulator_check_open=_bool(raw, "simulator_check_open", where, False)))
    try:
        policy = late.parse_policy(data["late"], f"{name}: late", {lab.name: lab.due for lab in labs if lab.due}) \
            if "late" in data else None
    except late.LateError as e:
        raise ConfigError(str(e)) from None
    return Config(path=path, calibration=dict(calibration), labs=tuple(sorted(labs, key=lambda lab: lab.name)),
                  late=policy, gradescope=_gradescope(data.get("gradescope", {}), f"{name}: gradescope"),
                  limits=_limits(data.get("limits", {}), f"{name}: limits"))


def _due(raw: dict, where: str):
    """A lab's own due date (grader/score/late.py), or None."""
    try:
        return late.parse_due(raw["due"], f"{where}.due") if "due" in raw else None
    except late.LateError as e:
        raise ConfigError(str(e)) from None


# ---- thresholds calibrated by make calibrate ----
#
# Performance thresholds calibrated by `make calibrate` (tools/instructor/calibrate.py): one file per GPU model in
# grader/thresholds.d/ beside labs.toml, laid over labs.toml's tables when the grader loads it (grader/config.py).
#
# A file holds a [calibration] table (`gpu`, the model's name as the device reports it, and `calibrated_on`) and, for
# each lab it calibrated, the same table labs.toml has for a GPU model:
#
#     [labs.03-sequential.performance.gpus."NVIDIA A100-SXM4-80GB"]
#     measured = 2.6
#     lower = 1.12
#     full = 2.34
#
# It takes the place of labs.toml's own table for that lab and model, if there is one (recalibrating an H200 needs no
# edit of labs.toml); two files may not calibrate the same lab and model. The numbers themselves are checked with the
# rest of labs.toml.

THRESHOLDS_FOLDER = "thresholds.d"  # beside labs.toml: one file per GPU model, from make calibrate


def _positive(table: dict, key: str, where: str) -> None:
    value = table.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{where}.{key}: expected a positive number, got {value!r}")


def read_thresholds(path: Path) -> dict:
    """One thresholds file, checked for its shape: ConfigError naming the file and the key at fault."""
    where = f"{path.parent.name}/{path.name}"
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {where}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: not valid TOML: {e}") from None
    unknown = data.keys() - {"calibration", "labs"}
    if unknown or not isinstance(data.get("calibration"), dict) or not isinstance(data.get("labs"), dict):
        raise ConfigError(f"{where}: expected a [calibration] table and [labs.NN-stage.performance.gpus.\"GPU\"] "
                          f"tables only" + (f" (unknown: {', '.join(sorted(unknown))})" if unknown else ""))
    calibration = data["calibration"]
    for key in ("gpu", "calibrated_on"):
        if not isinstance(calibration.get(key), str) or not calibration[key]:
            raise ConfigError(f"{where}: calibration.{key}: expected a non-empty string")
    for lab, table in data["labs"].items():
        at = f"{where}: labs.{lab}"
        if not isinstance(table, dict) or table.keys() != {"performance"} or not isinstance(
                table["performance"], dict) or table["performance"].keys() != {"gpus"} or not isinstance(
                table["performance"]["gpus"], dict):
            raise ConfigError(f"{at}: expected only performance.gpus.\"GPU\" tables")
        for gpu, t in table["performance"]["gpus"].items():
            w = f"{at}.performance.gpus.{gpu!r}"
            if not isinstance(t, dict) or not {"lower", "full"} <= t.keys() <= {"lower", "full", "measured",
                                                                                  "run_seconds"}:
                raise ConfigError(f"{w}: expected lower, full and measured (and run_seconds, optional)")
            for key in t:
                if key != "run_seconds":
                    _positive(t, key, w)
    return data


def merge_thresholds(data: dict, folder: Path) -> dict:
    """data (labs.toml as parsed) with every folder/*.toml file laid over it, in name order; data itself when the
    folder does not exist. ConfigError when a file is malformed, names a lab labs.toml lacks (or one without a
    performance test), or calibrates what another file does."""
    folder = Path(folder)
    if not folder.is_dir():
        return data
    labs = data.get("labs") if isinstance(data.get("labs"), dict) else {}
    seen = {}  # (lab, gpu) -> the file that calibrated it
    models = []
    for path in sorted(folder.glob("*.toml")):
        extra = read_thresholds(path)
        where = f"{folder.name}/{path.name}"
        for lab, table in extra["labs"].items():
            perf = labs.get(lab, {}).get("performance") if isinstance(labs.get(lab), dict) else None
            if not isinstance(perf, dict):
                raise ConfigError(f"{where}: labs.{lab}: " + ("no such lab in labs.toml" if lab not in labs
                                                              else "this lab has no performance test in labs.toml"))
            for gpu, t in table["performance"]["gpus"].items():
                if (lab, gpu) in seen:
                    raise ConfigError(f"{where}: labs.{lab}: {gpu} is calibrated in {seen[lab, gpu]} too: keep one")
                seen[lab, gpu] = where
                gpus = perf.setdefault("gpus", {})
                if isinstance(gpus, dict):
                    gpus[gpu] = t
        models.append((extra["calibration"]["gpu"], extra["calibration"]["calibrated_on"], where))
    calibration = data.get("calibration")
    if models and isinstance(calibration, dict) and isinstance(calibration.get("gpu"), str):
        named = calibration["gpu"].split(" and ")
        calibration["gpu"] += "".join(f" and {gpu}" for gpu, _, _ in models if gpu not in named)
        if isinstance(calibration.get("calibrated_on"), str):
            calibration["calibrated_on"] += "".join(f"; {gpu}: {when} ({where})" for gpu, when, where in models)
    return data


# ---- the course's own labs file ----
#
# A course keeps what is its own in the kit's course/ folder (course/README.md): its datasets, hidden tests and
# overrides. course/labs.toml, when there is one, is laid over the kit's grader/labs.toml whenever that is the file
# graded with (make grade, make grade-class, the Gradescope autograder): its tables merge into the kit's key by key,
# its [[suites.NAME.groups]] come after the kit's groups of that suite (a hidden group: `visibility =
# "after_due_date"`, `datasets = "course/datasets/NAME"`), and any other value replaces the kit's. The result is
# checked as labs.toml is.

COURSE_FOLDER = "course"  # beside grader/: the course's own files, never in the student release (make dist)


def course_file(path) -> Path | None:
    """The course's labs.toml laid over the labs file at path: KIT/course/labs.toml for the kit's own
    KIT/grader/labs.toml, when it exists; None otherwise (a labs file given elsewhere is taken as it is)."""
    path = Path(path).resolve()
    if path.name != "labs.toml" or path.parent.name != "grader":
        return None
    overlay = path.parent.parent / COURSE_FOLDER / "labs.toml"
    return overlay if overlay.is_file() else None


def lay_over(base: dict, top: dict) -> dict:
    """base with top laid over it: tables merged key by key, lists of tables (TOML's [[...]]) appended, any other
    value of top in place of base's."""
    out = dict(base)
    for key, value in top.items():
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            out[key] = lay_over(old, value)
        elif isinstance(old, list) and isinstance(value, list) and all(isinstance(v, dict) for v in old + value):
            out[key] = old + value
        else:
            out[key] = value
    return out


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path.name}: not valid TOML: {e}") from None


def with_pattern_suites(data: dict) -> dict:
    """data with each pattern's suite (patterns/NAME/pattern.toml's [suite]) as its [suites.NAME] where data has
    none of that name: a labs file that writes a [suites.NAME] writes the whole suite. A course's course/labs.toml,
    laid over in load_config once these are in, adds to them."""
    suites = {name: p.suite for name, p in PATTERNS.items() if p.suite}
    return {**data, "suites": {**suites, **data.get("suites", {})}} if suites else data


def load_config(path=DEFAULT_PATH) -> Config:
    """Reads and checks labs.toml at path, with the thresholds `make calibrate` wrote into thresholds.d/ beside it
    (merge_thresholds) and, for the kit's own labs.toml, the course's course/labs.toml laid over (course_file);
    ConfigError if either is missing, not valid TOML or the result inconsistent."""
    path = Path(path)
    data = merge_thresholds(with_pattern_suites(_read_toml(path)), path.parent / THRESHOLDS_FOLDER)
    overlay = course_file(path)
    if overlay is not None:
        try:
            data = lay_over(data, _read_toml(overlay))
            return replace(parse_config(data, path), course=overlay)
        except ConfigError as e:
            raise ConfigError(f"{e} (with {COURSE_FOLDER}/labs.toml laid over {path.name})") from None
    return parse_config(data, path)


def lab_of(folder, config: Config | None = None) -> Lab:
    """The lab of labs.toml (its pattern, file, arguments) that a lab folder (NN-stage, under labs/, solutions/ or a
    submission) holds; ConfigError when labs.toml has no lab of that name."""
    config = config or load_config()
    lab = config.named(Path(folder).name)
    if lab is None:
        raise ConfigError(f"{Path(folder).name}: no such lab in {Path(config.path).name}")
    return lab
