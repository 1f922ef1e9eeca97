#!/usr/bin/env python3
"""compute-sanitizer runs of a lab program: what memcheck, racecheck, synccheck and initcheck find, traced to the
student's file and line, and the grade's "sanitizers" row made of it.

    python3 grader/sanitize.py --lab 04 [--submission labs|solutions|DIR] [--tools racecheck,memcheck]
    (make sanitize LAB=04 [SUBMISSION=...]; from a lab's folder, make sanitize)

The lab program is built as the grader builds it (mk/cuda.mk compiles with -lineinfo, so every finding has a file and
a line) and run once per tool on the small inputs of labs.toml's [suites.NAME.sanitizers]. The lab program is the
checker, which starts the runner (the student's code) in its sandbox: the tool goes around the runner, inside the
sandbox, through the checker's --runner-wrap (each argument of the tool's command line), so it sees the student's
kernels and nothing else.

Where the findings come from. compute-sanitizer writes its text to --log-file /proc/self/fd/N, where N is the write
end of a pipe the grader made and passed with --runner-fd N (the runner keeps N, the sandbox's filter refuses to
close it or dup2 onto it), and the grader reads that pipe as it fills, never the program's stdout or stderr, which
the student's code shares and can close or fill with lookalike lines. Each run gets a fresh --prefix (a random word
in place of `=========`): only lines with it are the tool's. What the student's code can still do: it is a child of
compute-sanitizer and inherits N, so it can append text to the log (never take back what the tool wrote); to pass
its text off as the tool's it must read the prefix from the tool's command line (/proc/PPID/cmdline) and time its
writes to fall between two of the tool's, and it can kill the tool (its parent). Neither hides a finding: a log
whose tool reported errors the grader cannot read ("unreadable"), or that ends before the tool's summary
("incomplete"), fails the row instead of excusing it.

compute-sanitizer writes text for people, each finding a block of lines after its prefix: a headline at the left
("Invalid __global__ write of size 4 bytes", "Race reported between Write access at ... and Read access at ...",
"Barrier error detected. ...", "Uninitialized __global__ memory read of size 4 bytes"), its details indented ("at
KERNEL+0x1f0 in FILE:LINE", "by thread (64,0,0) in block (2,0,0)", "Address ... is out of bounds"), a line of the
prefix alone between two findings. OutputParser reads that layout line by line as it arrives (bounded: a flood of
text costs nothing) rather than a fixed list of messages, and reads both the "at FUNCTION+0xOFFSET in FILE:LINE" of
current versions and the "at 0xOFFSET in FILE:LINE:FUNCTION" of older ones. (Its --save files are binary, for
compute-sanitizer --read only, and the layout of its --xml output is not documented; the text is.)

Whose finding it is (origin_of, classify): a line in the student's file (its name: the grader compiles a copy of it
in the build folder), or in any file that is not the kit's, is the student's; a line is the kit's only when its path
lies under the kit's harness/ folder (or is in CUB or Thrust, which the static checks keep out of the student's
object, line table included); a line in another CUDA header goes with the function it is in. A path the student's
source claims (#line, which the build refuses anyway) that is not the kit's own is therefore the student's. A
finding whose lines are all the kit's is a kit bug, reported as such and costing nothing.

Options of each run: --print-limit, --show-backtrace device (the host backtraces of the driver say nothing to a
student), --target-processes all (a process the runner starts is checked too), --prefix and --log-file (above);
racecheck: --racecheck-report analysis (one finding per pair of lines, not per thread) and --racecheck-detect-level
warn (warnings are the hazards between lanes of one warp: warp-synchronous code, such as a last warp that trusts
`volatile`, which since Volta's independent thread scheduling is a real race); memcheck: --padding, so a write just
past one allocation cannot land unseen in the next. The checker binds the tool's installation folder read-only in
the sandbox (--runner-ro).

Exit status of the command: 0 no findings in the student's file; 1 findings; 2 bad usage or the file does not build;
3 compute-sanitizer is not installed; 77 no CUDA device here (also when compute-sanitizer is missing and nvidia-smi
lists no GPU): it says what it would have done and which simulator commands come nearest (grader/no_gpu.py: the
simulator checks every run for the same hazards). Through make, 77 reads "Error 77" and make itself exits 2.
"""
import argparse
import concurrent.futures
import fcntl
import functools
import os
import re
import secrets
import shlex
import shutil
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

if __package__ in (None, ""):  # run as a script: make the kit's root importable instead of grader/
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from grader.config import SANITIZER_TOOLS, SANITIZERS, ConfigError, load_config  # noqa: E402
from grader.run import EXIT_CUDA, EXIT_NO_DEVICE, NO_DEVICE_MESSAGE, LineReader, run_process  # noqa: E402
from grader.score import TestResult  # noqa: E402

KIT = Path(__file__).resolve().parent.parent
NAME = SANITIZERS  # the row's name in the grade table
ENV_VAR = "COMPUTE_SANITIZER"  # a compute-sanitizer to use instead of the one found on PATH or in the toolkit
EXIT_FOUND = 86  # the exit status the fake tools of the tests use for "found something" (not passed to the tool)
PRINT_LIMIT = 200  # findings printed per run; a bug in one line is often reported once per thread
PADDING_BYTES = 1024  # memcheck --padding after every allocation
DEFAULT_TIMEOUT = 300.0
PREFIX = "========="  # compute-sanitizer's default prefix (recorded outputs); each run of the grader gets its own
LOG_FD_MIN = 10  # the log pipe's write end is moved to a descriptor at least this (the checker's --runner-fd: >= 5)
MAX_LINE = 64 << 10  # characters of one log line read; the rest of a longer line is dropped
MAX_FINDINGS = 1000  # distinct findings kept per run; more are counted in Parsed.dropped
LOG_KEEP = 256 << 10  # characters of the tool's log kept at each end in the run's sanitizer.log, for people
DRAIN_GRACE = 2.0  # seconds the log is still read after the program ended
EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_NO_TOOL = 0, 1, 2, 3
UNTRUSTED = ("unreadable", "incomplete")  # a run's statuses that fail the row (ToolRun)

TOOL_OPTIONS = {
    "memcheck": ["--padding", str(PADDING_BYTES)],
    "racecheck": ["--racecheck-report", "analysis", "--racecheck-detect-level", "warn"],
    "synccheck": [],
    "initcheck": [],
}

NOT_INSTALLED = (f"compute-sanitizer is not installed here (it comes with the CUDA toolkit; or set {ENV_VAR} to "
                 f"its path)")


# ---- finding compute-sanitizer ----

def find_sanitizer(env=None) -> str | None:
    """The compute-sanitizer to run: $COMPUTE_SANITIZER, then PATH, then next to nvcc and in the toolkit (CUDA_HOME,
    CUDA_PATH, /usr/local/cuda: bin/ or compute-sanitizer/); None when there is none."""
    env = os.environ if env is None else env
    if env.get(ENV_VAR):
        path = Path(env[ENV_VAR])
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which("compute-sanitizer", path=env.get("PATH"))
    if found:
        return found
    roots = [env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = shutil.which(env.get("NVCC", "nvcc"), path=env.get("PATH"))
    if nvcc:
        roots.insert(0, str(Path(nvcc).resolve().parent.parent))
    for root in filter(None, roots):
        for candidate in (Path(root) / "bin" / "compute-sanitizer",
                          Path(root) / "compute-sanitizer" / "compute-sanitizer"):
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def new_prefix() -> str:
    """A fresh --prefix for one run: a word the student's code does not know in advance."""
    return f"=ppl-{secrets.token_hex(8)}="


def install_folder(sanitizer: str) -> str:
    """compute-sanitizer's installation folder, which the sandbox binds read-only (--runner-ro): the folder two
    levels above the resolved binary (CUDA/bin/compute-sanitizer or CUDA/compute-sanitizer/compute-sanitizer give
    CUDA)."""
    return str(Path(sanitizer).resolve().parents[1])


def tool_command(sanitizer: str, tool: str, *, log_fd: int, prefix: str) -> list:
    """compute-sanitizer's own command line for one tool, without the program (the checker appends the runner)."""
    # the resolved path: /usr/local/cuda is a link through /etc/alternatives, which the sandbox does not show
    return [str(Path(sanitizer).resolve()), "--tool", tool, "--print-limit", str(PRINT_LIMIT), "--show-backtrace", "device",
            "--target-processes", "all", "--prefix", prefix, "--log-file", f"/proc/self/fd/{log_fd}",
            *TOOL_OPTIONS[tool]]


def tool_argv(sanitizer: str, tool: str, program, args, *, log_fd: int, prefix: str) -> list:
    """The command line of one tool's run of `program args`: the lab program (the checker) with the tool as its
    --runner-wrap, the log's descriptor as --runner-fd and the tool's folder as --runner-ro."""
    argv = [str(program), *map(str, args)]
    for arg in tool_command(sanitizer, tool, log_fd=log_fd, prefix=prefix):
        argv += ["--runner-wrap", arg]
    return argv + ["--runner-fd", str(log_fd), "--runner-ro", install_folder(sanitizer)]


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
    origin: "student" (a line of it is in the student's file), "kit" (every line of it is in the kit: harness/ or
    the CUDA and CUB headers), "unknown" (no source line). count: threads (memcheck, initcheck, synccheck) or
    hazards (racecheck) reported.
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


# ---- whose line is it ----

def classify(findings, source: str, kit=KIT, source_text: str = "") -> None:
    """Sets each finding's origin: "student" when one of its lines is the student's (owner_of), "kit" when its lines
    are all the kit's, "unknown" without any source line. A finding without a line whose function the student's file
    defines is the student's."""
    for f in findings:
        owners = {owner_of(loc.file, loc.function, source, kit, source_text) for loc in f.locations if loc.file}
        if "student" in owners:
            f.origin = "student"
        elif owners:
            f.origin = "kit"
        elif source_text and any(defines_function(source_text, loc.function) for loc in f.locations if loc.function):
            f.origin = "student"
        else:
            f.origin = "unknown"


KIT_PARTS = ("runner", "include", "common", "checker")  # the folders of the kit's harness/


def origin_of(path: str, source: str, kit=KIT) -> str:
    """"student", "harness", "library" (CUB or Thrust), "header" (another CUDA or C++ header) or "other" for the file
    a line table names.

    harness: an absolute path of a file under the kit's harness/ folder (or, for an output recorded where the kit lay
    elsewhere, an absolute path whose last parts are harness/FOLDER/FILE of a file this kit has); a relative path is
    never the kit's, whose builds name absolute paths. student: the student's file, by its name (the grader compiles
    a copy in the build folder; no file of the kit has a lab file's name)."""
    p = PurePosixPath(path)
    if p.is_absolute():
        harness = PurePosixPath(str(Path(kit).resolve() / "harness"))
        if p.is_relative_to(harness) and Path(p).is_file():
            return "harness"
        parts = p.parts
        if (len(parts) >= 4 and parts[-3] == "harness" and parts[-2] in KIT_PARTS
                and (Path(kit) / "harness" / parts[-2] / parts[-1]).is_file()):
            return "harness"
    if p.name == source:
        return "student"
    if p.is_absolute() and "include" in p.parts[:-1]:
        below = p.parts[len(p.parts) - p.parts[::-1].index("include"):-1]
        if below and (below[0] in ("cub", "thrust") or below[:2] in (("cccl", "cub"), ("cccl", "thrust"))):
            return "library"
        return "header"
    return "other"


def owner_of(path: str, function: str, source: str, kit=KIT, source_text: str = "") -> str:
    """"student" or "kit": whose line this is. The kit's: its harness, and CUB and Thrust (the static checks refuse a
    student's object whose line table names them); a CUDA header line goes with the function it is in (the kit's when
    the kit's harness defines it and the student's file does not); every other file, a path the student's source
    made up included, is the student's, and so is any line in a function the student's file defines (a kit path
    on the student's kernel: what a #line before it gives, resolved or not)."""
    origin = origin_of(path, source, kit)
    if origin in ("harness", "library", "header") and defines_function(source_text, function):
        return "student"  # the kit's path on a function the student's file defines: a line the source made up
    if origin in ("harness", "library"):
        return "kit"
    if origin == "header" and function and kit_defines_function(str(kit), function):
        return "kit"
    return "student"


def _function_name(function: str) -> str:
    """The plain name of compute-sanitizer's function text: "void cub::X::DeviceScanKernel<int>(int)" ->
    "DeviceScanKernel", "reduce_kernel(const float *, float *)" -> "reduce_kernel"."""
    text = function.strip().split("(")[0]
    while "<" in text:  # template arguments, innermost first
        cut = re.sub(r"<[^<>]*>", "", text)
        if cut == text:
            break
        text = cut
    words = text.split()
    return words[-1].split("::")[-1] if words else ""


def defines_function(source_text: str, function: str) -> bool:
    """Whether source_text defines (not only calls) the kernel or device function named by function."""
    name = _function_name(function or "")
    if not name or not source_text or not re.fullmatch(r"[A-Za-z_]\w*", name):
        return False
    return re.search(rf"__(?:global|device)__[^;{{}}]*\b{re.escape(name)}\s*\(", source_text) is not None


@functools.lru_cache(maxsize=256)
def kit_defines_function(kit: str, function: str) -> bool:
    """Whether a file of the kit's harness defines the function."""
    for folder in ("runner", "include", "common"):
        for path in sorted((Path(kit) / "harness" / folder).glob("*.c*")) + \
                sorted((Path(kit) / "harness" / folder).glob("*.h")):
            if defines_function(_read(path), function):
                return True
    return False


def shown_path(path: str | None, source: str, kit=KIT) -> str:
    """A path for people: the student's file by its name, the kit's relative to the kit, a header from its include
    folder on (cub/block/block_store.cuh)."""
    if not path:
        return "?"
    p = PurePosixPath(path)
    origin = origin_of(path, source, kit)
    if origin == "student":
        return source
    try:
        return str(p.relative_to(PurePosixPath(str(Path(kit).resolve()))))
    except ValueError:
        pass
    if origin == "harness" and "harness" in p.parts:
        return str(PurePosixPath(*p.parts[len(p.parts) - p.parts[::-1].index("harness") - 1:]))
    if "include" in p.parts:
        parts = p.parts
        return str(PurePosixPath(*parts[len(parts) - parts[::-1].index("include"):]))
    return str(p) if not p.is_absolute() else p.name


# ---- running the tools ----

@dataclass
class ToolRun:
    """One tool's run of the program on one argument list. status: clean, findings, timeout, error (the tool
    could not check: it never wrote to its log, or said why), no-device; and two that fail the row, since only the
    program could have caused them: unreadable (the tool's summary counts errors, but its log holds none the grader
    could read) and incomplete (the log ends before the tool's summary: the tool did not finish)."""

    tool: str
    args: list
    status: str
    parsed: Parsed = field(default_factory=Parsed)
    returncode: int | None = None
    seconds: float = 0.0
    message: str = ""
    log: str = ""  # the tool's log as the grader read it (its first and last LOG_KEEP characters)
    output: str = ""  # the program's own output file (stdout and stderr: never read for findings)

    @property
    def findings(self) -> list:
        return self.parsed.findings


@dataclass
class Outcome:
    """Every tool run of a lab's program; sanitizer is None when compute-sanitizer was not found."""

    sanitizer: str | None
    runs: list = field(default_factory=list)

    @property
    def no_device(self) -> bool:
        return any(r.status == "no-device" for r in self.runs)

    def findings(self, origin: str | None = None) -> list:
        return [f for r in self.runs for f in r.findings if origin is None or f.origin == origin]


def _tail(text: str, lines: int = 8) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return "\n".join(kept)


class LogReader(LineReader):
    """Reads the tool's log from a pipe as it comes (grader/run.py's LineReader), line by line into an OutputParser,
    keeping the first and last LOG_KEEP characters for people; of a line without end, what is kept is read and the
    rest read as lines of its own."""

    def __init__(self, fd: int, parser: OutputParser):
        super().__init__(fd, MAX_LINE)
        self.parser = parser
        self.head, self.tail, self.total = [], [], 0
        self.lock = threading.Lock()

    def on_line(self, line: bytes) -> None:
        self._line(line.decode("utf-8", "replace"))

    def _line(self, line: str) -> None:
        with self.lock:
            self.parser.feed(line)
            self.total += len(line) + 1
            if sum(map(len, self.head)) < LOG_KEEP:
                self.head.append(line[:MAX_LINE])
            else:
                self.tail.append(line[:MAX_LINE])
                while len(self.tail) > 1 and sum(map(len, self.tail)) > LOG_KEEP:
                    del self.tail[0]

    def text(self) -> str:
        with self.lock:
            kept = sum(map(len, self.head)) + sum(map(len, self.tail)) + len(self.head) + len(self.tail)
            gap = [f"[... {self.total - kept} characters of the log left out here ...]"] if self.total > kept else []
            return "\n".join([*self.head, *gap, *self.tail]) + "\n"


def _log_pipe() -> tuple:
    """(read end, write end at LOG_FD_MIN or above) of a new pipe, both close-on-exec (run_process passes the write
    end to the lab program alone); the read end does not block. The pipe's mode is write-only for everyone: the tool,
    as nobody in the sandbox, opens /proc/self/fd/N for writing (a pipe is made 0600, its owner's only), and nothing
    there may open it for reading, which would take the log away from the grader."""
    read_fd, write_fd = os.pipe()
    moved = fcntl.fcntl(write_fd, fcntl.F_DUPFD_CLOEXEC, LOG_FD_MIN)
    os.close(write_fd)
    os.fchmod(moved, 0o222)
    os.set_blocking(read_fd, False)
    return read_fd, moved


def run_tool(sanitizer: str, tool: str, program, args, *, timeout: float, workdir, cwd=None, source: str,
             kit=KIT, source_text: str = "") -> ToolRun:
    """Runs one tool around the runner of `program args --result FILE --quiet` (tool_argv) and reads its log from
    the pipe only: workdir gets the result file, the program's output (output.log, never read for findings) and what
    was kept of the tool's log (sanitizer.log)."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    result = workdir / "result.jsonl"
    result.unlink(missing_ok=True)
    full_args = [*args, "--result", str(result), "--quiet"]
    output, log = workdir / "output.log", workdir / "sanitizer.log"
    prefix = new_prefix()
    read_fd, write_fd = _log_pipe()
    reader = LogReader(read_fd, OutputParser(tool, prefix))
    reader.start()
    try:
        proc = run_process(tool_argv(sanitizer, tool, program, full_args, log_fd=write_fd, prefix=prefix),
                           timeout=timeout, cwd=cwd, log_path=output, pass_fds=(write_fd,))
    finally:
        os.close(write_fd)  # the tool and the program are gone: the reader sees the end, or stops after the grace
        reader.stop(DRAIN_GRACE)
        os.close(read_fd)
    log.write_text(reader.text(), encoding="utf-8")
    run = ToolRun(tool, list(args), "clean", returncode=proc.returncode, seconds=proc.seconds, log=str(log),
                  output=str(output))
    run.parsed = reader.parser.close()
    classify(run.parsed.findings, source, kit, source_text)
    parsed, rc = run.parsed, proc.returncode
    if parsed.findings:
        run.status = "findings"
    elif proc.timed_out:
        run.status, run.message = "timeout", f"did not finish within {timeout:g} s"
    elif rc == 127 and not parsed.banner:
        run.status, run.message = "error", proc.output.strip() or f"cannot run {program}"
    elif rc == EXIT_NO_DEVICE:
        run.status, run.message = "no-device", NO_DEVICE_MESSAGE
    elif parsed.tool_errors:
        run.status, run.message = "error", parsed.tool_errors[0]
    elif not parsed.banner:  # the tool never wrote to its log: it did not start (the program could not stop that)
        run.status = "error"
        run.message = "compute-sanitizer wrote nothing to its log (it did not start):\n" + _tail(proc.output)
    elif parsed.reported and not parsed.api_errors:
        run.status = "unreadable"
        run.message = (f"compute-sanitizer counted {parsed.reported} error{'s' if parsed.reported != 1 else ''} that "
                       f"the grader could not read in its log")
    elif parsed.reported is None:
        run.status = "incomplete"
        run.message = ("compute-sanitizer's log ends before its summary: the tool did not finish"
                       + (f" (the program ended with a CUDA error, status {rc}, and the tool was stopped with it)"
                          if rc == EXIT_CUDA else f" (it was stopped; the program exited with status {rc})" if rc
                          else " (it was stopped)"))
    elif rc is not None and rc < 0:
        run.message = f"found nothing, but the program was stopped by signal {-rc} under it"
    elif rc:  # nothing found, but the program's own checks failed under the tool (slowed down 10 to 100 times)
        run.message = f"found nothing, but the program exited with status {rc} under it"
    return run


def run_sanitizers(program, runs, *, tools, timeout: float, workdir, cwd=None, source: str, source_path=None,
                   kit=KIT, sanitizer=None, log=None, parallel: bool = True) -> Outcome:
    """Runs each tool on each argument list of runs and returns the Outcome. source is the student's file name;
    source_path its copy (its lines are quoted in the report). The tools of one argument list run side by side
    (parallel: each is a program of its own on the same GPU), their runs kept in the order of tools. A run that finds
    no device ends it; a tool that times out is not run on the next argument lists."""
    sanitizer = sanitizer or find_sanitizer()
    outcome = Outcome(sanitizer)
    if not sanitizer:
        return outcome
    source_text = _read(source_path)
    slow = set()
    for k, args in enumerate(runs):
        todo = [tool for tool in tools if tool not in slow]

        def one(tool, k=k, args=args):
            if log:
                log(f"compute-sanitizer --tool {tool} {shlex.join(str(a) for a in args)}")
            return run_tool(sanitizer, tool, program, args, timeout=timeout, workdir=Path(workdir) / f"{k}-{tool}",
                            cwd=cwd, source=source, kit=kit, source_text=source_text)

        if parallel and len(todo) > 1:
            with concurrent.futures.ThreadPoolExecutor(max_workers=len(todo)) as pool:
                done = list(pool.map(one, todo))
        else:
            done = [one(tool) for tool in todo]
        for tool, run in zip(todo, done):
            outcome.runs.append(run)
            if run.status == "timeout":
                slow.add(tool)
        if any(run.status == "no-device" for run in done):
            return outcome
    return outcome


def _read(path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace") if path else ""
    except OSError:
        return ""


# ---- words for students ----

def explain(finding: Finding) -> str:
    """One line: what the finding means and what to do about it."""
    kind = finding.kind.lower()
    if finding.tool == "racecheck" or "hazard" in kind or "race" in kind:
        accesses = {loc.access for loc in finding.locations}
        if finding.severity == "warning":
            return ("lanes of one warp read and write the same shared-memory word with nothing ordering them: since "
                    "Volta a warp's lanes are not in lockstep, volatile or not. Add __syncwarp() between the steps, "
                    "or exchange the values in registers with __shfl_down_sync")
        if accesses == {"write"}:
            return ("two threads write the same shared-memory word between two barriers, so which value stays "
                    "depends on the scheduling: let one thread write it, or put a __syncthreads() between the writes")
        return ("one thread reads a shared-memory word that another thread writes, with no __syncthreads() between "
                "the two, so the value read depends on which warp runs first: read into a register, __syncthreads(), "
                "then write (every thread of the block must reach the barrier)")
    if "uninitialized" in kind:
        return ("reads device memory that nothing wrote first (cudaMalloc does not clear memory, and d_work comes "
                "uncleared): write it, or cudaMemsetAsync it, before reading it, or read only what was written")
    if "misaligned" in kind:
        return ("an access at an address that is not a multiple of its size (an int4 or float4 access needs 16-byte "
                "alignment): check the pointer arithmetic before a vector load or store")
    if "invalid __shared__" in kind or "shared or local address" in kind:
        return ("reads or writes past the end of a __shared__ array: check the array's size and the index, or "
                "bound the index before the access")
    if "invalid __local__" in kind:
        return "indexes a local array (or the stack) past its end: check the index against the array's size"
    if "invalid __global__" in kind or "illegal address" in kind or "out-of-range" in kind:
        return ("reads or writes device memory outside every allocation: an index past the end of an array (or "
                "before its start): bound the index (if (i < n)) before the access")
    if "invalid argument" in kind or "mask" in kind:
        return ("a warp-synchronous call (__syncwarp, __shfl_*_sync, __ballot_sync) with a mask that names lanes "
                "that have exited or do not take part: use a mask of the lanes that do arrive")
    if "divergent thread" in kind and "warp" in kind:
        return ("a __syncwarp() or *_sync call (shuffle, vote) whose mask names lanes that do not all reach it: call "
                "it where every lane of the mask arrives, or narrow the mask to the lanes that do")
    if "divergent thread" in kind or "barrier" in kind:
        return ("a __syncthreads() that not every thread of the block reaches (inside an if, or in a loop some "
                "threads leave early): move it where every thread of the block arrives")
    if "leak" in kind:
        return "device memory allocated and never freed"
    return f"see compute-sanitizer's {finding.tool} documentation for \"{finding.kind}\""


def _quote(source_lines: list, line: int | None) -> str:
    if not line or line > len(source_lines):
        return ""
    text = " ".join(source_lines[line - 1].split())
    return f" `{text[:70]}{'...' if len(text) > 70 else ''}`" if text else ""


def describe(finding: Finding, source: str, kit=KIT, source_lines=None) -> str:
    """One line for the table: the tool, the file and line (the student's lines first), what happened, where."""
    source_lines = source_lines or []
    locs = sorted(finding.locations, key=lambda loc: origin_of(loc.file, source, kit) != "student"
                  if loc.file else True)
    places = []
    for loc in locs:
        if not loc.file:
            continue
        place = f"{shown_path(loc.file, source, kit)}:{loc.line}"
        if place not in places:
            places.append(place)
    where = " and ".join(places[:3]) if places else "no source line"
    if finding.tool == "racecheck" or "hazard" in finding.kind.lower():
        parts = []
        for loc in finding.locations:
            if loc.file:
                quote = _quote(source_lines, loc.line) if origin_of(loc.file, source, kit) == "student" else ""
                part = f"a {loc.access or 'access'} at {shown_path(loc.file, source, kit)}:{loc.line}{quote}"
                if part not in parts:
                    parts.append(part)
        level = "between lanes of one warp" if finding.severity == "warning" else "between threads"
        what = f"shared-memory race {level}: " + " and ".join(parts) + f" ({finding.count} hazard" \
               f"{'s' if finding.count != 1 else ''})"
    else:
        first = next((loc for loc in locs if loc.file), None)
        quote = (_quote(source_lines, first.line)
                 if first and origin_of(first.file, source, kit) == "student" else "")
        what = finding.kind + quote
        if finding.function:
            what += f" in {finding.function.split('(')[0]}"
        if finding.thread:
            what += f", thread ({finding.thread}) of block ({finding.block})"
        if finding.count > 1:
            what += f" ({finding.count} threads in all)"
    return f"{finding.tool}: {where}: {what}"


def finding_data(finding: Finding, source: str, kit=KIT) -> dict:
    """A finding for results.json."""
    return {"tool": finding.tool, "kind": finding.kind, "severity": finding.severity, "origin": finding.origin,
            "locations": [{"file": shown_path(loc.file, source, kit) if loc.file else None, "line": loc.line,
                           "function": loc.function, "access": loc.access} for loc in finding.locations],
            "thread": finding.thread, "block": finding.block, "count": finding.count}


# ---- the grade's row ----

@dataclass
class SanitizerResult(TestResult):
    """The sanitizers row. excused: not run, or not conclusive, for a reason that is not the student's doing
    (compute-sanitizer missing, a tool slower than its timeout, a tool that could not check): its points are given and
    it does not stop performance, so it counts as full."""

    excused: bool = False

    @property
    def full(self) -> bool:
        return self.excused or super().full


def reproduce_line(lab: str, submission_hint: str = "") -> str:
    return f"to see them yourself: make sanitize LAB={lab[:2]}{submission_hint}"


def score_sanitizers(lab: str, spec, outcome: Outcome, source: str, kit=KIT, source_path=None) -> TestResult:
    """The sanitizers row from an Outcome: FAIL (0 points) with every finding in the student's file, each on a line
    with its file:line and what to do; otherwise its points, with findings in the kit reported as kit bugs."""
    points = spec.points
    tools = ", ".join(spec.tools)
    if outcome.sanitizer is None:
        return SanitizerResult(lab, NAME, points, points, "not run", f"not run: {NOT_INSTALLED}; nothing is held "
                               f"against {source} for it", excused=True)
    if outcome.no_device:
        return TestResult(lab, NAME, points, 0.0, "not run", NO_DEVICE_MESSAGE)
    source_lines = _read(source_path).splitlines()
    student, kit_side, untraced = outcome.findings("student"), outcome.findings("kit"), outcome.findings("unknown")
    inconclusive = [r for r in outcome.runs if r.status in ("timeout", "crash", "error")]
    untrusted = [r for r in outcome.runs if r.status in UNTRUSTED]
    data = {"sanitizer_findings": [finding_data(f, source, kit) for f in student],
            "kit_findings": [finding_data(f, source, kit) for f in kit_side + untraced],
            "tools": [{"tool": r.tool, "status": r.status, "seconds": round(r.seconds, 1)} for r in outcome.runs]}
    notes = []
    if kit_side:
        notes.append(f"In the kit's own code (a kit bug, not {source}'s; nothing is held against you for it, tell "
                     f"the instructors):")
        notes.extend(f"- {describe(f, source, kit)}" for f in kit_side)
    if untraced:
        notes.append("Not traced to any source line (nothing is held against you for these):")
        notes.extend(f"- {describe(f, source, kit)}" for f in untraced)
    for r in outcome.runs:
        if r.status == "clean" and r.message:
            notes.append(f"note: {r.tool} {r.message} (the groups above judge the answers)")
    for r in inconclusive:
        notes.append(f"note: {r.tool} {r.message.splitlines()[0] if r.message else r.status} (sanitizers slow "
                     f"kernels down 10 to 100 times; not held against you)")
    api = sorted({e for r in outcome.runs for e in r.parsed.api_errors})
    if student:
        lines = [f"compute-sanitizer ({tools}) on {' '.join(spec.runs[0])} found in {source}:"]
        advised = set()
        for f in student:
            lines.append(f"- {describe(f, source, kit, source_lines)}")
            advice = explain(f)
            lines.append(f"    {advice if advice not in advised else '(the same advice as above)'}")
            advised.add(advice)
            lines.extend(f"    {d}" for d in f.details[:2])
        if api:
            lines.append("after that, the program saw: " + "; ".join(api[:3]))
        lines.append("A race or an out-of-bounds access may give right answers on one run or GPU and wrong ones on "
                     "the next: performance is not run while the sanitizers find something in " + source + ".")
        lines.extend(notes)
        lines.append(reproduce_line(lab))
        extra = len(student) - 1
        more = f" (and {extra} more finding{'s' if extra > 1 else ''} below)" if extra else ""
        return SanitizerResult(lab, NAME, points, 0.0, "FAIL", describe(student[0], source, kit, source_lines) + more,
                               "\n".join(lines), data)
    if untrusted:
        first = untrusted[0]
        lines = [f"compute-sanitizer ({tools}) on {' '.join(spec.runs[0])}: a report the grader cannot trust:"]
        lines += [f"- {r.tool} {shlex.join(r.args)}: {r.message}" for r in untrusted]
        lines.append("Only the program run under the tool could have cut its report short or left errors in it that "
                     "cannot be read (the kit's runs end with the tool's summary): the row is not passed without it. "
                     "If " + source + " does not write to descriptors it did not open or signal other processes, "
                     "tell the instructors.")
        lines.extend(notes)
        lines.append(reproduce_line(lab))
        return SanitizerResult(lab, NAME, points, 0.0, "FAIL", f"{first.tool}: {first.message}", "\n".join(lines),
                               data)
    clean = [r for r in outcome.runs if r.status in ("clean", "findings")]
    if not clean:
        why = inconclusive[0].message.splitlines()[0] if inconclusive else "nothing ran"
        return SanitizerResult(lab, NAME, points, points, "not run",
                               f"not run: {inconclusive[0].tool if inconclusive else 'compute-sanitizer'} {why}; "
                               f"nothing is held against {source} for it", "\n".join(notes), data, excused=True)
    ran = ", ".join(dict.fromkeys(r.tool for r in clean))
    summary = f"nothing found in {source} by {ran}"
    if kit_side:
        summary += f"; {len(kit_side)} finding{'s' if len(kit_side) > 1 else ''} in the kit's own code (a kit bug)"
    if inconclusive:
        summary += f"; {', '.join(dict.fromkeys(r.tool for r in inconclusive))} not conclusive (not held against you)"
    return SanitizerResult(lab, NAME, points, points, "pass", summary, "\n".join(notes), data,
                           excused=bool(inconclusive))


# ---- make sanitize ----

def print_outcome(outcome: Outcome, source: str, out, kit=KIT, source_path=None) -> int:
    """Prints each run's findings, student's first; returns the number of findings in the student's file."""
    source_lines = _read(source_path).splitlines()
    for r in outcome.runs:
        head = f"  {r.tool:<10} {shlex.join(r.args)}: "
        mine = [f for f in r.findings if f.origin == "student"]
        theirs = [f for f in r.findings if f.origin != "student"]
        if r.status in ("timeout", "crash", "error", "no-device", *UNTRUSTED):
            print(head + (r.message or r.status), file=out)
        elif not mine:
            print(head + f"nothing in {source}" + (f" ({r.message})" if r.message else ""), file=out)
        else:
            print(head + f"{len(mine)} finding{'s' if len(mine) > 1 else ''} in {source}", file=out)
        for f in mine:
            print(f"    {describe(f, source, kit, source_lines)}", file=out)
            print(f"      {explain(f)}", file=out)
            for d in f.details[:2]:
                print(f"      {d}", file=out)
        for f in theirs:
            print(f"    in the kit (a kit bug, not yours): {describe(f, source, kit)}", file=out)
        if r.parsed.api_errors and mine:
            print(f"      then: {'; '.join(r.parsed.api_errors[:2])}", file=out)
        if r.findings or r.status != "clean":
            print(f"      (the tool's log: {r.log}; the program's output: {r.output})", file=out)
    return len(outcome.findings("student")) + sum(r.status in UNTRUSTED for r in outcome.runs)


def with_sizes(run, sizes: str | None) -> list:
    """The argument list run with its --n list replaced by sizes (added when it has none); run itself without."""
    run = list(run)
    if not sizes:
        return run
    if "--n" in run:
        k = run.index("--n")
        return run[:k] + ["--n", sizes] + run[k + 2:]
    return run + ["--n", sizes]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lab", help="the lab: its number or name, matched by prefix (04, 04-unrolled)")
    p.add_argument("--submission", default="labs", help="a folder shaped like labs/ (default: labs)")
    p.add_argument("--tools", help=f"some of {','.join(SANITIZER_TOOLS)} (default: those of labs.toml)")
    p.add_argument("--n", help="sizes instead of labs.toml's (a --n list: 1,33,1025)")
    p.add_argument("--timeout", type=float, help="seconds per tool (default: labs.toml's)")
    p.add_argument("--seed", type=int, default=1, help="the data seed (default 1)")
    p.add_argument("--build-dir", help="where the labs are built (default: build/sanitize)")
    p.add_argument("--config", help="the labs file (default: grader/labs.toml)")
    return p.parse_args(argv)


def main(argv=None, *, kit=KIT, out=None, sanitizer=None, gpu_lister=None) -> int:
    """`make sanitize`: builds each chosen lab as the grader does, runs its sanitizers and prints the findings.
    sanitizer (the tool's path) and gpu_lister (grader.no_gpu.nvidia_smi) are hooks for tests."""
    from grader import build as build_mod  # here: the grader's build is not needed to read or score outputs
    from grader import no_gpu
    gpu_lister = gpu_lister or no_gpu.nvidia_smi
    out = out or sys.stdout
    args = parse_args(argv)
    try:
        config = load_config(args.config) if args.config else load_config()
        labs = config.select(args.lab) if args.lab else None
    except ConfigError as e:
        print(f"make sanitize: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not labs:
        print(f"make sanitize needs a lab: make sanitize LAB=04 (the labs: "
              f"{', '.join(lab.name for lab in config.labs)})", file=sys.stderr)
        return EXIT_USAGE
    tools = args.tools.split(",") if args.tools else None
    if tools and any(t not in SANITIZER_TOOLS for t in tools):
        print(f"make sanitize: --tools: the tools are {', '.join(SANITIZER_TOOLS)}", file=sys.stderr)
        return EXIT_USAGE
    submission = Path(args.submission)
    if not submission.is_dir():
        print(f"make sanitize: SUBMISSION={args.submission}: no such folder", file=sys.stderr)
        return EXIT_USAGE
    sanitizer = sanitizer or find_sanitizer()
    if not sanitizer:
        listed, said = gpu_lister()
        if not listed:  # no GPU either: what would run it is missing too, and the simulator is the way here
            print(f"{no_gpu.message('sanitize', labs[0].name, submission, reason=said)}\n"
                  f"{NOT_INSTALLED.replace(' here ', ' here either ', 1)}.", file=out)
            return EXIT_NO_DEVICE
        print(f"make sanitize: {NOT_INSTALLED}", file=sys.stderr)
        return EXIT_NO_TOOL
    build_root = Path(args.build_dir) if args.build_dir else Path(kit) / "build" / "sanitize"
    found = 0
    for pattern in dict.fromkeys(lab.pattern for lab in labs):
        harness = build_mod.build_harness(kit, pattern)
        if not harness.ok:
            print(harness.message, file=out)
            return EXIT_USAGE
    for lab in labs:
        spec = lab.sanitizers
        if spec is None:
            print(f"{lab.name}: labs.toml gives this lab no sanitizers", file=out)
            continue
        source = submission / lab.name / lab.source
        built = build_mod.build_lab(kit, lab.pattern, source, build_root / lab.name)
        if not built.ok:
            print(built.message, file=out)
            return EXIT_USAGE
        runs = [[*with_sizes(r, args.n), *lab.args, "--seed", str(args.seed)] for r in spec.runs]
        print(f"make sanitize: lab {lab.name}, {source} ({', '.join(tools or spec.tools)})", file=out, flush=True)
        outcome = run_sanitizers(built.program, runs, tools=tools or spec.tools,
                                 timeout=args.timeout or spec.timeout or DEFAULT_TIMEOUT,
                                 workdir=build_root / lab.name / "runs", cwd=kit, source=lab.source,
                                 source_path=built.program.parent / lab.source, kit=kit, sanitizer=sanitizer)
        if outcome.no_device:
            print(no_gpu.message("sanitize", lab.name, submission), file=out)
            return EXIT_NO_DEVICE
        mine = print_outcome(outcome, lab.source, out, kit, built.program.parent / lab.source)
        found += mine
        print(f"lab {lab.name}: {'no findings' if not mine else f'{mine} finding' + ('s' if mine > 1 else '')} in "
              f"{lab.source}", file=out)
    return EXIT_FINDINGS if found else EXIT_CLEAN


if __name__ == "__main__":
    sys.exit(main())
