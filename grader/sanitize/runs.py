"""Running compute-sanitizer's tools on a lab program: finding the tool, its command line (a fresh --prefix,
--log-file on a pipe the grader reads), one run per tool, and what each run gave (ToolRun, Outcome)."""
import concurrent.futures
import fcntl
import os
import secrets
import shlex
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

from grader.patterns import KIT
from grader.run.run import EXIT_CUDA, EXIT_NO_DEVICE, NO_DEVICE_MESSAGE, LineReader, result_file, run_process
from grader.sanitize.findings import classify, read_source
from grader.sanitize.parse import MAX_LINE, OutputParser, Parsed


ENV_VAR = "COMPUTE_SANITIZER"  # a compute-sanitizer to use instead of the one found on PATH or in the toolkit
EXIT_FOUND = 86  # the exit status the fake tools of the tests use for "found something" (not passed to the tool)
PRINT_LIMIT = 200  # findings printed per run; a bug in one line is often reported once per thread
PADDING_BYTES = 1024  # memcheck --padding after every allocation
DEFAULT_TIMEOUT = 300.0
LOG_FD_MIN = 10  # the log pipe's write end is moved to a descriptor at least this (the checker's --runner-fd: >= 5)
LOG_KEEP = 256 << 10  # characters of the tool's log kept at each end in the run's sanitizer.log, for people
DRAIN_GRACE = 2.0  # seconds the log is still read after the program ended
UNTRUSTED = ("unreadable", "incomplete")  # a run's statuses that fail the row (ToolRun)
# The tools of one argument list go side by side, the slowest first: on the lent H200, racecheck took 1.35-1.6 s alone
# on lab 03's program and the others 0.7 s, whatever their options, and the driver makes the CUDA contexts of
# processes that start together one at a time, in no set order; racecheck started last made the row take 2.1 s. So the
# other tools start STAGGER_SECONDS after it (a grading's correctness program beside them is not held back).
FIRST_TOOL = "racecheck"
STOPPED = "stopped by the grader: the lab's correctness runs hung"  # a run the grader's cancel stopped
STAGGER_SECONDS = 0.3

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
    return [str(Path(sanitizer).resolve()), "--tool", tool, "--print-limit", str(PRINT_LIMIT),
            "--show-backtrace", "device",
            "--target-processes", "all", "--prefix", prefix, "--log-file", f"/proc/self/fd/{log_fd}",
            *TOOL_OPTIONS[tool]]


def tool_argv(sanitizer: str, tool: str, program, args, *, log_fd: int, prefix: str) -> list:
    """The command line of one tool's run of `program args`: the lab program (the checker) with the tool as its
    --runner-wrap, the log's descriptor as --runner-fd and the tool's folder as --runner-ro."""
    argv = [str(program), *map(str, args)]
    for arg in tool_command(sanitizer, tool, log_fd=log_fd, prefix=prefix):
        argv += ["--runner-wrap", arg]
    return argv + ["--runner-fd", str(log_fd), "--runner-ro", install_folder(sanitizer)]


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
    """Reads the tool's log from a pipe as it comes (grader/run/run.py's LineReader), line by line into an OutputParser,
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
             kit=KIT, source_text: str = "", cancel=None) -> ToolRun:
    """Runs one tool around the runner of `program args --result FILE --quiet` (tool_argv) and reads its log from
    the pipe only: workdir gets the result file, the program's output (output.log, never read for findings) and what
    was kept of the tool's log (sanitizer.log)."""
    workdir, result = result_file(workdir)
    full_args = [*args, "--result", str(result), "--quiet"]
    output, log = workdir / "output.log", workdir / "sanitizer.log"
    prefix = new_prefix()
    read_fd, write_fd = _log_pipe()
    reader = LogReader(read_fd, OutputParser(tool, prefix))
    reader.start()
    try:
        proc = run_process(tool_argv(sanitizer, tool, program, full_args, log_fd=write_fd, prefix=prefix),
                           timeout=timeout, cwd=cwd, log_path=output, pass_fds=(write_fd,), cancel=cancel)
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
    elif proc.timed_out and cancel is not None and cancel.is_set():
        run.status, run.message = "cancelled", STOPPED
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
                   kit=KIT, sanitizer=None, log=None, parallel: bool = True, cancel=None) -> Outcome:
    """Runs each tool on each argument list of runs and returns the Outcome. source is the student's file name;
    source_path its copy (its lines are quoted in the report). The tools of one argument list run side by side
    (parallel: each is a program of its own on the same GPU), their runs kept in the order of tools. A run that finds
    no device ends it; a tool that times out is not run on the next argument lists. cancel (a threading.Event), once
    set, stops the runs under way and starts no more: the grader sets it when the lab's correctness runs hung, whose
    sanitizer row is then not graded, so a hung lab costs one --timeout rather than the tools' own (labs.toml)."""
    sanitizer = sanitizer or find_sanitizer()
    outcome = Outcome(sanitizer)
    if not sanitizer:
        return outcome
    source_text = read_source(source_path)
    slow = set()
    for k, args in enumerate(runs):
        if cancel is not None and cancel.is_set():
            return outcome
        todo = [tool for tool in tools if tool not in slow]

        late = parallel and len(todo) > 1 and FIRST_TOOL in todo

        def one(tool, k=k, args=args):
            if late and tool != FIRST_TOOL:
                (cancel or threading.Event()).wait(STAGGER_SECONDS)
                if cancel is not None and cancel.is_set():
                    return ToolRun(tool, list(args), "cancelled", message=STOPPED)
            if log:
                log(f"compute-sanitizer --tool {tool} {shlex.join(str(a) for a in args)}")
            return run_tool(sanitizer, tool, program, args, timeout=timeout, workdir=Path(workdir) / f"{k}-{tool}",
                            cwd=cwd, source=source, kit=kit, source_text=source_text, cancel=cancel)

        if parallel and len(todo) > 1:
            with concurrent.futures.ThreadPoolExecutor(max_workers=len(todo)) as pool:
                done = list(pool.map(one, todo))
        else:
            done = [one(tool) for tool in todo]
        for tool, run in zip(todo, done):
            outcome.runs.append(run)
            if run.status in ("timeout", "cancelled"):
                slow.add(tool)
        if any(run.status == "no-device" for run in done):
            return outcome
    return outcome
