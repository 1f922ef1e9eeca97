"""grader/sanitize/ without a GPU, end to end: a fake compute-sanitizer run through the grader (options, timeouts, a
missing tool), in the checker's sandbox, make sanitize, and the sanitizers tables of labs.toml. The parser and the
score have their own tests (test_sanitize_parse.py, test_sanitize_score.py)."""
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from grader.config import ConfigError, Sanitizers, load_config
from grader.grade import Grader
from grader.patterns import parse_sizes
from grader.report.report import format_table, gradescope_results
from grader.sanitize import cli, runs
from grader.sanitize.cli import with_sizes
from grader.sanitize.runs import find_sanitizer, run_sanitizers
from grader.sanitize.score import score_sanitizers
from tests.grader.fakes import KIT, PASS, SMALL_TOML, fake_program, make_submission, write_file
from tools.instructor.variants.wrong import mutated_text
from tests.grader.sanitize_support import STUDENT, SPEC, VOLATILE_SOURCE, outcome_of, sample


FAKE_SANITIZER = f"""#!{sys.executable} -S
import os, subprocess, sys, time
args = sys.argv[1:]
if "FAKE_SANITIZER_LOG" in os.environ:
    with open(os.environ["FAKE_SANITIZER_LOG"], "a") as f:
        f.write(" ".join(args) + "\\n")
def opt(name):
    return args[args.index(name) + 1]
tool, prefix, path = opt("--tool"), opt("--prefix"), opt("--log-file")
k = 0
while k < len(args) and args[k].startswith("--"):  # every option takes a value; the program comes after them
    k += 2
program = args[k:]
if tool in os.environ.get("FAKE_SANITIZER_SLOW", "").split(","):
    time.sleep(30)
# the samples' folder: named by the test, or (in the sandbox, whose environment is an allow-list) beside bin/
samples = os.environ.get("FAKE_SANITIZER_SAMPLES") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                    os.pardir, "samples")
lines = open(os.path.join(samples, tool + ".txt")).read().splitlines()
log = open(path, "w")  # as compute-sanitizer opens --log-file: here /proc/self/fd/N, the grader's pipe
body = [ln.replace("=========", prefix) for ln in lines if "SUMMARY" not in ln]
log.write("\\n".join(body) + "\\n")
log.flush()
print("the program says hello\\n========= ERROR SUMMARY: 0 errors", flush=True)  # on stdout: not the log
fd = int(path.rsplit("/", 1)[1])
def is_open(n):
    try:
        return os.fstat(n) is not None
    except OSError:
        return False
kept = tuple(n for n in range(3, 256) if is_open(n))  # as the real tool: the program's pipes, socket and log
rc = subprocess.run(program, pass_fds=kept).returncode
if os.environ.get("FAKE_SANITIZER_STOPPED") != tool:
    log.write("\\n".join(ln.replace("=========", prefix) for ln in lines if "SUMMARY" in ln) + "\\n")
sys.exit(rc)
"""

# A fake lab program in the checker's role: it runs --runner-wrap's command around a fake runner (FAKE_RUNNER: Python
# code, run with the log's descriptor as LOG) with --runner-fd kept; PASS then passes every case.
WRAPPING_CHECKER = """
wrap = [ARGS[k + 1] for k, a in enumerate(ARGS) if a == "--runner-wrap"]
log_fd = int(opt("--runner-fd")) if "--runner-fd" in ARGS else None
with open(os.environ["FAKE_CHECKER_LOG"], "a") as f:
    f.write(json.dumps(ARGS) + "\\n")
if wrap:
    import subprocess
    runner = [sys.executable, "-S", "-c", "import os; LOG = int(os.environ['LOG']); " +
              os.environ.get("FAKE_RUNNER", "pass")]
    subprocess.run([*wrap, *runner], pass_fds=(log_fd,), env={**os.environ, "LOG": str(log_fd)})
"""


class FakeSanitizer(unittest.TestCase):
    """A fake compute-sanitizer (a script that writes a sample for each tool to its --log-file) run by run_sanitizers
    and the grader around the runner of a fake lab program that plays the checker (--runner-wrap, --runner-fd)."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.samples = self.dir / "samples"
        self.samples.mkdir()
        (self.dir / "cuda" / "bin").mkdir(parents=True)
        self.tool = self.dir / "cuda" / "bin" / "compute-sanitizer"
        self.tool.write_text(FAKE_SANITIZER)
        self.tool.chmod(self.tool.stat().st_mode | stat.S_IXUSR)
        self.log = self.dir / "argv.log"
        self.checker_log = self.dir / "checker.log"
        self.env = {"FAKE_SANITIZER_LOG": str(self.log), "FAKE_SANITIZER_SAMPLES": str(self.samples),
                    "FAKE_SANITIZER_SLOW": "", "FAKE_CHECKER_LOG": str(self.checker_log), "FAKE_RUNNER": "pass",
                    "FAKE_SANITIZER_STOPPED": ""}

    def give(self, tool: str, name: str, student: str):
        (self.samples / f"{tool}.txt").write_text(sample(name, student))

    def program(self):
        return fake_program(self.dir, WRAPPING_CHECKER, PASS)

    def run_one(self, tools=("memcheck", "racecheck"), **env):
        with mock.patch.dict(os.environ, {**self.env, **env}):
            return run_sanitizers(self.program(), [["--n", "1,33", "--seed", "5"]], tools=tools, timeout=20,
                                  workdir=self.dir / "runs", source="reduce.cu", kit=KIT, sanitizer=str(self.tool))

    def test_the_tool_wraps_the_runner_and_writes_to_the_pipe(self):
        self.give("memcheck", "clean.txt", STUDENT)
        self.give("racecheck", "racecheck-volatile-last-warp.txt", STUDENT)
        outcome = self.run_one()
        self.assertEqual([(r.tool, r.status) for r in outcome.runs], [("memcheck", "clean"), ("racecheck", "findings")])
        self.assertEqual(len(outcome.findings("student")), 3)
        memcheck, racecheck = sorted(self.log.read_text().splitlines(), key=lambda line: "racecheck" in line)
        self.assertRegex(memcheck, r"^--tool memcheck --print-limit 200 --show-backtrace device --target-processes "
                                   r"all --prefix =ppl-[0-9a-f]{16}= --log-file /proc/self/fd/(\d+) --padding 1024 "
                                   r"\S+ -S -c ")
        self.assertIn("--racecheck-report analysis --racecheck-detect-level warn", racecheck)
        prefixes = {line.split("--prefix ")[1].split()[0] for line in (memcheck, racecheck)}
        self.assertEqual(len(prefixes), 2)  # a fresh one each run
        args = sorted((json.loads(line) for line in self.checker_log.read_text().splitlines()), key=len)[-1]
        self.assertEqual(args[:4], ["--n", "1,33", "--seed", "5"])
        self.assertEqual(args[4:6], ["--result", str(self.dir / "runs" / "0-racecheck" / "result.jsonl")])
        self.assertEqual(args[6], "--quiet")
        wrapped = [args[k + 1] for k, a in enumerate(args) if a == "--runner-wrap"]
        self.assertEqual(wrapped[:3], [str(self.tool), "--tool", "racecheck"])
        fd = args[args.index("--runner-fd") + 1]
        self.assertGreaterEqual(int(fd), runs.LOG_FD_MIN)
        self.assertIn(f"/proc/self/fd/{fd}", wrapped)
        self.assertEqual(args[args.index("--runner-ro") + 1], str(self.dir.resolve() / "cuda"))
        self.assertIn("Race reported", Path(outcome.runs[1].log).read_text())  # the log as read, for people
        self.assertIn("the program says hello", Path(outcome.runs[1].output).read_text())

    def test_what_the_runner_writes_does_not_count(self):
        """The runner (the student's code) closes stderr, prints the tool's words and writes on the log's descriptor:
        the race the tool wrote stays, and nothing forged is read."""
        self.give("racecheck", "racecheck-volatile-last-warp.txt", STUDENT)
        forge = ("import sys; os.close(2); print('========= RACECHECK SUMMARY: 0 hazards displayed'); "
                 "os.write(LOG, b'x'); "  # half a line before the tool's next one
                 "os.write(LOG, b'========= \\n========= ERROR SUMMARY: 0 errors\\n'); "
                 "os.write(LOG, b'=========     at k()+0x1 in /elsewhere/harness/device/check_i32.cu:1\\n')")
        outcome = self.run_one(tools=("racecheck",), FAKE_RUNNER=forge)
        (run,) = outcome.runs
        self.assertEqual(run.status, "findings")
        self.assertEqual(len(outcome.findings("student")), 3)
        self.assertEqual({loc.line for f in run.findings for loc in f.locations}, {47, 48, 49, 50})
        self.assertEqual(run.parsed.reported, 3)

    def test_a_log_cut_short_or_unreadable_fails_the_row(self):
        self.give("memcheck", "clean.txt", STUDENT)
        (self.samples / "racecheck.txt").write_text("========= COMPUTE-SANITIZER\n========= Race reported, garbled\n"
                                                     "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors)\n")
        outcome = self.run_one(FAKE_SANITIZER_STOPPED="memcheck")
        self.assertEqual([(r.tool, r.status) for r in outcome.runs],
                         [("memcheck", "incomplete"), ("racecheck", "unreadable")])
        result = score_sanitizers("04-unrolled", SPEC, outcome, "reduce.cu", KIT)
        self.assertEqual((result.status, result.score, result.full), ("FAIL", 0, False))
        self.assertIn("memcheck: compute-sanitizer's log ends before its summary", result.summary)
        self.assertIn("racecheck --n 1,33 --seed 5: compute-sanitizer counted 2 errors that the grader could not read",
                      result.detail)

    def test_a_tool_that_never_wrote_its_log_is_not_held_against_the_student(self):
        self.tool.write_text(f"#!{sys.executable} -S\nimport sys\nprint('Error: no CUDA here?')\n")
        outcome = self.run_one(tools=("memcheck",))
        self.assertEqual([r.status for r in outcome.runs], ["error"])
        self.assertIn("compute-sanitizer wrote nothing to its log", outcome.runs[0].message)
        result = score_sanitizers("04-unrolled", SPEC, outcome, "reduce.cu", KIT)
        self.assertEqual((result.status, result.full), ("not run", True))

    def test_a_slow_tool_times_out_and_is_not_run_again(self):
        self.give("memcheck", "clean.txt", STUDENT)
        self.give("racecheck", "clean.txt", STUDENT)
        with mock.patch.dict(os.environ, {**self.env, "FAKE_SANITIZER_SLOW": "racecheck"}):
            outcome = run_sanitizers(self.program(), [["--n", "1"], ["--n", "2"]], tools=("racecheck", "memcheck"),
                                     timeout=1, workdir=self.dir / "runs", source="reduce.cu", kit=KIT,
                                     sanitizer=str(self.tool))
        self.assertEqual([(r.tool, r.status) for r in outcome.runs],
                         [("racecheck", "timeout"), ("memcheck", "clean"), ("memcheck", "clean")])
        self.assertEqual(outcome.runs[0].message, "did not finish within 1 s")

    def test_a_cancelled_grading_stops_at_once(self):
        """The grader cancels the sanitizers when a lab's correctness runs hung: the run under way is killed and no
        further argument list starts, instead of each tool waiting out its own timeout (300 s in labs.toml)."""
        self.give("memcheck", "clean.txt", STUDENT)
        self.give("racecheck", "clean.txt", STUDENT)
        cancel = threading.Event()
        threading.Timer(1.0, cancel.set).start()
        start = time.monotonic()
        with mock.patch.dict(os.environ, {**self.env, "FAKE_SANITIZER_SLOW": "racecheck"}):
            outcome = run_sanitizers(self.program(), [["--n", "1"], ["--n", "2"]], tools=("racecheck", "memcheck"),
                                     timeout=60, workdir=self.dir / "runs", source="reduce.cu", kit=KIT,
                                     sanitizer=str(self.tool), cancel=cancel)
        self.assertLess(time.monotonic() - start, 20)
        self.assertEqual([(r.tool, r.status) for r in outcome.runs],
                         [("racecheck", "cancelled"), ("memcheck", "clean")])
        self.assertIn("correctness runs hung", outcome.runs[0].message)

    def test_racecheck_starts_first_and_the_row_keeps_the_tools_order(self):
        """The slowest tool (runs.FIRST_TOOL) starts alone, the others STAGGER_SECONDS after it, so that its CUDA
        context, which the driver makes one at a time, is not the last; the runs stay in the order of tools. A
        cancel while the others wait starts none of them."""
        started = {}

        def run_tool(sanitizer, tool, program, args, **kw):
            started[tool] = time.monotonic()
            return runs.ToolRun(tool, list(args), "clean")

        tools = ("memcheck", "racecheck", "synccheck", "initcheck")
        with mock.patch.object(runs, "run_tool", run_tool):
            outcome = run_sanitizers(self.program(), [["--n", "1"]], tools=tools, timeout=60,
                                     workdir=self.dir / "runs", source="reduce.cu", kit=KIT, sanitizer=str(self.tool))
            self.assertEqual([r.tool for r in outcome.runs], list(tools))
            for tool in ("memcheck", "synccheck", "initcheck"):
                self.assertGreaterEqual(started[tool] - started["racecheck"], runs.STAGGER_SECONDS * 0.9, tool)
            cancel = threading.Event()
            threading.Timer(runs.STAGGER_SECONDS / 3, cancel.set).start()
            started.clear()
            outcome = run_sanitizers(self.program(), [["--n", "1"]], tools=tools, timeout=60,
                                     workdir=self.dir / "runs2", source="reduce.cu", kit=KIT,
                                     sanitizer=str(self.tool), cancel=cancel)
        self.assertEqual(list(started), ["racecheck"])
        self.assertEqual([(r.tool, r.status) for r in outcome.runs],
                         [("memcheck", "cancelled"), ("racecheck", "clean"), ("synccheck", "cancelled"),
                          ("initcheck", "cancelled")])

    def test_command_line(self):
        argv = runs.tool_argv("/opt/cuda/compute-sanitizer/compute-sanitizer", "racecheck", "/b/reduce_lab",
                                  ["--n", "1"], log_fd=12, prefix="=p=")
        self.assertEqual(argv[:3], ["/b/reduce_lab", "--n", "1"])
        wrapped = argv[3:-4]
        self.assertEqual(wrapped[0::2], ["--runner-wrap"] * (len(wrapped) // 2))
        self.assertEqual(wrapped[1::2], ["/opt/cuda/compute-sanitizer/compute-sanitizer", "--tool", "racecheck",
                                         "--print-limit", "200", "--show-backtrace", "device", "--target-processes",
                                         "all", "--prefix", "=p=", "--log-file", "/proc/self/fd/12",
                                         "--racecheck-report", "analysis", "--racecheck-detect-level", "warn"])
        self.assertLessEqual(len(wrapped) // 2, 32)  # the checker takes 32 --runner-wrap arguments
        self.assertEqual(argv[-4:], ["--runner-fd", "12", "--runner-ro", "/opt/cuda"])

    def test_find_sanitizer(self):
        self.assertEqual(find_sanitizer({"COMPUTE_SANITIZER": str(self.tool)}), str(self.tool))
        self.assertIsNone(find_sanitizer({"COMPUTE_SANITIZER": str(self.dir / "nothing")}))
        self.assertEqual(find_sanitizer({"PATH": str(self.tool.parent)}), str(self.tool))
        toolkit = self.dir / "toolkit"
        (toolkit / "compute-sanitizer").mkdir(parents=True)
        inside = toolkit / "compute-sanitizer" / "compute-sanitizer"
        inside.write_text(FAKE_SANITIZER)
        inside.chmod(0o755)
        self.assertEqual(find_sanitizer({"PATH": str(self.dir / "empty"), "CUDA_HOME": str(toolkit)}), str(inside))

    def grade(self, *, slow="", missing=False, timeout=20.0, tool_timeout=None, body=PASS):
        """Grades lab 01 of SMALL_TOML plus a sanitizers table (tool_timeout: its timeout), with the fake program
        (body: what it does after the checker's part) and the fake sanitizer."""
        config = load_config(write_file(self.dir, "labs.toml", SMALL_TOML + textwrap.dedent("""
            [suites.s.sanitizers]
            points = 0
            tools = ["memcheck", "racecheck"]
            runs = [["--data", "integer", "--n", "1,33"]]
            """) + (f"timeout = {tool_timeout}\n" if tool_timeout else "")))
        lab = config.select("01")
        submission = make_submission(self.dir / "sub", ["01-first"], VOLATILE_SOURCE)
        program = fake_program(self.dir, WRAPPING_CHECKER, body)

        def build(kit, pattern, source, folder, timeout=None, harness_build=None):
            Path(folder).mkdir(parents=True, exist_ok=True)
            copy = Path(folder) / "reduce.cu"
            copy.write_text(Path(source).read_text())
            built = Path(folder) / "reduce_lab"
            built.write_text(program.read_text())
            built.chmod(0o755)
            return sanitize_build_result(built)

        grader = Grader(config, submission, kit=self.dir, build_dir=self.dir / "build", seed=7, build=build,
                        timeout=timeout,
                        build_harness=lambda *a, **k: sanitize_build_result(None),
                        check=lambda obj, pattern: static_verdict())
        env = {**self.env, "FAKE_SANITIZER_SLOW": slow,
               "COMPUTE_SANITIZER": str(self.dir / "nothing" if missing else self.tool)}
        with mock.patch.dict(os.environ, env):
            return grader.grade(lab)

    def test_the_grader_fails_the_row_and_does_not_time_the_lab(self):
        self.give("memcheck", "clean.txt", str(self.dir / "build" / "01-first" / "reduce.cu"))
        self.give("racecheck", "racecheck-volatile-last-warp.txt", str(self.dir / "build" / "01-first" / "reduce.cu"))
        report = self.grade()
        rows = {r.name: r for r in report.results}
        self.assertEqual(list(rows), ["static checks", "small", "exact", "sanitizers", "performance"])
        # the sums were right, but the race takes the groups' points (labs.toml's hazard_cost, 1 by default)
        self.assertEqual([(rows[g].status, rows[g].score) for g in ("small", "exact")], [("HAZARD", 0)] * 2)
        self.assertRegex(rows["small"].summary, r"^HAZARD: see the sanitizers row \(reduce\.cu:47, reduce\.cu:48")
        self.assertEqual(rows["sanitizers"].status, "FAIL")
        self.assertIn("`v[t] += v[t + 32];`", rows["sanitizers"].summary)  # quoted from the build's copy
        self.assertEqual((rows["performance"].status, rows["performance"].score), ("not run", 0))
        self.assertFalse(report.full_marks)
        table = format_table(report)
        self.assertRegex(table, r"  sanitizers +0 / 0 +FAIL +racecheck: reduce\.cu:47 and reduce\.cu:48: ")
        self.assertIn("Add __syncwarp() between the steps", table)
        tests = {t["name"]: t for t in gradescope_results(report)["tests"]}
        self.assertEqual(tests["01-first: sanitizers"]["status"], "failed")
        self.assertEqual(gradescope_results(report)["extra_data"]["static_check_findings"], {})
        args = next(a for a in map(json.loads, self.checker_log.read_text().splitlines()) if "--runner-wrap" in a)
        self.assertEqual(args[:9], ["--data", "integer", "--n", "1,33", "--seed", "7", "--host-memory-mib", "8192",
                                    "--result"])

    def test_the_grader_without_compute_sanitizer_loses_nothing(self):
        report = self.grade(missing=True)
        rows = {r.name: r for r in report.results}
        self.assertEqual((rows["sanitizers"].status, rows["sanitizers"].full), ("not run", True))
        self.assertEqual(rows["performance"].status, "pass")
        self.assertTrue(report.full_marks)
        self.assertRegex(format_table(report), r"  sanitizers +0 / 0 +not run +compute-sanitizer is not installed")

    def test_the_grader_excuses_a_slow_tool(self):
        self.give("memcheck", "clean.txt", STUDENT)
        self.give("racecheck", "clean.txt", STUDENT)
        report = self.grade(slow="racecheck", timeout=2.0)
        rows = {r.name: r for r in report.results}
        self.assertEqual((rows["sanitizers"].status, rows["sanitizers"].full), ("not run", True))
        self.assertIn("not run in full: racecheck did not finish within", rows["sanitizers"].summary)
        self.assertEqual(rows["performance"].status, "pass")


    def test_a_hung_lab_does_not_wait_out_its_sanitizers(self):
        """A lab whose correctness runs hang (killed at the grader's --timeout) is not held up by the sanitizers
        running beside them: their row is not graded then, so the grader stops them (it waited for each tool's own
        timeout, 300 s in labs.toml: a hung student took 5 minutes of a class run)."""
        self.give("memcheck", "clean.txt", STUDENT)
        self.give("racecheck", "clean.txt", STUDENT)
        start = time.monotonic()
        report = self.grade(slow="memcheck,racecheck", timeout=2.0, tool_timeout=60,
                            body="if not wrap:\n    import time\n    time.sleep(60)\nall_pass()")
        self.assertLess(time.monotonic() - start, 25)
        rows = {r.name: r for r in report.results}
        self.assertEqual(rows["small"].status, "TIMEOUT")
        self.assertEqual(rows["sanitizers"].status, "not run")

# The runner's side of an attack on the tool's log: the student's code closes stderr, prints the tool's words, and on
# every descriptor from 5 on tries to read the log away (opening /proc/self/fd/N for reading) and writes lines of
# the tool's default prefix, one of them half a line.
ATTACK_HOST = """
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    fclose(stderr);
    close(2);
    printf("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\\n");
    fflush(stdout);
    for (int fd = 5; fd < 64; fd++) {
        char path[64], sink[4096];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        const int stolen = open(path, O_RDONLY | O_NONBLOCK);
        if (stolen >= 0) {
            while (read(stolen, sink, sizeof sink) > 0) {
            }
            close(stolen);
        }
        const char *forged = "========= ERROR SUMMARY: 0 errors\\nhalf a line";
        if (write(fd, forged, strlen(forged)) < 0) {
        }
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);
}
"""


SYSTEM_PYTHON = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(p, os.X_OK)), None)


@unittest.skipUnless(shutil.which(os.environ.get("NVCC", "nvcc")), "nvcc not found: the runner is built for the "
                                                                   "simulator")
@unittest.skipUnless(SYSTEM_PYTHON, "no python3 under /usr for the fake compute-sanitizer inside the sandbox")
class InTheSandbox(unittest.TestCase):
    """The real checker, its sandbox (bubblewrap where it works) and a runner built for the simulator, with the fake
    compute-sanitizer as --runner-wrap: the tool's log reaches the grader through the pipe, /proc/self/fd/N opened
    by the tool as nobody, and the runner's attacks on it change nothing."""

    def test_the_log_reaches_the_grader_whatever_the_runner_does(self):
        with tempfile.TemporaryDirectory(prefix="ppl-sanitize-") as tmp:
            root = Path(tmp)
            os.chmod(root, 0o755)  # the sandbox runs the tool and the runner as nobody
            tool = root / "cuda" / "bin" / "compute-sanitizer"
            tool.parent.mkdir(parents=True)
            # a Python the sandbox shows (it binds /usr, not the grader's own Python's folder)
            tool.write_text(FAKE_SANITIZER.replace(f"#!{sys.executable} -S", f"#!{SYSTEM_PYTHON} -S", 1))
            tool.chmod(0o755)
            samples = root / "cuda" / "samples"
            samples.mkdir()
            os.chmod(root / "cuda", 0o755)
            folder = root / "04-unrolled"
            folder.mkdir()
            os.chmod(folder, 0o755)
            copy = folder / "reduce.cu"
            racy = mutated_text("volatile-last-warp")
            copy.write_text(racy[:racy.index("void reduce(float *d_in")] + ATTACK_HOST)
            (samples / "racecheck.txt").write_text(sample("racecheck-volatile-last-warp.txt", str(copy)))
            proc = subprocess.run(["make", "-s", "-f", str(KIT / "mk" / "sim.mk"), f"KIT={KIT}", "PATTERN=reduce",
                                   f"LAB_SRC={copy}", f"BUILD={folder}"], cwd=KIT, capture_output=True, text=True,
                                  timeout=900)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            # the sandbox passes the tool an allow-listed environment: the fake finds cuda/samples beside its bin/
            with mock.patch.dict(os.environ):
                os.environ.pop("FAKE_SANITIZER_SAMPLES", None)
                os.environ.pop("FAKE_SANITIZER_LOG", None)
                outcome = run_sanitizers(folder / "reduce_lab", [["--data", "integer", "--n", "1,33", "--seed", "1"]],
                                         tools=("racecheck",), timeout=300, workdir=root / "runs", cwd=KIT,
                                         source="reduce.cu", source_path=copy, kit=KIT, sanitizer=str(tool))
            (run,) = outcome.runs
            output = Path(run.output).read_text()
            self.assertEqual(run.status, "findings", f"{run.message}\n{output}")
            self.assertEqual(len(outcome.findings("student")), 3)
            self.assertEqual({loc.line for f in run.findings for loc in f.locations}, {47, 48, 49, 50})
            self.assertEqual(run.parsed.reported, 3)
            self.assertIn("RACECHECK SUMMARY: 0 hazards", output)  # printed by the runner: not read
            # the log's descriptor is the device program's, where the tool runs: the runner cannot even write on it
            self.assertNotIn("ERROR SUMMARY: 0 errors", Path(run.log).read_text())


def sanitize_build_result(program):
    from grader.compile.build import BuildResult
    return BuildResult(True, program=program, object=program.parent / "student.o" if program else None)


def static_verdict():
    from grader.compile.static_check import Verdict
    return Verdict()


class Config(unittest.TestCase):
    def load(self, extra: str):
        with tempfile.TemporaryDirectory() as tmp:
            return load_config(write_file(tmp, "labs.toml", SMALL_TOML + textwrap.dedent(extra)))

    TABLE = """
        [suites.s.sanitizers]
        points = 5
        tools = ["memcheck", "racecheck"]
        runs = [["--n", "1,33"]]
        timeout = 100
        """

    def test_suite_table_and_a_labs_override(self):
        config = self.load(self.TABLE.replace("[suites.s.sanitizers]", "[labs.02-second.sanitizers]\n"
                                              "tools = [\"initcheck\"]\n\n[suites.s.sanitizers]"))
        first, second = config.labs
        self.assertEqual(first.sanitizers, Sanitizers(5, ("memcheck", "racecheck"), (("--n", "1,33"),), 100))
        self.assertEqual(second.sanitizers, Sanitizers(5, ("initcheck",), (("--n", "1,33"),), 100))
        self.assertEqual(first.max_score, 10 + 20 + 30 + 5)

    def test_bad_tables(self):
        cases = {
            'tools = ["memcheck", "leakcheck"]': r"unknown tool 'leakcheck'",
            'tools = ["memcheck", "memcheck"]': r"a tool appears twice",
            'tools = []': r"tools: expected a non-empty list",
            'runs = [["--n", "1", "--seed", "3"]]': r"--seed is set by the grader",
            'runs = ["--n"]': r"runs: expected a non-empty list of non-empty lists",
            'timeout = 0': r"timeout: expected a positive number",
            'points = -1': r"points: expected a number >= 0",
            'colour = "red"': r"unknown key colour",
        }
        for line, message in cases.items():
            with self.subTest(line):
                key = line.split(" =")[0]
                table = "\n".join(ln for ln in textwrap.dedent(self.TABLE).splitlines()
                                  if not ln.startswith(key + " ")) + "\n" + line + "\n"
                with self.assertRaisesRegex(ConfigError, message):
                    self.load(table)

    def test_missing_key_and_group_name(self):
        with self.assertRaisesRegex(ConfigError, r"suites\.s\.sanitizers: missing runs"):
            self.load(self.TABLE.replace('runs = [["--n", "1,33"]]', ""))
        clash = SMALL_TOML.replace('name = "small"', 'name = "sanitizers"')
        with tempfile.TemporaryDirectory() as tmp, self.assertRaisesRegex(ConfigError, r"may not be called "
                                                                                       r"'sanitizers'"):
            load_config(write_file(tmp, "labs.toml", clash))

    def test_real_labs_toml(self):
        for lab in load_config().labs:
            with self.subTest(lab.name):
                self.assertEqual(lab.sanitizers.tools, ("memcheck", "racecheck", "synccheck", "initcheck"))
                self.assertEqual(lab.sanitizers.points, 0)
                (run,) = lab.sanitizers.runs  # small sizes (racecheck is slow): one element, a few blocks at most
                sizes = parse_sizes(run[run.index("--n") + 1])
                self.assertEqual(sizes[0], 1)
                self.assertLessEqual(max(sizes), 1 << 17)
                self.assertEqual(run[:2] == ("--data", "integer"), lab.pattern == "reduce")


class MakeSanitize(unittest.TestCase):
    def test_with_sizes(self):
        self.assertEqual(with_sizes(("--data", "integer", "--n", "1,33"), "5"), ["--data", "integer", "--n", "5"])
        self.assertEqual(with_sizes(("--data", "integer"), "5"), ["--data", "integer", "--n", "5"])
        self.assertEqual(with_sizes(("--n", "1"), None), ["--n", "1"])

    def test_usage_errors(self):
        with mock.patch("sys.stderr", new=io.StringIO()) as err:
            self.assertEqual(cli.main([]), cli.EXIT_USAGE)
            self.assertIn("make sanitize needs a lab: make sanitize LAB=04", err.getvalue())
            self.assertEqual(cli.main(["--lab", "99"]), cli.EXIT_USAGE)
            self.assertEqual(cli.main(["--lab", "04", "--tools", "leakcheck"]), cli.EXIT_USAGE)
        with mock.patch.dict(os.environ, {"COMPUTE_SANITIZER": "/nonexistent/compute-sanitizer"}), \
                mock.patch("sys.stderr", new=io.StringIO()) as err:
            gpu = (True, "nvidia-smi lists GPU 0: NVIDIA H100, but CUDA cannot use it")
            self.assertEqual(cli.main(["--lab", "04"], gpu_lister=lambda: gpu), cli.EXIT_NO_TOOL)
            self.assertIn("compute-sanitizer is not installed here", err.getvalue())

    def test_no_tool_and_no_gpu(self):
        """Without compute-sanitizer and without a GPU, the GPU is what is missing first: exit 77 and the
        simulator's commands (grader/run/no_gpu.py), the missing tool named too."""
        out = io.StringIO()
        with mock.patch.dict(os.environ, {"COMPUTE_SANITIZER": "/nonexistent/compute-sanitizer"}):
            status = cli.main(["--lab", "04"], out=out, gpu_lister=lambda: (False, "nvidia-smi: not found"))
        text = out.getvalue()
        self.assertEqual(status, cli.EXIT_NO_DEVICE, text)
        self.assertIn("make sanitize runs your kernel under compute-sanitizer", text)
        self.assertIn("there is none here (nvidia-smi: not found).", " ".join(text.split()))
        self.assertRegex(text, r"\n  make sim LAB=04 +your kernel on small and edge sizes; the simulator checks")
        self.assertIn("compute-sanitizer is not installed here either", text)

    def test_print_outcome(self):
        out = io.StringIO()
        outcome = outcome_of(("memcheck-shared-write.txt", "memcheck"), ("initcheck-kit.txt", "initcheck"))
        found = cli.print_outcome(outcome, "reduce.cu", out, KIT)
        self.assertEqual(found, 1)
        text = out.getvalue()
        self.assertIn("memcheck   --n 1,33: 1 finding in reduce.cu", text)
        self.assertIn("memcheck: reduce.cu:40: Invalid __shared__ write of size 4 bytes", text)
        self.assertIn("in the kit (a kit bug, not yours): initcheck: harness/device/check_i32.cu:21", text)


if __name__ == "__main__":
    unittest.main()
