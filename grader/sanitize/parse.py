"""Reading compute-sanitizer's text: each finding a block of lines after the run's prefix (a headline, its
details indented), read line by line as it arrives, bounded, in the layouts of current and older versions.
grader/sanitize/__init__.py says why the text and not --save or --xml."""
import re
from dataclasses import dataclass, field


PREFIX = "========="  # compute-sanitizer's default prefix (recorded outputs); each run of the grader gets its own
MAX_LINE = 64 << 10  # characters of one log line read; the rest of a longer line is dropped
MAX_FINDINGS = 1000  # distinct findings kept per run; more are counted in Parsed.dropped


# ---- reading compute-sanitizer's text ----

@dataclass
class Location:
    """One source line a finding names: the file as the line table has it (an absolute path for the kit's builds),
    the line, and the function compute-sanitizer names there (a kernel, or a __device__ function), if any."""

    file: str | None
    line: int | None
    function: str = ""
    access: str = ""  # racecheck: "read" or "write"; otherwise empty


@dataclass
class Finding:
    """One thing a tool found, merged over the threads (and processes) that hit the same lines.

    kind is compute-sanitizer's headline, less racecheck's locations ("Invalid __global__ write of size 4 bytes",
    "Race reported between Write access and Read access", "Barrier error detected. Divergent thread(s) in block");
    severity is "error", or "warning" for racecheck's warnings (hazards between lanes of one warp).
    origin: "student" (a line of it is in the student's file, or no line at all: findings.classify says why), "kit"
    (every line of it is in the kit: harness/ or the CUDA and CUB headers), "unknown" until classified. count: threads
    (memcheck, initcheck, synccheck) or hazards (racecheck) reported.
    """

    tool: str
    kind: str
    severity: str = "error"
    locations: list = field(default_factory=list)
    thread: str = ""
    block: str = ""
    details: list = field(default_factory=list)  # other lines worth showing ("Address 0x... is out of bounds ...")
    count: int = 1
    origin: str = "unknown"

    def key(self) -> tuple:
        return self.tool, self.severity, self.kind, tuple((loc.file, loc.line, loc.access) for loc in self.locations)

    @property
    def function(self) -> str:
        return next((loc.function for loc in self.locations if loc.function), "")


@dataclass
class Parsed:
    """What one run's log said: its findings (merged), the CUDA API errors it saw (after a kernel was stopped, usually:
    context, never a finding), compute-sanitizer's own errors (it could not check), and its summary lines.
    banner: the tool's first line was seen (it started and wrote to the log); reported: the errors and hazards its
    summaries count (None without a summary: the tool did not finish); dropped: findings past MAX_FINDINGS."""

    findings: list = field(default_factory=list)
    api_errors: list = field(default_factory=list)
    tool_errors: list = field(default_factory=list)
    summaries: list = field(default_factory=list)
    other: list = field(default_factory=list)  # headlines with no location, thread or detail: messages, not findings
    banner: bool = False
    reported: int | None = None
    dropped: int = 0


HOST_FRAME = re.compile(r"^(Saved host backtrace|Host Frame|in /|in [A-Za-z]:\\)")
THREAD = re.compile(r"by thread \((?P<thread>[^)]*)\) in block \((?P<block>[^)]*)\)")
HAZARDS = re.compile(r"\s*\[(?P<n>\d+) hazards?\]\s*$")
# "KERNEL(args)+0x1f0 in FILE:LINE" (current), "0x1f0 in FILE:LINE:KERNEL(args)" (older), and the same without a
# line table: "KERNEL(args)+0x1f0", "0x1f0 in KERNEL(args)".
LOC_CURRENT = re.compile(r"^(?P<function>.+?)\+0x[0-9a-fA-F]+ in (?P<file>.+?):(?P<line>\d+)$")
LOC_OLDER = re.compile(r"^0x[0-9a-fA-F]+ in (?P<file>[^:\s]+):(?P<line>\d+):(?P<function>.+)$")
LOC_NO_LINE = re.compile(r"^(?:(?P<function>.+?)\+0x[0-9a-fA-F]+|0x[0-9a-fA-F]+ in (?P<function2>.+))$")
FILE_LINE = re.compile(r"(?P<file>[^\s:()\[\]]+\.(?:cu|cuh|h|hpp|hxx|c|cc|cpp|cxx|inl)):(?P<line>\d+)")
RACE = re.compile(r"^(?P<severity>error|warning|warn|info)\s*:\s*race reported between (?P<access>read|write) "
                  r"access at (?P<loc>.+)$", re.I)
RACE_MORE = re.compile(r"^and (?P<access>read|write) access at (?P<loc>.+)$", re.I)
HAZARD = re.compile(r"^(?P<severity>error|warning|warn|info)\s*:?\s*(?:\((?P<warp>warp level programming)\)\s*)?"
                    r"potential (?P<type>RAW|WAR|WAW) hazard detected at __shared__ (?P<address>0x[0-9a-fA-F]+)"
                    r"(?: in block \((?P<block>[^)]*)\))?", re.I)
HAZARD_THREAD = re.compile(r"^(?P<access>read|write) thread \((?P<thread>[^)]*)\) at (?P<loc>.+)$", re.I)
API_ERROR = re.compile(r"^Program hit (?P<error>\S+) \(error (?P<code>\d+)\) due to \"(?P<why>[^\"]*)\" on CUDA API "
                       r"call to (?P<call>\S+?)\.?$")
SUMMARY = re.compile(r"^(ERROR|RACECHECK|LEAK|SYNCCHECK|INITCHECK) SUMMARY\b\s*:?\s*(?P<n>\d+)?", re.I)
BANNER = re.compile(r"^COMPUTE-SANITIZER\b")
IGNORED = re.compile(r"^(Target application returned an error|Error: process didn'?t terminate "
                     r"successfully|Printing limit reached)", re.I)
TOOL_ERROR = re.compile(r"^(Internal Sanitizer Error|Error: |Unable to |Unrecognized option|unrecognised option|"
                        r"Invalid value|Device not supported|The application .* not supported)", re.I)


def parse_location(text: str, access: str = "") -> Location:
    """A Location from compute-sanitizer's text after "at " (without a trailing "[N hazards]")."""
    text = text.strip()
    for pattern in (LOC_CURRENT, LOC_OLDER):
        m = pattern.match(text)
        if m:
            return Location(m["file"], int(m["line"]), m["function"].strip(), access)
    m = FILE_LINE.search(text)
    if m:
        return Location(m["file"], int(m["line"]), "", access)
    m = LOC_NO_LINE.match(text)
    if m:
        return Location(None, None, (m["function"] or m["function2"] or "").strip(), access)
    return Location(None, None, text, access)


def _severity(word: str) -> str:
    word = word.lower()
    return "warning" if word.startswith("warn") else "info" if word == "info" else "error"


def _finding(tool: str, block: list) -> Finding:
    """The Finding of one block whose headline is neither racecheck's nor an API error."""
    headline = block[0][1]
    finding = Finding(tool, headline.rstrip("."))
    host = False
    for _, line in block[1:]:
        if HOST_FRAME.match(line):
            host = True  # a host backtrace runs to the end of the block
        if host:
            continue
        m = THREAD.search(line)
        if m:
            finding.thread, finding.block = m["thread"].replace(" ", ""), m["block"].replace(" ", "")
            continue
        if line.startswith("at "):
            finding.locations.append(parse_location(line[3:]))
        elif line.startswith("Device Frame:") or line.startswith("inlined"):
            loc = parse_location(re.sub(r"^(Device Frame:|inlined (from|at))\s*", "", line))
            if loc.file:
                finding.locations.append(loc)
        else:
            finding.details.append(line)
    return finding


def _race(tool: str, block: list, m) -> Finding:
    """racecheck's analysis report: "Race reported between A access at LOC", then "and B access at LOC [N hazards]"
    (one or more)."""
    finding = Finding(tool, "", _severity(m["severity"]))
    accesses = [m["access"].capitalize()]
    count = 0
    first = HAZARDS.sub("", m["loc"])
    finding.locations.append(parse_location(first, m["access"].lower()))
    for _, line in block[1:]:
        more = RACE_MORE.match(line)
        if more:
            hazards = HAZARDS.search(more["loc"])
            count += int(hazards["n"]) if hazards else 0
            finding.locations.append(parse_location(HAZARDS.sub("", more["loc"]), more["access"].lower()))
            accesses.append(more["access"].capitalize())
        elif not HOST_FRAME.match(line):
            finding.details.append(line)
    finding.kind = "Race reported between " + " and ".join(f"{a} access" for a in accesses)
    finding.count = count or 1
    return finding


def _hazard(tool: str, block: list, m) -> Finding:
    """racecheck's hazard report (--racecheck-report hazard): one hazard, its two threads in the details."""
    finding = Finding(tool, f"Potential {m['type'].upper()} hazard on shared memory", _severity(m["severity"]))
    if m["warp"]:
        finding.severity = "warning"
    finding.block = (m["block"] or "").replace(" ", "")
    for _, line in block[1:]:
        t = HAZARD_THREAD.match(line)
        if t:
            finding.locations.append(parse_location(t["loc"], t["access"].lower()))
            finding.thread = finding.thread or t["thread"].replace(" ", "")
        elif not HOST_FRAME.match(line):
            finding.details.append(line)
    return finding


class OutputParser:
    """Reads one run's log line by line as it arrives (feed), then close() gives the Parsed.

    Only lines with the run's prefix are the tool's; the prefix may come after other text on the line (text the
    program wrote without a line end just before). A line of the prefix alone ends a block, as does a line at the left
    after a block; a block is a headline and its indented details. Memory stays bounded: lines past MAX_LINE are cut,
    and findings past MAX_FINDINGS are only counted."""

    def __init__(self, tool: str, prefix: str = PREFIX):
        self.tool, self.prefix = tool, prefix
        self.parsed = Parsed()
        self._merged = {}
        self._block = []

    def feed(self, raw: str) -> None:
        at = raw.find(self.prefix)
        if at < 0:
            return  # the program's own output
        body = raw[at + len(self.prefix):at + len(self.prefix) + MAX_LINE]
        stripped = body.strip()
        if not stripped:
            self._end_block()
            return
        indented = len(body) - len(body.lstrip(" ")) > 1
        if not indented:
            self._end_block()
        self._block.append((indented, stripped))

    def close(self) -> Parsed:
        self._end_block()
        return self.parsed

    def _end_block(self) -> None:
        block, self._block = self._block, []
        if block:
            self._take(block)

    def _take(self, block: list) -> None:
        parsed, tool = self.parsed, self.tool
        headline = block[0][1]
        if block[0][0]:  # details without a headline (a block cut short): nothing to report
            return
        if BANNER.match(headline):
            parsed.banner = True
            return
        if IGNORED.match(headline):
            return
        summary = SUMMARY.match(headline)
        if summary:
            parsed.summaries.append(headline)
            parsed.reported = (parsed.reported or 0) + int(summary["n"] or 0)
            return
        m = API_ERROR.match(headline)
        if m:
            parsed.api_errors.append(f"{m['call']} returned {m['error']} ({m['why']})")
            return
        race, hazard = RACE.match(headline), HAZARD.match(headline)
        if race:
            finding = _race(tool, block, race)
        elif hazard:
            finding = _hazard(tool, block, hazard)
        elif TOOL_ERROR.match(headline):
            parsed.tool_errors.append(" ".join(line for _, line in block))
            return
        else:
            finding = _finding(tool, block)
            if not finding.locations and not finding.thread and not finding.details:
                if len(parsed.other) < MAX_FINDINGS:
                    parsed.other.append(headline)
                return
        if finding.severity == "info":  # racecheck's lowest level, harmless (only with --racecheck-detect-level info)
            return
        seen = self._merged.get(finding.key())
        if seen:
            seen.count += finding.count
        elif len(parsed.findings) >= MAX_FINDINGS:
            parsed.dropped += 1
        else:
            self._merged[finding.key()] = finding
            parsed.findings.append(finding)


def parse_output(text: str, tool: str, prefix: str = PREFIX) -> Parsed:
    """Reads compute-sanitizer's output of one run of tool (the program's own lines may be mixed in: they lack the
    prefix). Findings hit by several threads, or by several processes, are merged, counted, in order of first report."""
    parser = OutputParser(tool, prefix)
    for line in text.splitlines():
        parser.feed(line)
    return parser.close()
