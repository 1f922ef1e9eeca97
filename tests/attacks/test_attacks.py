"""The attack suite (tests/run.py's `attacks` suite): hostile lab submissions, each graded by grader/grade.py in a
throwaway copy of the kit, each with the verdict tests/attacks/attacks.toml expects and no effect outside its
sandbox.

Every attack is one lab file in tests/attacks/NN-class-name/, a real exploit attempt (code before main, capabilities
the labs do not need, writes to the kit, tricks on the build, reading the runner's or the checker's memory, hiding
findings, attacks on the grader itself), most on a correct or a blank solution so that the attack, not the kernel,
decides; plus honest files written otherwise than the solutions, which must keep their points. attacks.toml lists
the verdicts (refused-build, refused-static, zero, flagged, contained, honest, watched-fault); an attack whose verdict
differs by platform (one that behaves only when it thinks no simulator watches) gives its GPU verdict as gpu_expected.

How each attack is graded:
  - the kit is copied into a temporary folder, /tmp/ppl-attacks-XXXX/wN/kit, one copy per worker (its tracked and
    untracked, not ignored, files; or, with ATTACKS_KIT_REF=<git ref>, that commit's files), the copy made a git
    repository and committed, and a marker file (.attack-suite-copy) put at its root. The attacks write, signal and
    read other processes only in a kit that has the marker (or, seen from inside a sandbox that hides the kit, in a
    folder so named), so an attack that escapes can damage only the copy, and one graded by hand in a real kit does
    nothing; the few that act anywhere (17, 27, 32, 36) are bounded and harmless outside it;
  - each copy is warmed up by grading the blank labs of the patterns the attacks use (the harness objects and the
    simulator's library are built then, once), and its shared build (build/ less the attacks' own folders) hashed;
  - the attack's file goes into build/students/NAME/LAB/, a sibling student's folder build/students/sibling-NAME/
    gets the lab's reference solution (hashed), and the copy's grader/grade.py grades the attack: with --simulator
    when there is no GPU (`nvidia-smi -L` fails), --build-dir and --results inside build/attacks/NAME/, TMPDIR
    there too, from the copy's root, in a session of its own;
  - while it runs, a watcher looks at every process of the copy (its command line, working folder, executable or
    environment names the copy): one stopped (SIGSTOP, ptrace) is an escape and is resumed; more than PROCESS_CAP
    at once is an escape; more than MEMORY_CAP (GPU_MEMORY_CAP) of memory together, more than DISK_CAP in the
    attack's folder, or the attack's timeout passed, and the grading is killed: the kit must set such limits itself;
  - afterwards: the copy's `git status` must be clean apart from build/; the shared build and the sibling
    unchanged; results.json not rewritten 1 s after grade.py exited; no process of the copy left, nor a shell with
    parent 1 and an emptied environment started since the grading began (a shell with its environment is some other
    user's job on a shared machine); no `ATTACK-SEED <seed>` or `@@ BEGIN SOLUTION` in the outputs of the runs; no
    escape sequence, carriage return or other control character in what grade.py printed or in results.json, and
    one "Total" line in each (student bytes are data: a lab's text must not draw on the grader's terminal). The
    copy is then put back as committed (and its shared build, if the attack changed it).

The verdict is read from grade.py's table (the status column: FORBIDDEN, NO BUILD, ERROR, needs GPU) and
results.json (the seed, the kit error); watched-fault also from labs.toml, whose groups of sizes up to the simulator's
SIM_MAX_N are the ones the simulator checks (watched_groups). One line per attack is printed as it ends (name, class,
expected, got, PASS/FAIL and the escapes), then the whole table. An expected verdict says what the kit must do; an
attack that succeeds against the kit fails its test, however the kit stands today. On a GPU an entry's gpu_expected,
when it gives one, is the verdict (its also then does not apply); expected and also are the simulator's.

Environment: ATTACKS_ONLY=NAME[,NAME] grades some attacks (a prefix such as 16 picks 16-...); ATTACKS_JOBS (2)
gradings at once; ATTACKS_KIT_REF grades against a commit instead of the working tree (or, as dir:FOLDER, against
the kit in FOLDER); ATTACKS_KEEP=1 keeps the temporary folder. Needs nvcc (skipped, saying so, without it). About
four minutes on 2 cores without a GPU; on a GPU each attack is graded in full (the large sizes, the benchmark,
compute-sanitizer), a minute or more each: set ATTACKS_JOBS to the cores available.
"""
import concurrent.futures
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from dataclasses import dataclass, field
from pathlib import Path

from grader.config import load_config
from grader.patterns import PATTERNS
from grader.sim.simulator import SIM_MAX_N, largest_size
from tests.attacks.kit_copy import (HERE, KIT, MARKER, all_pids, attack_file, boot_ticks_now, copy_kit, copy_processes,
                                     file_hash, folder_bytes, git, have_gpu, kill_pids, load_table, proc_info,
                                     scrubbed, tree_hash)


VERDICTS = ("refused-build", "refused-static", "zero", "flagged", "contained", "honest", "watched-fault")
CLASSES = ("before-main", "capability", "kit-write", "build", "runner-memory", "findings", "grader", "honest")
SOURCES = {name: p.source for name, p in PATTERNS.items()}  # each pattern's student file (grader/patterns.py)
LAB_SOURCE = {"01": "reduce.cu", "02": "reduce.cu", "03": "reduce.cu", "04": "reduce.cu", "05": "reduce.cu",
              "06": "scan.cu", "07": "compact.cu", "08": "scan.cu"}
WARM_UP_LABS = {"reduce.cu": "03-sequential", "scan.cu": "06-scan", "compact.cu": "07-compact"}

SIM_TIMEOUT = 120.0  # seconds a whole grading may take on the simulator, unless attacks.toml gives more
GPU_FACTOR = 4.0  # on a GPU the groups are larger and the benchmark and compute-sanitizer run too
MEMORY_CAP = 4 << 30  # bytes of memory (resident) all processes of the copy may use together, on the simulator
GPU_MEMORY_CAP = 32 << 30  # on a GPU: the 2^29-element cases hold 2 GiB inputs in host memory, some of it twice
DISK_CAP = 256 << 20  # bytes in the attack's own folder (its build, its runs' output, TMPDIR)
PROCESS_CAP = 150  # processes of the copy alive at once
WATCH_PERIOD = 0.1
SETTLE = 1.0  # seconds to wait after grade.py exits before looking at results.json again
LEAK_SCAN_BYTES = 8 << 20  # of each output file, from its start and from its end
SOLUTION_MARK = b"@@ BEGIN " + b"SOLUTION"
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "busybox"}
# what no grader output may hold: ESC, CR, the other C0 controls but tab and line feed, DEL, and C1 (UTF-8 encoded)
CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


# ---- grading one attack ----

def expectation(spec: dict, gpu: bool) -> tuple:
    """(expected, also) of an attacks.toml entry on this platform: on a GPU its gpu_expected alone, when it gives one;
    otherwise (and on the simulator) expected and also."""
    if gpu and "gpu_expected" in spec:
        return spec["gpu_expected"], []
    return spec["expected"], list(spec.get("also", []))


def watched_groups(lab: str, config=None) -> set:
    """The correctness groups of lab that the simulator checks, on its own and in a GPU grading's check: those whose
    sizes are all at most SIM_MAX_N (grader/sim/simulator.py: larger ones are "needs GPU" there)."""
    config = config or load_config()
    found = config.named(lab)
    if found is None:
        return set()
    return {g.name for g in found.groups if largest_size([[*r, *found.args] for r in g.runs]) <= SIM_MAX_N}


def pad(path: Path, size: int) -> None:
    """Appends "// padding" comment lines to path until it holds size bytes (attacks.toml's pad_to_kib)."""
    line = b"// " + b"padding " * 15 + b"\n"
    with path.open("ab") as f:
        have = path.stat().st_size
        f.write(line * ((size - have) // len(line) + 1) if size > have else b"")


@dataclass
class Outcome:
    name: str
    klass: str
    expected: str
    also: list
    got: str = "?"
    flagged: bool = False
    escapes: list = field(default_factory=list)
    seconds: float = 0.0
    detail: str = ""
    watched_zero: bool = False  # every correctness group the simulator checks scored 0, and performance too

    @property
    def passed(self) -> bool:
        if self.escapes:
            return False
        return any(self.matches(v) for v in [self.expected, *self.also])

    def matches(self, verdict: str) -> bool:
        if self.got in ("timed out", "killed", "no results", "kit broken"):
            return False
        if verdict == "contained":
            return True
        if verdict == "flagged":
            return self.flagged and self.got not in ("refused-build", "refused-static")
        if verdict == "watched-fault":
            return self.watched_zero and self.got in ("zero", "watched-fault")
        return self.got == verdict

    def shown_got(self) -> str:
        return self.got + (" (sanitizers FAIL)" if self.flagged and self.got not in ("refused-static",) else "")

    def line(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        text = f"{self.name:<40} {self.klass:<14} {self.expected:<15} {self.shown_got():<32} {verdict}"
        if self.escapes:
            text += "  escaped: " + "; ".join(self.escapes)
        return text


ROW = re.compile(r"^  (?P<name>\S.*?)\s+(?P<score>[\d.]+) / (?P<max>[\d.]+)\s+(?P<status>NO BUILD|CUDA ERROR|needs GPU|"
                 r"not run|\S+)(?:\s|$)")


def table_rows(text: str, lab: str, *, lines: bool = False) -> list:
    """(name, score, max, status) of each row of lab's block in grade.py's table; with lines, each row's whole line
    as a fifth item."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith(lab):
            inside = True
            continue
        if inside:
            m = ROW.match(line)
            if m:
                row = (m["name"], float(m["score"]), float(m["max"]), m["status"])
                rows.append((*row, line.strip()) if lines else row)
            elif line.strip() and not line.startswith(" "):
                break
    return rows


def judge(out: Outcome, table: str, results: dict, lab: str, watched: set | None = None) -> None:
    """Sets out.got, out.flagged and out.watched_zero from grade.py's table and results.json; watched: the groups the
    simulator checks (watched_groups(lab) unless given)."""
    rows = table_rows(table, lab)
    if results.get("extra_data", {}).get("kit_error"):
        out.got, out.detail = "kit broken", results["extra_data"]["kit_error"][:300]
        return
    if not rows:
        out.got, out.detail = "no results", "grade.py printed no row for the lab"
        return
    statuses = {name: status for name, _, _, status in rows}
    out.flagged = statuses.get("sanitizers") == "FAIL"
    correctness = [r for r in rows if r[0] not in ("static checks", "sanitizers", "performance")]
    total = sum(score for _, score, _, _ in rows)
    watched = watched_groups(lab) if watched is None else watched
    seen = [score for name, score, _, _ in correctness if name in watched]
    out.watched_zero = bool(seen) and not any(seen) and not any(
        score for name, score, _, _ in rows if name == "performance")
    if any(status == "NO BUILD" for *_, status in rows):
        out.got = "refused-build"
    elif statuses.get("static checks") == "FORBIDDEN":
        out.got = "refused-static"
    elif any(status == "ERROR" for *_, status in rows):
        out.got = "kit-blamed"
    elif total == 0:
        out.got = "zero"
    elif all(score >= most for _, score, most, status in correctness if status != "needs GPU") and statuses.get(
            "sanitizers", "pass") in ("pass", "not run") and any(s != "needs GPU" for *_, s in correctness):
        out.got = "honest"
    else:
        got = sum(score for _, score, _, status in correctness)
        most = sum(m for _, _, m, status in correctness if status != "needs GPU")
        out.got = f"partial {got:g}/{most:g}"
        # the rows that lost points, as grade.py printed them: a verdict seen once (on a loaded GPU machine) says why
        out.detail = "\n".join(line[:400] for name, score, most, status, line in table_rows(table, lab, lines=True)
                                if score < most and status != "needs GPU")
        if out.watched_zero:  # on a GPU: the simulator's groups lost, the GPU's larger sizes kept theirs
            out.got = "watched-fault"


class Worker:
    """One kit copy and the attacks graded in it, one at a time."""

    def __init__(self, folder: Path, gpu: bool, ref: str | None, log):
        self.folder, self.gpu, self.ref, self.log = folder, gpu, ref, log
        self.kit = folder / "kit"
        self.root = str(self.kit)
        self.build = self.kit / "build"
        self.pristine = folder / "pristine-build"
        self.shared_skip = (self.build / "attacks", self.build / "students")

    def grade_argv(self, submission: Path, lab: str, out: Path) -> list:
        argv = [sys.executable, "-m", "grader", "--submission", str(submission), "--lab", lab,
                "--results", str(out / "results.json"), "--build-dir", str(out / "grade"), "--quiet"]
        return argv + ([] if self.gpu else ["--simulator"])

    def env(self, out: Path) -> dict:
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", TMPDIR=str(out / "tmp"))
        env.pop("PYTHONPATH", None)
        return env

    def set_up(self, sources) -> None:
        """Copies the kit, then grades the blank lab of each pattern used (builds the harness and the simulator's
        library once), and keeps a pristine copy of the shared build."""
        copy_kit(self.kit, self.ref)
        for source in sorted(set(sources)):
            lab = WARM_UP_LABS[source]
            out = self.build / "attacks" / f"warm-up-{lab}"
            (out / "tmp").mkdir(parents=True)
            done = subprocess.run(self.grade_argv(self.kit / "labs", lab, out), cwd=self.kit, env=self.env(out),
                                  capture_output=True, text=True, timeout=1800)
            try:
                broken = json.loads((out / "results.json").read_text())["extra_data"]["kit_error"]
            except (OSError, ValueError, KeyError):
                broken = f"grade.py wrote no results (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
            if broken:
                raise RuntimeError(f"warming up the kit copy, grade.py --lab {lab} on the blank labs: {broken}")
            shutil.rmtree(out)
        self.snapshot()
        self.mtimes = {}  # the kit's files as copied: put back with their times, so that make sees nothing new
        for rel in filter(None, git(self.kit, "ls-files", "-z").split("\0")):
            st = os.lstat(self.kit / rel)
            self.mtimes[rel] = (st.st_atime_ns, st.st_mtime_ns)

    def snapshot(self) -> None:
        if self.pristine.exists():
            shutil.rmtree(self.pristine)
        self.pristine.mkdir()
        for entry in self.build.iterdir() if self.build.exists() else []:
            if entry not in self.shared_skip:
                (shutil.copytree(entry, self.pristine / entry.name, symlinks=True) if entry.is_dir() and not
                 entry.is_symlink() else shutil.copy2(entry, self.pristine / entry.name, follow_symlinks=False))
        self.shared = tree_hash(self.build, self.shared_skip)

    def restore_shared(self) -> None:
        for entry in list(self.build.iterdir()):
            if entry not in self.shared_skip:
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        for entry in self.pristine.iterdir():
            (shutil.copytree(entry, self.build / entry.name, symlinks=True) if entry.is_dir() and not
             entry.is_symlink() else shutil.copy2(entry, self.build / entry.name, follow_symlinks=False))

    def run(self, name: str, spec: dict) -> Outcome:
        out = Outcome(name, spec["class"], *expectation(spec, self.gpu))
        lab = spec["lab"]
        source = attack_file(name)
        students = self.build / "students"
        submission = students / name
        (submission / lab).mkdir(parents=True)
        shutil.copy2(source, submission / lab / source.name)
        if spec.get("pad_to_kib"):
            pad(submission / lab / source.name, spec["pad_to_kib"] << 10)
        sibling = students / f"sibling-{name}" / lab / source.name
        sibling.parent.mkdir(parents=True)
        solution = self.kit / "solutions" / lab / source.name
        shutil.copy2(solution if solution.is_file() else source, sibling)
        sibling_hash = file_hash(sibling)
        work = self.build / "attacks" / name
        (work / "tmp").mkdir(parents=True)
        results = work / "results.json"
        timeout = float(spec.get("timeout", SIM_TIMEOUT)) * (GPU_FACTOR if self.gpu else 1.0)

        before = all_pids()
        started_ticks = boot_ticks_now()
        start = time.monotonic()
        with open(work / "grade.log", "wb") as log:
            proc = subprocess.Popen(self.grade_argv(submission, lab, work), cwd=self.kit, env=self.env(work),
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        watched = self.watch(proc, out, work, timeout, start, before)
        out.seconds = time.monotonic() - start
        at_exit = file_hash(results)
        time.sleep(SETTLE)
        if file_hash(results) != at_exit:
            out.escapes.append("results.json rewritten after grade.py exited")

        # processes left behind
        left = [p for p in copy_processes(self.root, before) if p.pid != proc.pid and p.state not in ("Z", "X")]
        shells = [p for pid in all_pids() - before if (p := proc_info(pid)) and p.ppid == 1 and p.comm in SHELLS
                  and p.start >= started_ticks and p.state != "Z" and p not in left and scrubbed(pid)]
        if left:
            out.escapes.append(f"{len(left)} process(es) of the copy left behind (" +
                               ", ".join(f"{p.pid} {p.cmdline[:60]!r}" for p in left[:3]) + ")")
            kill_pids(p.pid for p in left)
        if shells:
            out.escapes.append("shell(s) with parent 1 started during the grading: " +
                               ", ".join(f"{p.pid} {p.cmdline[:60]!r}" for p in shells[:3]))
        out.escapes.extend(watched)

        # the kit, the shared build, the sibling
        dirty = [ln for ln in git(self.kit, "status", "--porcelain", "--ignored").splitlines()
                 if ln[3:].rstrip("/") != "build" and "__pycache__" not in ln]
        if dirty:
            out.escapes.append("kit tree changed: " + ", ".join(ln[3:] for ln in dirty[:4]) +
                               (f" and {len(dirty) - 4} more" if len(dirty) > 4 else ""))
        if tree_hash(self.build, self.shared_skip) != self.shared:
            out.escapes.append("the shared build (harness objects, simulator library) changed")
            self.restore_shared()
        if file_hash(sibling) != sibling_hash:
            out.escapes.append("the sibling student's file changed")

        # the verdict
        try:
            report = json.loads(results.read_text())
        except (OSError, ValueError):
            report = {}
        table = (work / "grade.log").read_text(errors="replace")
        if out.got == "?":
            judge(out, table, report, lab)
            if not report and out.got not in ("refused-build", "refused-static"):
                out.got = "no results"
        seed = str(report.get("extra_data", {}).get("seed", ""))
        out.escapes.extend(self.leaks(work / "grade", seed))
        out.escapes.extend(self.text_injected(work / "grade.log", results))

        # put the copy back, each file with the time it had, so that make rebuilds nothing for the next attack
        git(self.kit, "checkout", "-q", "--", ".")
        git(self.kit, "clean", "-fdxq", "-e", "/build/")
        for ln in dirty:
            times = self.mtimes.get(ln[3:])
            if times and (self.kit / ln[3:]).exists():
                os.utime(self.kit / ln[3:], ns=times, follow_symlinks=False)
        for big in (p for p in work.rglob("*") if p.is_file() and p.stat().st_size > (16 << 20)):
            big.unlink()
        return out

    def watch(self, proc, out: Outcome, work: Path, timeout: float, start: float, before: set) -> list:
        """Watches the grading until grade.py exits: resumes stopped processes of the copy, counts them, and kills
        everything past the timeout or a cap. Returns the escapes seen."""
        escapes, stopped, most, last_disk = [], {}, 0, 0.0
        while proc.poll() is None:
            time.sleep(WATCH_PERIOD)
            mine = copy_processes(self.root, before - {proc.pid})
            most = max(most, len(mine))
            for p in mine:
                if p.state in ("T", "t"):
                    stopped.setdefault(p.pid, p.cmdline[:70])
                    if p.state == "T":
                        try:
                            os.kill(p.pid, signal.SIGCONT)
                        except (ProcessLookupError, PermissionError):
                            pass
            why = None
            if time.monotonic() - start > timeout:
                why = f"timed out: grading took more than {timeout:g} s"
                out.got = "timed out"
            elif sum(p.rss for p in mine) > (cap := GPU_MEMORY_CAP if self.gpu else MEMORY_CAP):
                why = f"memory: the processes of the copy used more than {cap >> 30} GiB together"
            elif time.monotonic() - last_disk > 1.0:
                last_disk = time.monotonic()
                if folder_bytes(work) > DISK_CAP:
                    why = f"disk: more than {DISK_CAP >> 20} MiB written in the attack's folder"
            if why:
                escapes.append(why + " (killed)")
                if out.got == "?":
                    out.got = "killed"
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                kill_pids(p.pid for p in copy_processes(self.root, before - {proc.pid}))
                proc.wait()
                for _ in range(50):  # a process killed with gigabytes mapped takes a moment to go
                    if not [p for p in copy_processes(self.root, before) if p.state not in ("Z", "X")]:
                        break
                    time.sleep(0.1)
                break
        if stopped:
            escapes.append("stopped process(es) of the copy: " +
                           ", ".join(f"{pid} {cmd!r}" for pid, cmd in list(stopped.items())[:3]))
        if most > PROCESS_CAP:
            escapes.append(f"{most} processes of the copy at once (more than {PROCESS_CAP})")
        return escapes

    @staticmethod
    def text_injected(log: Path, results: Path) -> list:
        """Control characters (escape sequences, carriage returns) in grade.py's printed output or in results.json,
        or more than one line that starts "Total " in either: the lab's text drawing on the grader's."""
        found = []
        for path, what in ((log, "grade.py's output"), (results, "results.json")):
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if path == results:  # JSON writes a control character as \u001b: look at the strings themselves
                try:
                    data = json.dumps(json.loads(data), ensure_ascii=False).encode("utf-8", "surrogateescape")
                    output = json.loads(data).get("output", "")
                except (ValueError, AttributeError):
                    output = ""
                totals = sum(1 for ln in str(output).splitlines() if ln.startswith("Total "))
            else:
                totals = sum(1 for ln in data.splitlines() if ln.startswith(b"Total "))
            bad = CONTROL_BYTES.search(data)
            if bad:
                found.append(f"a control character ({bad.group()!r}) in {what}")
            if totals > 1:
                found.append(f"{totals} lines starting 'Total ' in {what}")
        return found

    @staticmethod
    def leaks(folder: Path, seed: str) -> list:
        """A seed printed as ATTACK-SEED, or a reference solution's text, in the outputs of the lab's runs."""
        found = set()
        for path in folder.rglob("*"):
            if not path.is_file() or path.suffix not in (".log", ".json", ".jsonl", ".txt"):
                continue
            size = path.stat().st_size
            with open(path, "rb") as f:
                data = f.read(LEAK_SCAN_BYTES)
                if size > 2 * LEAK_SCAN_BYTES:
                    f.seek(size - LEAK_SCAN_BYTES)
                    data += f.read(LEAK_SCAN_BYTES)
            if seed and f"ATTACK-SEED {seed}".encode() in data:
                found.add("the grader's seed leaked into the lab's output")
            if SOLUTION_MARK in data:
                found.add("a reference solution leaked into the lab's output")
        return sorted(found)


# ---- the suite ----

def selected(table: dict) -> list:
    only = [s for s in os.environ.get("ATTACKS_ONLY", "").split(",") if s]
    names = sorted(table)
    return [n for n in names if not only or any(n == s or n.startswith(s) for s in only)]


def run_suite(names: list, table: dict, log=print) -> dict:
    """Grades every attack of names; returns {name: Outcome}."""
    gpu = have_gpu()
    ref = os.environ.get("ATTACKS_KIT_REF") or None
    jobs = max(1, int(os.environ.get("ATTACKS_JOBS", "2")))
    temp = Path(tempfile.mkdtemp(prefix="ppl-attacks-"))
    temp.chmod(0o755)  # mkdtemp's 0700 would keep out a sandbox that runs the lab's code as another user
    sources = [LAB_SOURCE[table[n]["lab"][:2]] for n in names]
    source = (ref[4:] if ref.startswith("dir:") else "commit " + ref) if ref else "the working tree"
    log(f"attack suite: {len(names)} attacks, {jobs} at once, on {'a GPU' if gpu else 'the simulator'}, in "
        f"copies of {source} under {temp}")
    log(f"{'attack':<40} {'class':<14} {'expected':<15} {'got':<32} verdict")
    workers = [Worker(temp / f"w{k}", gpu, ref, log) for k in range(min(jobs, len(names)))]
    outcomes = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(len(workers)) as pool:
            list(pool.map(lambda w: w.set_up(sources), workers))
        free = queue.Queue()
        for w in workers:
            free.put(w)
        lock = threading.Lock()
        # the longest first, so that a hang does not come last
        order = sorted(names, key=lambda n: (-float(table[n].get("timeout", SIM_TIMEOUT)), n))

        def one(name):
            worker = free.get()
            try:
                result = worker.run(name, table[name])
            except Exception as e:  # a broken attack or copy: its test fails, the suite goes on
                result = Outcome(name, table[name]["class"], expectation(table[name], gpu)[0], [],
                                 got="suite error",
                                 escapes=[f"{type(e).__name__}: {e}"])
            finally:
                free.put(worker)
            with lock:
                outcomes[name] = result
                log(result.line())
            return result

        with concurrent.futures.ThreadPoolExecutor(len(workers)) as pool:
            list(pool.map(one, order))
    finally:
        if os.environ.get("ATTACKS_KEEP"):
            log(f"kept {temp}")
        else:
            shutil.rmtree(temp, ignore_errors=True)
    log("")
    log(f"{'attack':<40} {'class':<14} {'expected':<15} {'got':<32} verdict")
    for name in names:
        log(outcomes[name].line())
    passed = sum(o.passed for o in outcomes.values())
    log(f"attacks: {passed} of {len(outcomes)} as expected")
    return outcomes


class Table(unittest.TestCase):
    """attacks.toml and the folders agree, and every entry is well formed (no nvcc needed)."""

    def test_every_folder_has_an_entry_and_every_entry_a_folder(self):
        table = load_table()
        folders = {p.name for p in HERE.iterdir() if p.is_dir() and re.match(r"\d\d-", p.name)}
        self.assertEqual(folders - set(table), set(), "folders without an entry in attacks.toml")
        self.assertEqual(set(table) - folders, set(), "entries of attacks.toml without a folder")

    def test_entries(self):
        table = load_table()
        self.assertGreaterEqual(sum(1 for s in table.values() if s["class"] != "honest"), 28)
        self.assertGreaterEqual(sum(1 for s in table.values() if s["class"] == "honest"), 4)
        self.assertEqual({s["class"] for s in table.values()}, set(CLASSES))
        for name, spec in table.items():
            with self.subTest(name):
                self.assertLessEqual(spec.keys(), {"lab", "class", "tries", "expected", "gpu_expected", "also",
                                                   "timeout", "pad_to_kib", "why"})
                self.assertIn(spec["class"], CLASSES)
                self.assertIn(spec["expected"], VERDICTS)
                self.assertIn(spec.get("gpu_expected", spec["expected"]), VERDICTS)
                for v in spec.get("also", []):
                    self.assertIn(v, VERDICTS)
                self.assertTrue(spec["tries"] and spec["why"])
                self.assertTrue((KIT / "solutions" / spec["lab"]).is_dir() or (KIT / "labs" / spec["lab"]).is_dir(),
                                f"no lab {spec['lab']}")
                source = attack_file(name)
                self.assertIsNotNone(source, f"{name}/ holds no .cu file")
                self.assertEqual(source.name, LAB_SOURCE[spec["lab"][:2]])
                self.assertEqual(len(list((HERE / name).iterdir())), 1, f"{name}/ holds more than its lab file")
                # an attack may keep its points on the simulator alone (where nothing is unwatched) but not on a GPU
                self.assertEqual(spec["class"] == "honest", spec.get("gpu_expected", spec["expected"]) == "honest")
                if spec["class"] == "honest":
                    self.assertEqual(spec["expected"], "honest")

    def test_attacks_act_only_in_a_copy_of_the_suite(self):
        """Each attack that writes, signals or reads another process first finds the kit root through kit_root(),
        which needs the suite's marker (or its folder names); none names a path of the real kit."""
        for name in load_table():
            text = attack_file(name).read_text()
            with self.subTest(name):
                self.assertNotIn("/work/", text)
                if "kit_root(" in text:
                    self.assertIn(MARKER, text)

    def test_judge(self):
        table = ("03-sequential              40 / 100\n"
                 "  static checks             0 / 0    pass       nothing forbidden\n"
                 "  datasets                 10 / 10   pass       25 cases passed\n"
                 "  edge sizes               15 / 15   pass       16 cases passed\n"
                 "  large sizes               0 / 10   needs GPU  too large\n"
                 "  sanitizers                0 / 0    FAIL       the simulator found: [race]\n"
                 "  performance               0 / 50   needs GPU  speed\n\nTotal 40 / 100\n")
        out = Outcome("x", "findings", "flagged", [])
        judge(out, table, {"extra_data": {}}, "03-sequential")
        self.assertEqual((out.got, out.flagged), ("partial 25/25", True))
        self.assertTrue(out.passed)
        out = Outcome("x", "build", "refused-build", [])
        judge(out, table.replace("0 / 10   pass       25", "0 / 10   NO BUILD   25"), {"extra_data": {}},
              "03-sequential")
        self.assertEqual(out.got, "refused-build")
        out = Outcome("x", "honest", "honest", [])
        judge(out, table.replace("FAIL ", "pass "), {"extra_data": {}}, "03-sequential")
        self.assertEqual(out.got, "honest")
        out.escapes.append("kit tree changed")
        self.assertFalse(out.passed)
        out = Outcome("x", "honest", "honest", [])
        judge(out, table.replace("FAIL ", "pass ").replace("10 / 10   pass       25 cases passed",
                                                         "0 / 10   TIMEOUT    took too long"), {"extra_data": {}},
              "03-sequential")
        self.assertEqual(out.got, "partial 15/25")
        self.assertEqual(out.detail, "datasets                 0 / 10   TIMEOUT    took too long")

    def test_judge_watched_fault(self):
        """watched-fault: the groups the simulator checks score 0 (on the simulator alone that is every group it runs,
        a zero; on a GPU the larger sizes keep the GPU's points), and performance too."""
        watched = {"datasets", "edge sizes"}
        sim = ("08-single-pass              0 / 100 (bonus)\n"
               "  static checks             0 / 0    pass       nothing forbidden\n"
               "  datasets                  0 / 10   CUDA ERROR under the schedule reverse:1\n"
               "  edge sizes                0 / 25   CUDA ERROR under the schedule reverse:2\n"
               "  large sizes               0 / 15   needs GPU  too large\n"
               "  sanitizers                0 / 0    pass       no hazards\n"
               "  performance               0 / 50   needs GPU  speed\n\nTotal 0 / 0\n")
        out = Outcome("x", "findings", "watched-fault", [])
        judge(out, sim, {"extra_data": {}}, "08-single-pass", watched)
        self.assertEqual((out.got, out.watched_zero), ("zero", True))
        self.assertTrue(out.passed)
        gpu = (sim.replace("0 / 15   needs GPU  too large", "15 / 15  pass       every case passed")
               .replace("0 / 50   needs GPU  speed", "0 / 50   not run    every correctness test must pass first"))
        out = Outcome("x", "findings", "watched-fault", [])
        judge(out, gpu, {"extra_data": {}}, "08-single-pass", watched)
        self.assertEqual(out.got, "watched-fault")
        self.assertTrue(out.passed)
        # the dodge worked: the simulator's check could not tell, the GPU's passes stand
        dodged = (gpu.replace("0 / 10   CUDA ERROR", "10 / 10  pass      ")
                  .replace("0 / 25   CUDA ERROR", "25 / 25  pass      ")
                  .replace("0 / 50   not run    every correctness test must pass first", "50 / 50  pass       1.1x"))
        out = Outcome("x", "findings", "watched-fault", [])
        judge(out, dodged, {"extra_data": {}}, "08-single-pass", watched)
        self.assertEqual((out.got, out.watched_zero), ("honest", False))
        self.assertFalse(out.passed)
        out = Outcome("x", "findings", "watched-fault", [])
        judge(out, gpu.replace("0 / 10   CUDA ERROR", "10 / 10  pass      "), {"extra_data": {}}, "08-single-pass",
              watched)
        self.assertFalse(out.watched_zero)
        self.assertFalse(out.passed)

    def test_expectation_by_platform(self):
        spec = {"expected": "honest", "gpu_expected": "watched-fault", "also": ["watched-fault"]}
        self.assertEqual(expectation(spec, gpu=False), ("honest", ["watched-fault"]))
        self.assertEqual(expectation(spec, gpu=True), ("watched-fault", []))
        self.assertEqual(expectation({"expected": "zero", "also": ["contained"]}, gpu=True), ("zero", ["contained"]))
        self.assertEqual(watched_groups("08-single-pass"), {"datasets", "edge sizes"})


HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None


class Attacks(unittest.TestCase):
    """Each attack of attacks.toml graded in a copy of the kit (one test each; the grading happens once, in
    setUpClass)."""

    outcomes: dict = {}

    @classmethod
    def setUpClass(cls):
        if not HAVE_NVCC:
            raise unittest.SkipTest("nvcc not found: the attacks need the CUDA toolkit to build")
        table = load_table()
        cls.outcomes = run_suite(selected(table), table, log=lambda s: print(s, flush=True))

    def check(self, name):
        if name not in self.outcomes:
            self.skipTest("not selected (ATTACKS_ONLY)")
        outcome = self.outcomes[name]
        self.assertTrue(outcome.passed, f"{outcome.line()}{chr(10) + outcome.detail if outcome.detail else ''}")


def _add_tests():
    for name in load_table():
        def test(self, name=name):
            self.check(name)
        test.__doc__ = f"attack {name}"
        setattr(Attacks, "test_" + name.replace("-", "_"), test)


_add_tests()

if __name__ == "__main__":
    unittest.main()
