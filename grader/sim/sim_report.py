"""The simulator's report, as the grader reads it: the report channel's JSON lines (sim/runtime.c: counts, findings,
kernel faults, what it cannot simulate) gathered into a SimReport, and what a report says in words (a run's
diagnostic, the counts table of the performance row). grader/sim/simulator.py runs the programs and passes the channel
(run_with_report); this module only reads and words what came back, whatever the student's code wrote there: every
field is checked for its type, a line too long or not a report counts as garbage, and at most MAX_KEPT distinct
findings and errors are kept.
"""
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from grader.run.run import LineReader

REPORT_MARK = b'{"ppl_sim_report": '  # how every report line starts (sim/runtime.c)
MAX_REPORT_LINE = 16 << 20  # bytes of one report line read; a longer line is dropped, counted as garbage
MAX_KEPT = 1000  # distinct findings (and errors) kept per run
MAX_FINDING_LINES = 3  # findings a run's diagnostic names (the reproduction lists up to ten, as the sanitizers row)
MAX_COUNT_LINES = 40  # lines of the counts table in the performance row
COUNT_KEYS = ("launches", "blocks", "threads", "barriers", "fences", "atomics", "warp_instructions", "active_lanes",
              "predicated_on_lanes", "branches", "divergent_branches", "shared_requests", "shared_wavefronts",
              "shared_extra_wavefronts", "global_load_requests", "global_store_requests", "global_sectors",
              "global_ideal_sectors")


MANGLED = re.compile(r"\b_Z[A-Za-z0-9_]+")


def demangle(text: str) -> str:
    """text with the C++ names the simulator reports (mangled, as in the PTX: "_Z13reduce_kernelPKfPfm") shown as
    the student wrote them ("reduce_kernel(float const*, float*, unsigned long)"), through binutils' c++filt; text
    unchanged when c++filt is missing or fails."""
    names = sorted(set(MANGLED.findall(text)))
    tool = shutil.which("c++filt")
    if not names or not tool:
        return text
    try:
        proc = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return text
    plain = proc.stdout.splitlines()
    if proc.returncode != 0 or len(plain) != len(names):
        return text
    table = dict(zip(names, plain))
    return MANGLED.sub(lambda m: table.get(m.group(0), m.group(0)), text)


# ---- the report channel ----

def as_text(value) -> str:
    """value when it is a string (a report field), "" otherwise."""
    return value if isinstance(value, str) else ""


def as_count(value) -> int:
    """value when it is a whole number >= 0 (a report count), 0 otherwise."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


FINDING_KEYS = ("kind", "kernel", "where", "other_where", "file", "line", "other_file", "other_line", "ptx_line",
                "other_ptx_line")


@dataclass
class SimReport:
    """What a run's report channel carried: lines (report lines read), garbage (lines that were not one: text the
    lab's code wrote on the descriptor, or a line cut short), findings (distinct, each with the largest count seen),
    errors (distinct: kind "kernel-fault" or "cannot-simulate", status, what, message), the last line's kernels
    (counts) and launches, and run: how the run ended, as the grader judged it (status, message, args; {} when not
    recorded)."""

    lines: int = 0
    garbage: int = 0
    findings: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    kernels: list = field(default_factory=list)
    launches: int = 0
    run: dict = field(default_factory=dict)
    _seen: dict = field(default_factory=dict, repr=False)

    def take(self, raw: bytes) -> None:
        """Adds one line of the channel."""
        at = raw.rfind(REPORT_MARK)  # text written just before a line, without a line end, is not part of it
        try:
            obj, _ = json.JSONDecoder().raw_decode(raw[at:].decode("utf-8", "replace")) if at >= 0 else (None, 0)
        except ValueError:
            obj = None
        if not isinstance(obj, dict) or obj.get("ppl_sim_report") != 1:
            self.garbage += 1
            return
        self.lines += 1
        for f in obj.get("findings") or []:
            if isinstance(f, dict):
                self._add("finding", {k: f.get(k) for k in (*FINDING_KEYS, "count", "message", "fix", "advice")})
        for e in obj.get("errors") or []:
            if isinstance(e, dict):
                self._add("error", {k: as_text(e.get(k)) for k in ("kind", "status", "what", "message")})
        kernels = obj.get("kernels")
        self.kernels = [k for k in kernels if isinstance(k, dict)] if isinstance(kernels, list) else []
        self.launches = as_count(obj.get("launches"))

    def _add(self, what: str, item: dict) -> None:
        if what == "finding":
            key = ("finding", *(str(item.get(k)) for k in FINDING_KEYS))
            seen = self._seen.get(key)
            if seen is not None:
                seen["count"] = max(as_count(seen.get("count")), as_count(item.get("count")))
                return
            kept = self.findings
        else:
            key = ("error", *item.values())
            if key in self._seen:
                return
            kept = self.errors
        if len(kept) < MAX_KEPT:
            self._seen[key] = item
            kept.append(item)
            if what == "finding":
                self.findings[:] = barrier_first(self.findings)

    def limitation(self) -> dict | None:
        """The first "cannot-simulate" error: a kernel (or device code) the simulator cannot run."""
        return next((e for e in self.errors if e["kind"] == "cannot-simulate"), None)

    def faults(self) -> list:
        return [e for e in self.errors if e["kind"] == "kernel-fault"]

    def to_json(self) -> dict:
        return {"lines": self.lines, "garbage": self.garbage, "launches": self.launches, "errors": self.errors,
                "findings": self.findings, "kernels": self.kernels, "run": self.run}

    @classmethod
    def from_json(cls, data: dict) -> "SimReport":
        report = cls(as_count(data.get("lines")), as_count(data.get("garbage")))
        report.findings = barrier_first([f for f in data.get("findings") or [] if isinstance(f, dict)])
        report.errors = [e for e in data.get("errors") or [] if isinstance(e, dict)]
        report.kernels = [k for k in data.get("kernels") or [] if isinstance(k, dict)]
        report.launches = as_count(data.get("launches"))
        run = data.get("run")
        report.run = {k: run[k] for k in ("status", "message", "args") if k in run} if isinstance(run, dict) else {}
        return report


WARP_RACE, BLOCK_RACE = "-race-intra-warp", "-race-inter-warp"  # the ends of the kinds (sim/report.c)
SYNCWARP = "__syncwarp"  # a race finding's "fix" when the race is confined to one warp (sim/report.c's sim_fix)


def _race_key(f: dict):
    """(memory space, kernel, the two places) of a race finding, else None."""
    kind = as_text(f.get("kind"))
    for end in (WARP_RACE, BLOCK_RACE):
        if kind.endswith(end):
            places = frozenset((as_text(f.get("where")), as_text(f.get("other_where"))))
            return kind.removesuffix(end), as_text(f.get("kernel")), places
    return None


def hazard_key(f: dict) -> tuple:
    """What makes a finding one hazard, as the simulator records it (sim/report.c): its kind (which names the memory
    space), its kernel and the unordered pair of its source places. Runs of one lab that met the same race, first
    at other threads or other PTX instructions of the line, give one hazard."""
    places = frozenset((as_text(f.get("where")), as_text(f.get("other_where"))))
    return as_text(f.get("kind")), as_text(f.get("kernel")), places


def _take_advice(within: dict, between: dict) -> None:
    """Gives a race within a warp whose advice is __syncwarp() the advice of the race between warps at the same
    places (the barrier that race needs orders these lanes too, where a __syncwarp() would leave the other): the
    simulator's own words, its "advice", which sim/report.c writes and decides itself when both races are in one
    run; this does the same for races that different runs met. In place."""
    old, new = as_text(within.get("advice")), as_text(between.get("advice"))
    message = as_text(within.get("message"))
    if within.get("fix") != SYNCWARP or not old or not new or not message.endswith(old):
        return
    within["message"] = message[:len(message) - len(old)] + new
    within["fix"], within["advice"] = between.get("fix"), new


def barrier_first(findings: list) -> list:
    """findings with the advice that fixes the most first: where the same lines race within a warp and between
    warps (one missing __syncthreads() makes both), the race between warps takes the place of the first of them and
    the race within a warp follows it, with the barrier's advice (_take_advice), so that the first thing a student
    reads is not a __syncwarp() that would leave the race between warps. Findings are the report's dicts (kind,
    kernel, where, other_where, message, fix, advice); the order is otherwise kept. Returns a new list (the races
    within a warp are changed in place)."""
    between = {}
    for f in findings:
        if as_text(f.get("kind")).endswith(BLOCK_RACE):
            between.setdefault(_race_key(f), []).append(f)
    ordered, placed = [], set()
    for f in findings:
        key = _race_key(f)
        if key not in between:
            ordered.append(f)
            continue
        if key in placed:
            continue
        placed.add(key)  # the pair's place is that of its first finding, the race between warps first
        within = [g for g in findings if _race_key(g) == key and as_text(g.get("kind")).endswith(WARP_RACE)]
        for g in within:
            _take_advice(g, between[key][0])
        ordered += [*between[key], *within]
    return ordered


def read_report(data: bytes) -> SimReport:
    """A SimReport of a channel's whole content (tests, and PPL_SIM_REPORT files)."""
    report = SimReport()
    for raw in data.split(b"\n"):
        if raw.strip():
            report.take(raw[:MAX_REPORT_LINE])
    return report


def load_report(path) -> SimReport | None:
    """The SimReport run_harness_sim saved (workdir/sim-report.json), or None."""
    try:
        return SimReport.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, AttributeError):
        return None


class ReportReader(LineReader):
    """Reads the report channel as it fills (grader/run/run.py's LineReader), a line at a time into a SimReport (memory
    bounded whatever arrives): a line too long to read counts as garbage, and the rest of it is dropped."""

    skip_overlong = True

    def __init__(self, fd: int):
        super().__init__(fd, MAX_REPORT_LINE)
        self.report = SimReport()

    def on_line(self, line: bytes) -> None:
        self.report.take(line)

    def on_overlong(self, head: bytes) -> None:
        self.report.garbage += 1


class RunsReportReader(ReportReader):
    """A ReportReader of a program that runs several argument lists (the checker's --runs-fd): the device program
    starts its report afresh at each list and names the list on each line ("run": N, sim/runtime.c's rt_begin_run),
    so each list gets a SimReport of its own (reports: run -> SimReport, the dict given or a new one; a line that
    names none, or is garbage, goes to the list of the line before). on_limit(run), when given, is called once, at
    the first kernel fault "limit" (a kernel that would hang: grader/sim/simulator.py's run_lists_sim stops the program
    there); on_run(run), after each line, with the list it went to."""

    RUN = re.compile(rb'"run": (\d{1,9}), ')

    def __init__(self, fd: int, on_limit=None, on_run=None, reports=None):
        super().__init__(fd)
        self.reports = reports if reports is not None else {}
        self.current, self.on_limit, self.on_run, self.limited = -1, on_limit, on_run, False

    def on_line(self, line: bytes) -> None:
        found = self.RUN.search(line)
        if found:
            self.current = int(found.group(1))
        report = self.reports.setdefault(self.current, SimReport())
        report.take(line)
        if (self.on_limit is not None and not self.limited
                and any(e["status"] == "limit" for e in report.faults())):
            self.limited = True
            self.on_limit(self.current)
        if self.on_run is not None:
            self.on_run(self.current)

    def on_overlong(self, head: bytes) -> None:
        self.reports.setdefault(self.current, SimReport()).garbage += 1


# ---- what the report says ----

def finding_text(f: dict) -> str:
    """A finding in the simulator's words: "[kind] kernel K, file:line and file:line (N times): what"."""
    where = as_text(f.get("where")) or "?"
    other = as_text(f.get("other_where"))
    count = as_count(f.get("count")) or 1
    return (f"[{as_text(f.get('kind'))}] kernel {as_text(f.get('kernel'))}, {where}{' and ' + other if other else ''} "
            f"({count} time{'s' if count != 1 else ''}): {as_text(f.get('message'))}")


def fault_text(e: dict) -> str:
    return f"{e['what']} failed: {e['message']}"


def limitation_text(e: dict) -> str:
    return f"the simulator cannot run {e['what']} ({e['status']}): {e['message']}"


def diagnostic(report: SimReport) -> str:
    """What the simulator reported, for a run's message: every kernel fault, and the first findings."""
    said = [fault_text(e) for e in report.faults()]
    said += [finding_text(f) for f in report.findings[:MAX_FINDING_LINES]]
    if len(report.findings) > MAX_FINDING_LINES:
        said.append(f"... and {len(report.findings) - MAX_FINDING_LINES} more findings (the sanitizers row lists "
                    f"them, and so does the run's reproduction below, on the simulator)")
    return demangle("\n".join(said))


# Whose a limitation is (sim/runtime.c's "cannot-simulate" statuses): a launch past its instruction budget is the
# student's file's doing (far more work than the lab needs: the simulator's check withholds the points it guards,
# grader/sim/sim_check.py); every other (PTX it cannot parse, an instruction it lacks, device code it cannot load)
# is the simulator's gap, the kit's. A run stopped by the grader's wall-clock backstop is the kit's too (KIT).
STUDENT, KIT = "student", "kit"
STUDENT_LIMITS = ("budget",)


def whose_limit(limit: dict) -> str:
    """STUDENT or KIT: whose doing the limitation limit (SimReport.limitation's) is."""
    return STUDENT if limit.get("status") in STUDENT_LIMITS else KIT


def not_graded_message(limit: dict) -> str:
    return f"not graded on the simulator: {demangle(limitation_text(limit))}; grade on a GPU"


def counts_summary(report: SimReport, args, lab: str = "NN") -> str:
    """The counts per kernel of report (a run with args), for people: SIMT efficiency, divergence, bank conflicts,
    sectors per request, cut to MAX_COUNT_LINES lines; "" when it has no kernels."""
    lines = []
    for k in report.kernels:
        c = {key: as_count(k.get(key)) for key in COUNT_KEYS}
        lanes = 32 * c["warp_instructions"] or 1
        requests = c["global_load_requests"] + c["global_store_requests"]
        lines += [f"== kernel {as_text(k.get('name'))}",
                  f"   launches {c['launches']}, blocks {c['blocks']}, threads {c['threads']}, barriers "
                  f"{c['barriers']}, fences {c['fences']}, atomics {c['atomics']}",
                  f"   warp instructions {c['warp_instructions']}, SIMT efficiency "
                  f"{100 * c['active_lanes'] / lanes:.1f}% (active lanes), "
                  f"{100 * c['predicated_on_lanes'] / lanes:.1f}% (lanes not predicated off)",
                  f"   branches {c['branches']}, divergent {c['divergent_branches']} "
                  f"({100 * c['divergent_branches'] / (c['branches'] or 1):.1f}%)",
                  f"   shared requests {c['shared_requests']}, wavefronts {c['shared_wavefronts']}, extra wavefronts "
                  f"from bank conflicts {c['shared_extra_wavefronts']} "
                  f"({c['shared_wavefronts'] / (c['shared_requests'] or 1):.2f} wavefronts/request)",
                  f"   global requests {c['global_load_requests']} loads + {c['global_store_requests']} stores, "
                  f"sectors {c['global_sectors']} ({c['global_sectors'] / (requests or 1):.2f} sectors/request, "
                  f"ideal {c['global_ideal_sectors'] / (requests or 1):.2f})"]
    if not lines:
        return ""
    if len(lines) > MAX_COUNT_LINES:
        lines = lines[:MAX_COUNT_LINES] + [f"... ({len(lines) - MAX_COUNT_LINES} more lines)"]
    header = (f"The simulator's counts for {' '.join(args)} (per source line: make sim LAB={lab[:2]}; "
              f"sim/README.md explains them):")
    return demangle("\n".join([header, *lines]))
