"""The kit's CPU simulator end to end, without a GPU (tests/run.py's `sim` suite): `grade.py --simulator` gives every
reference solution full marks on what the simulator runs, every blank lab loses its points (the skeletons derived
from solutions/ into a temp folder, not labs/, which may hold a student's work), and each known-wrong submission of
tools/instructor/variants/ that is a run-time bug is reported (a lost group, a kernel fault, the instruction limit, or a
hazard in the sanitizers row); `make sim` runs a lab and prints the counts. Plus the pure helpers of
grader/sim/simulator.py.

Needs nvcc (skipped, saying so, without it) and the simulator core (sim/Makefile). The solutions, the blank labs and
each wrong submission are graded once, in temporary build folders; the harness objects are shared
(build/sim/harness). About three minutes on 16 cores, the first build of the harness included.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader.sim import sim_report, simulator
from grader.config import load_config
from grader.grade import Grader
from tools.instructor.variants.wrong import mutated_text, mutations, submission
from tools.author.make_skeletons import derive
from tests.timing import slow

KIT = Path(__file__).resolve().parents[2]
HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None
# The known-wrong submissions' expected verdicts, written once in tools/instructor/variants/mutations.toml (its
# header says the keys): the run-time bugs and the words a lost row must say; the simulator's findings that must name
# the student's file and line; those the compiler, the static checks or the input check catch before anything runs;
# those only a GPU can catch.
TABLE = mutations()
RUNTIME_BUGS = {n: m["verdict"] for n, m in TABLE.items() if m.get("caught") == "running"}
WITH_LINE = {n: m["finding"] for n, m in TABLE.items() if m.get("finding")}
CAUGHT_BEFORE_RUNNING = {n: m["verdict"] for n, m in TABLE.items() if m.get("caught") == "before running"}
GPU_ONLY = {n: m["gpu_only"] for n, m in TABLE.items() if m.get("caught") == "gpu only"}


def build_reduction(test: unittest.TestCase, folder: Path, text: str) -> Path:
    """text built as a reduction lab's reduce.cu for the simulator with mk/sim.mk itself, its copy in folder (made
    here) as the grader has it; the test fails with make's output if it does not build. Returns the lab program."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / "reduce.cu"
    copy.write_text(text)
    proc = subprocess.run(["make", "-s", "-f", str(simulator.SIM_MAKEFILE), f"KIT={KIT}", "PATTERN=reduce",
                           f"LAB_SRC={copy}", f"BUILD={folder}"], cwd=KIT, capture_output=True, text=True, timeout=900)
    test.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    return folder / "reduce_lab"


class WithoutCounts(simulator.SimPlatform):
    """The simulator's back end, its performance row left at "needs a GPU" without the counts and the estimate behind
    it (about 10 s for a reduction lab that passes: the estimate builds and simulates the baseline in each build
    folder), for tests that read the other rows. The row itself is tested by tests/grader/test_estimate.py (make grade
    SIM=1's estimate) and tests/tools/instructor/test_gradescope.py (the reference solution without a GPU)."""

    def grade_performance(self, grader, lab, program, correct, report):
        return simulator.needs_gpu(lab.name, "performance", lab.performance.points, "not measured in this test")


def sim_grader(config, folder, run_pool=None, counts=True, **kwargs):
    """A Grader on the simulator's back end (python3 -m grader --simulator); counts=False: WithoutCounts."""
    platform = (simulator.SimPlatform if counts else WithoutCounts)(run_pool=run_pool)
    return Grader(config, folder, platform=platform, **kwargs)


class Helpers(unittest.TestCase):
    def test_every_known_wrong_submission_has_a_verdict(self):
        for name, m in TABLE.items():
            with self.subTest(mutation=name):
                where = (f"tools/instructor/variants/mutations.toml [{name}]: see its header and docs/AUTHORING.md, "
                         f"'A wrong variant'")
                self.assertIn(m.get("caught"), ("running", "before running", "gpu only"), f"{where}: no `caught`")
                key = "gpu_only" if m["caught"] == "gpu only" else "verdict"
                self.assertTrue(isinstance(m.get(key), str) and m[key].strip(), f"{where}: no `{key}`")
                if "finding" in m:
                    re.compile(m["finding"])

    def test_demangle(self):
        if not shutil.which("c++filt"):
            self.skipTest("c++filt (binutils) is not installed")
        self.assertEqual(sim_report.demangle("kernel _Z13reduce_kernelPKfPfm, reduce.cu:50"),
                         "kernel reduce_kernel(float const*, float*, unsigned long), reduce.cu:50")
        self.assertEqual(sim_report.demangle("no names here"), "no names here")

    def test_largest_size(self):
        self.assertEqual(simulator.largest_size([["--data", "signs", "--n", "2^29+1"], ["--n", "5,7"]]), (1 << 29) + 1)
        self.assertEqual(simulator.largest_size([["--dataset", "x/input.raw"]]), 0)
        self.assertGreater(simulator.largest_size([["--n", "1,huge"]]), simulator.SIM_MAX_N)  # unknown: not run

    def test_diagnostic_keeps_faults_and_few_findings(self):
        lines = [report_line(errors=[FAULT])]
        lines += [report_line(findings=[finding(line=k, where=f"a.cu:{k}") for k in range(5)])]
        said = sim_report.diagnostic(sim_report.read_report(b"".join(lines)))
        self.assertIn("kernel k failed: out-of-bounds global access", said)
        self.assertIn("a.cu:0", said)
        self.assertNotIn("PTX line", said)
        self.assertIn("2 more findings", said)

    def test_the_channel_keeps_every_finding_it_was_told(self):
        """A line written on the channel by the lab's code (here: one without findings, after the simulator's) adds
        nothing and takes nothing back; text before a line on the same line does not hide it."""
        racy = report_line(findings=[finding()])
        forged = report_line(findings=[], errors=[], seq=99)
        report = sim_report.read_report(b"garbage without an end" + racy + forged + b"not a report\n" + b"{\"ppl\n")
        self.assertEqual((report.lines, report.garbage), (2, 2))
        self.assertEqual(len(report.findings), 1)
        self.assertEqual(report.findings[0]["count"], 7)
        again = sim_report.read_report(racy + report_line(findings=[finding(count=9)]))
        self.assertEqual([f["count"] for f in again.findings], [9])  # the same finding, counted further
        self.assertIsNone(report.limitation())
        limited = sim_report.read_report(report_line(errors=[LIMIT]))
        self.assertEqual(limited.limitation()["status"], "unsupported")
        self.assertIn("not graded on the simulator: the simulator cannot run kernel k (unsupported)",
                      sim_report.not_graded_message(limited.limitation()))

    def test_the_channel_reader_is_bounded(self):
        read_fd, write_fd = os.pipe()
        reader = sim_report.ReportReader(read_fd)
        reader.start()
        with mock.patch.object(sim_report, "MAX_REPORT_LINE", 1000):
            os.write(write_fd, b"x" * 5000)  # a line without end, longer than the limit: dropped
            os.write(write_fd, b"\n" + report_line(findings=[finding()]))
            os.close(write_fd)
            reader.stop(5.0)
        os.close(read_fd)
        self.assertEqual((reader.report.lines, reader.report.garbage, len(reader.report.findings)), (1, 1, 1))

    def test_a_program_of_several_lists_has_a_report_per_list(self):
        """RunsReportReader: each line goes to the list it names; the first instruction-limit fault is told once."""
        read_fd, write_fd = os.pipe()
        told = []
        reader = sim_report.RunsReportReader(read_fd, on_limit=told.append)
        reader.start()
        hang = {"kind": "kernel-fault", "status": "limit", "what": "kernel k", "message": "the instruction limit"}
        os.write(write_fd, report_line(run=0) + report_line(findings=[finding()], run=1) + b"garbage\n"
                 + report_line(errors=[hang], run=2) + report_line(errors=[hang], run=2, seq=2))
        os.close(write_fd)
        reader.stop(5.0)
        os.close(read_fd)
        reports = reader.reports
        self.assertEqual(sorted(reports), [0, 1, 2])
        self.assertEqual([len(reports[k].findings) for k in range(3)], [0, 1, 0])
        self.assertEqual(reports[1].garbage, 1)  # with the list of the line before
        self.assertEqual(told, [2])
        self.assertEqual(reports[2].faults()[0]["status"], "limit")

    def test_hazards_row(self):
        mine = sim_report.read_report(report_line(findings=[
            finding(kind="shared-race-inter-warp", kernel="k", file="/b/06-scan/scan.cu", line=38, where="scan.cu:38",
                    other_file="/b/06-scan/scan.cu", other_line=35, other_where="scan.cu:35"),
            finding(kind="uninitialized-global-read", kernel="_Z15checksum_kernelPKjmmPy",
                    file=f"{KIT}/harness/device/check_i32.cu", line=19, where="check_i32.cu:19")]))
        clean = sim_report.read_report(report_line())
        ok = simulator.score_hazards("06-scan", 5.0, "scan.cu", [clean])
        self.assertEqual((ok.status, ok.score), ("pass", 5.0))
        bad = simulator.score_hazards("06-scan", 5.0, "scan.cu", [clean, mine, mine])
        self.assertEqual((bad.status, bad.score), ("FAIL", 0.0))
        self.assertIn("scan.cu:38", bad.summary)
        self.assertNotIn("and 1 more", bad.summary)  # the same finding twice, and the kit's one apart
        self.assertIn("a kit bug", bad.detail)
        self.assertIn("check_i32.cu:19", bad.detail)

    def test_hazards_row_by_the_line_table(self):
        """Whose finding it is comes from the line table's paths: the kit's only under its harness/ folder."""
        source = "__global__ void k(float *v)\n{\n}\n"
        for path, owner in ((f"{KIT}/patterns/reduce/support.cu", "kit"),
                            ("harness/reduce_support.cu", "student"),
                            ("/somewhere/else/made_up.cu", "student"), ("/b/04/reduce.cu", "student")):
            with self.subTest(path=path):
                f = finding(kernel="_Z8checkingPf", file=path, where=Path(path).name + ":30")
                self.assertEqual(simulator.finding_owner(f, "reduce.cu", KIT, source), owner)
        f = finding(kernel="_Z1kPf", file=f"{KIT}/patterns/reduce/support.cu")
        self.assertEqual(simulator.finding_owner(f, "reduce.cu", KIT, source), "student")  # k is the student's
        f = finding(kernel="_Z15checksum_kernelPKjmmPy", file=None, where="PTX line 9")
        self.assertEqual(simulator.finding_owner(f, "reduce.cu", KIT, source), "kit")

    def test_hazards_row_not_graded(self):
        limited = sim_report.read_report(report_line(errors=[LIMIT]))
        row = simulator.score_hazards("04-unrolled", 5.0, "reduce.cu", [sim_report.read_report(report_line()), limited])
        self.assertEqual((row.status, row.score), (simulator.NOT_GRADED, 0.0))
        self.assertIn("grade on a GPU", row.summary)
        silent = simulator.score_hazards("04-unrolled", 5.0, "reduce.cu", [sim_report.SimReport()])
        self.assertEqual((silent.status, silent.score), ("not run", 0.0))  # the checks did not happen


FAULT = {"kind": "kernel-fault", "status": "out-of-bounds", "what": "kernel k",
         "message": "out-of-bounds global access ... thread (4,0,0)"}
LIMIT = {"kind": "cannot-simulate", "status": "unsupported", "what": "kernel k", "message": "match.sync"}


def finding(**fields) -> dict:
    f = {"kind": "shared-race-intra-warp", "kernel": "k", "where": "a.cu:3", "file": "/b/a.cu", "line": 3,
         "ptx_line": 10, "instruction": "ld.shared.f32", "count": 7, "message": "race"}
    f.update(fields)
    return f


def report_line(findings=(), errors=(), seq=1, run=None) -> bytes:
    """One line of the simulator's report channel, as sim/runtime.c writes it (run: the list it names, in a
    program that runs several)."""
    import json
    return (json.dumps({"ppl_sim_report": 1, "seq": seq, "event": "launch", "pid": 2, "launches": 1,
                        **({} if run is None else {"run": run}), "errors": list(errors), "errors_dropped": 0,
                        "kernels": [], "findings": list(findings)})
            + "\n").encode()


class SimGrading(unittest.TestCase):
    """A temp folder the sandbox's nobody can reach, the kit's labs.toml and the simulator's Grader, per class."""

    TMP_PREFIX = "ppl-sim-test-"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix=cls.TMP_PREFIX)
        os.chmod(cls.tmp.name, 0o755)  # the runner runs as nobody in its sandbox and must reach its program
        cls.config = load_config()
        cls.SimGrader = staticmethod(sim_grader)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class Grading(SimGrading):

    def grade(self, folder, prefix, tag, counts=True):
        grader = self.SimGrader(self.config, Path(folder), build_dir=str(Path(self.tmp.name) / tag), seed=12345,
                                counts=counts)
        return grader.grade(self.config.select(prefix))

    @slow  # make test-all's: see tests/timing.py
    def test_solutions_pass_what_the_simulator_runs(self):
        report = self.grade(KIT / "solutions", "", "solutions")
        ran = [r for r in report.results if r.status != simulator.NEEDS_GPU and r.max_score > 0]
        self.assertGreaterEqual(len(ran), 2 * len(report.labs()))  # datasets and edge sizes at least, every lab
        for r in report.results:
            with self.subTest(test=r.title):
                self.assertTrue(r.full or r.status == simulator.NEEDS_GPU, f"{r.status}: {r.summary}\n{r.detail}")
        self.assertTrue(simulator.sim_full_marks(report))
        perf = [r for r in report.results if r.name == "performance"]
        self.assertTrue(all("warp instructions" in r.detail for r in perf), "the counts stand in for performance")

    def test_blank_labs_lose_points(self):
        report = self.grade(derive(Path(self.tmp.name) / "skeletons"), "", "labs")
        for lab in report.labs():
            with self.subTest(lab=lab):
                rows = [r for r in report.results if r.lab == lab and r.status != simulator.NEEDS_GPU]
                self.assertTrue(any(not r.full for r in rows), f"{lab}: the blank lab lost no points")

    @slow  # make test-all's: see tests/timing.py
    def test_runtime_bugs_are_reported(self):
        table = mutations()
        for name, words in RUNTIME_BUGS.items():
            if name not in table:
                continue
            with self.subTest(mutation=name):
                folder = submission(name, Path(self.tmp.name) / "wrong")
                report = self.grade(folder, table[name]["lab"][:2], f"wrong-{name}")
                lost = [r for r in report.results if not r.full and r.status != simulator.NEEDS_GPU]
                self.assertTrue(lost, f"{name}: nothing reported")
                said = "\n".join(f"{r.summary}\n{r.detail}" for r in lost)
                self.assertIn(words, said, f"{name}: {said[:2000]}")
                # issue 13: nothing sends the student to a tool that needs a GPU, and every reproduction line is
                # the simulator's command (make sim ... ARGS='...'), not the GPU's lab program
                self.assertNotIn("compute-sanitizer", said, f"{name}: {said[:2000]}")
                repro = [ln.strip() for ln in said.splitlines() if "to reproduce" in ln]
                self.assertTrue(all(ln.startswith("to reproduce on the simulator, from the kit's root: make sim LAB=")
                                    for ln in repro), f"{name}: {repro}")
                if name in WITH_LINE:  # issue 6: these are reported with the student's file and line
                    self.assertRegex(said, WITH_LINE[name], f"{name}: {said[:2000]}")

    def test_submissions_caught_before_running(self):
        table = mutations()
        for name, words in CAUGHT_BEFORE_RUNNING.items():
            with self.subTest(mutation=name):
                folder = submission(name, Path(self.tmp.name) / "wrong")
                report = self.grade(folder, table[name]["lab"][:2], f"wrong-{name}")
                lost = [r for r in report.results if not r.full and r.status != simulator.NEEDS_GPU]
                said = "\n".join(f"{r.status} {r.summary}\n{r.detail}" for r in lost)
                self.assertIn(words, said, f"{name}: {said[:2000]}")
                correct = [r for r in report.results if r.name not in ("performance", "static checks", "sanitizers")
                           and r.status != simulator.NEEDS_GPU]
                self.assertTrue(correct and all(r.score == 0 for r in correct), f"{name}: {said[:2000]}")

    def test_make_sim_prints_counts(self):
        proc = subprocess.run([sys.executable, "-m", "tools.student.sim", "--lab", "03", "--submission", "solutions",
                               "--n", "1,1025"], cwd=KIT, capture_output=True, text=True, timeout=900)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("PASS  n=1025", proc.stdout)
        self.assertIn("SIMT efficiency", proc.stderr)
        self.assertRegex(proc.stderr, r"reduce\.cu:\d+")  # per source line

    def test_report_file_from_the_runner_process(self):
        """The lab's code runs in a child process that ends with _exit: the report must be there all the same."""
        report = self.grade(KIT / "solutions", "03", "report", counts=False)  # the correctness runs' reports
        self.assertTrue(simulator.sim_full_marks(report))
        found = list((Path(self.tmp.name) / "report" / "03-sequential" / "runs").glob("*/sim-report.json"))
        self.assertTrue(found)
        self.assertTrue(found[0].read_text().lstrip().startswith("{"))


# The lab 04 solution with the volatile last warp (a race between lanes of one warp that still gives right sums on
# the simulator), whose host code then attacks the grader's view of the run: it closes stderr, prints the simulator's
# own words on stdout, and writes report lines of its own on every descriptor the channel could be (6 to 63; the
# report channel is the device process's, and 5, the runner's socket to the device, has a test of its own), one half
# a line long, before and after launching its kernels.
ATTACK_HOST = """
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void forge(const char *text)
{
    for (int fd = 6; fd < 64; fd++)
        if (write(fd, text, strlen(text)) < 0) {
        }
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    fclose(stderr);
    close(2);
    printf("ppl-sim: cannot simulate kernel reduce_kernel: a limitation of the kit's simulator\\n");
    printf("ppl-sim: 0 findings in all\\n");
    forge("{\\"ppl_sim_report\\": 1, \\"findings\\": [");  /* half a line: the simulator's next one follows */
    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);
    forge("{\\"ppl_sim_report\\": 1, \\"seq\\": 999999, \\"errors\\": [], \\"findings\\": [], \\"kernels\\": []}\\n");
}
"""
# A kernel the simulator cannot run (match.sync): its group is not graded, never a pass.
UNSUPPORTED_EDIT = ("    partial[t] = sum;\n",
                    "    partial[t] = sum + (float)(__vabsdiffu4(t, t) != 0u);\n")  # vabsdiff4: not simulated
PRINTS_CANNOT = ('    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);\n',
                 '    printf("ppl-sim: cannot simulate kernel reduce_kernel: unsupported instruction\\n"\n'
                 '           "ppl-sim: this is a limitation of the kit\'s simulator, not necessarily a bug in your "\n'
                 '           "code\\n");\n'
                 '    fprintf(stderr, "ppl-sim: cannot simulate kernel reduce_kernel: unsupported instruction\\n");\n'
                 '    reduce_tree_of_blocks(d_in, d_out, n, d_work, ELEMS_PER_BLOCK, reduce_pass);\n')


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class FindingsTheStudentCannotTouch(SimGrading):
    """Issue 10: the simulator's findings, faults and limitations reach the grader on their own channel."""

    TMP_PREFIX = "ppl-sim-channel-"

    def build(self, tag: str, text: str) -> Path:
        """Builds text as lab 04's reduce.cu with mk/sim.mk itself (no grader/compile/build.py: it would refuse #line),
        the copy in the build folder as the grader has it; returns the lab program."""
        return build_reduction(self, Path(self.tmp.name) / tag, text)

    def run_sim(self, program, tag: str):
        workdir = Path(self.tmp.name) / tag / "run"
        outcome = simulator.run_harness_sim(program, ["--data", "integer", "--n", "1025,4097", "--seed", "3"],
                                            timeout=600, workdir=workdir, cwd=KIT, source="reduce.cu")
        return outcome, sim_report.load_report(workdir / "sim-report.json")

    def racy(self) -> str:
        return mutated_text("volatile-last-warp")

    def test_a_race_survives_closed_stderr_printed_words_and_forged_lines(self):
        text = self.racy()
        host = text.index("void reduce(float *d_in")
        program = self.build("attack", text[:host] + ATTACK_HOST)
        outcome, report = self.run_sim(program, "attack")
        self.assertEqual(outcome.status, "pass", outcome.message)  # lockstep: the sums are right
        log = (Path(self.tmp.name) / "attack" / "run" / "output.log").read_text()
        self.assertIn("ppl-sim: cannot simulate", log)  # printed by the lab's code: not the simulator's word
        self.assertIsNone(report.limitation())
        self.assertGreater(report.lines, 1)
        row = simulator.score_hazards("04-unrolled", 5.0, "reduce.cu", [report], source_text=text)
        self.assertEqual((row.status, row.score), ("FAIL", 0.0), row.summary)
        self.assertRegex(row.summary, r"shared-race-intra-warp\] kernel reduce_kernel\(.*reduce\.cu:\d+ and "
                                      r"reduce\.cu:\d+")

    def test_junk_on_the_device_socket_fails_the_run(self):
        """The runner's one descriptor is its socket to the device program (3): text written there (a forged report
        line) is a malformed request, and the run fails; it never passes, and the report stays the device
        program's (no line of the lab's)."""
        text = self.racy()
        host = text.index("void reduce(float *d_in")
        program = self.build("junk", text[:host] + ATTACK_HOST.replace("fd = 6; fd < 64", "fd = 3; fd < 4"))
        outcome, report = self.run_sim(program, "junk")
        self.assertEqual(outcome.status, "cuda-error", outcome.message)
        self.assertIn("sent the device a malformed request", outcome.message)
        self.assertEqual(report.garbage, 0)

    def test_a_made_up_line_directive_does_not_give_the_race_to_the_kit(self):
        text = self.racy()
        kernel = text.index("__global__ void reduce_kernel")
        for tag, path in (("line-relative", "harness/reduce_support.cu"),
                          ("line-kit", f"{KIT}/patterns/reduce/support.cu")):
            with self.subTest(path=path):
                made_up = text[:kernel] + f'#line 30 "{path}"\n' + text[kernel:]
                program = self.build(tag, made_up)
                outcome, report = self.run_sim(program, tag)
                self.assertEqual(outcome.status, "pass", outcome.message)
                self.assertTrue(report.findings)
                # nvcc names the path as the #line gave it, made absolute against its working folder (the kit's
                # here, as mk/sim.mk runs): the kit's harness/ folder, but no file of the kit's; or a file of the kit's
                # (patterns/reduce/support.cu) on the student's kernel
                self.assertTrue(all(f["file"].endswith(path) for f in report.findings), report.findings)
                row = simulator.score_hazards("04-unrolled", 5.0, "reduce.cu", [report], kit=KIT, source_text=made_up)
                self.assertEqual((row.status, row.score), ("FAIL", 0.0), row.summary)
                self.assertIn(f"{Path(path).name}:", row.summary)
                self.assertNotIn("kit bug", row.detail)

    def test_printing_cannot_simulate_gets_no_points_and_a_real_limitation_is_not_graded(self):
        """Lab 04 with a wrong sum that prints the simulator's "cannot simulate" on stdout and stderr: a failure all
        the same. Then lab 04 with an instruction the simulator does not have: not graded, 0 points, not full marks."""
        root = Path(self.tmp.name) / "grading"
        folder = submission("double-count", root)
        source = folder / "04-unrolled" / "reduce.cu"
        source.write_text(source.read_text().replace(*PRINTS_CANNOT)
                          .replace('#include "reduce.h"', '#include "reduce.h"\n#include <stdio.h>'))
        self.assertIn('printf("ppl-sim: cannot simulate', source.read_text())
        lab04 = self.config.select("04")
        report = self.SimGrader(self.config, folder, build_dir=str(root / "build"), seed=12345).grade(lab04)
        ran = [r for r in report.results if r.max_score > 0 and r.status != simulator.NEEDS_GPU]
        said = [(r.name, r.status, r.summary) for r in ran]
        self.assertTrue(any(r.status == "FAIL" and "exact" in r.name for r in ran), said)
        self.assertFalse(any(r.status in (simulator.NOT_GRADED, "ERROR") or "not graded" in r.summary for r in ran),
                         said)
        self.assertFalse(any(r.name != "sanitizers" and r.full for r in ran if "exact" in r.name), said)

        source.write_text((KIT / "solutions" / "04-unrolled" / "reduce.cu").read_text().replace(*UNSUPPORTED_EDIT))
        report = self.SimGrader(self.config, folder, build_dir=str(root / "unsupported"), seed=12345).grade(lab04)
        ran = [r for r in report.results if r.max_score > 0 and r.status != simulator.NEEDS_GPU]
        said = [(r.name, r.status, r.summary) for r in ran]
        self.assertTrue(ran)
        self.assertTrue(all(r.score == 0 for r in ran), said)
        groups = [r for r in ran if r.name != "sanitizers"]
        self.assertTrue(groups and all(r.status == simulator.NOT_GRADED for r in groups[:1]), said)
        self.assertIn("not graded on the simulator: the simulator cannot run", groups[0].summary)
        self.assertIn("grade on a GPU", groups[0].summary)
        self.assertFalse(simulator.sim_full_marks(report))


if __name__ == "__main__":
    unittest.main()
