"""grader/grade.py end to end on a real GPU: the solutions get full marks, the blank labs and the deliberately wrong
submissions in tools/instructor/variants/ lose their points, and nothing crashes or hangs.

Skipped, with the reason, when `nvidia-smi -L` finds no GPU. Each grading runs in a fresh build folder (the
solutions are graded once, for two tests); the harness objects are shared (build/harness/<arch>). A full run takes
a few minutes (about 200 s on an H100: the benchmarks and the 2 GiB case). The performance thresholds are those of
grader/labs.toml, calibrated on one GPU: on another the solutions may lose performance points.
A lab whose solution does not exist yet (the bonus lab 08) is skipped, saying so; the race of
tools/instructor/variants/no-barrier may not show on a given run, and then its test skips too. The known-wrong
submissions that the static checks catch (tools/instructor/variants/host-sum, reads-expected, library-call,
static-constructor) are graded here too, with this machine's toolkit and GPU architecture, though tests/grader checks
them without a GPU. The sanitizers row (compute-sanitizer, grader/sanitize/) must name the line of a race that gives
right sums (tools/instructor/variants/volatile-last-warp, no-barrier) and of a store past a shared array
(small-shared-array); those tests skip where compute-sanitizer is not installed.
"""
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from grader.config import load_config
from tests.grader.test_static_check import WRONG
from tools.instructor.variants.wrong import mutations, submission
from tools.author.make_skeletons import derive

KIT = Path(__file__).resolve().parents[2]

# the labs as grader/labs.toml lists them (a lab added there is graded here too): name -> its one file, the bonus ones
SOURCES = {lab.name: lab.source for lab in load_config().labs}
LABS = list(SOURCES)
BONUS = [lab.name for lab in load_config().labs if lab.bonus]
PERFORMANCE = "performance"
STATIC_CHECKS = "static checks"  # each lab's first row, of no points: grader/compile/static_check.py
SANITIZERS = "sanitizers"  # compute-sanitizer's row, after the correctness groups: grader/sanitize/
GRADE_TIMEOUT = 1800  # seconds for one whole grading run
# What the harness says when a blank lab computes a wrong answer: a wrong sum (reductions), a wrong element
# (scans, compaction), a wrong count (compaction).
# a wrong answer in each pattern's words: a reduction's sum, a scan's or compaction's element or count, a histogram's bin
WRONG_ANSWER = re.compile(r"wrong sum|element \d+: got|count: got|bin \d+ .*: got")
BROKEN_SIGNS = ("timed out", "crashed with signal", "CUDA error", "does not compile", "harness rejected")


def no_gpu_reason() -> str | None:
    """Why these tests cannot run here, or None when nvidia-smi lists a GPU."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "no NVIDIA GPU here (nvidia-smi is not installed); these tests grade on a real GPU"
    try:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"no NVIDIA GPU here (nvidia-smi -L failed: {e})"
    if listed.returncode != 0 or "GPU" not in listed.stdout:
        return f"no NVIDIA GPU here (nvidia-smi -L: {(listed.stdout + listed.stderr).strip()[:200]})"
    return None


def setUpModule():
    reason = no_gpu_reason()
    if reason:
        raise unittest.SkipTest(reason)


def lab_of(name: str) -> str:
    """The lab of a results.json test name: "08-single-pass (bonus): datasets" -> "08-single-pass"."""
    return name.split(":")[0].removesuffix(" (bonus)")


class GradeOnGPU(unittest.TestCase):
    graded = {}  # (submission, lab) -> (exit status, table, tests): the solutions are graded once for two tests

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.wrong_root = tempfile.TemporaryDirectory()
        cls.addClassCleanup(cls.wrong_root.cleanup)

    def wrong(self, name):
        """The known-wrong submission name (tools/instructor/variants/mutations.toml), made from the solutions."""
        return submission(name, self.wrong_root.name)

    def grade(self, submission, lab=None, *extra):
        """Runs grade.py on submission (relative to the kit, or absolute) with the extra arguments and returns
        (exit status, table, {name: test})."""
        key = (str(submission), lab, *extra)
        if key not in self.graded:
            with tempfile.TemporaryDirectory() as build:
                results = Path(build) / "results.json"
                argv = [sys.executable, "-m", "grader", "--submission", str(KIT / submission), "--build-dir", build,
                        "--results", str(results), *(["--lab", lab] if lab else []), *extra]
                done = subprocess.run(argv, cwd=KIT, capture_output=True, text=True, timeout=GRADE_TIMEOUT)
                if not results.exists():
                    self.fail(f"grade.py wrote no results.json (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
                tests = {t["name"]: t for t in json.loads(results.read_text())["tests"]}
            self.graded[key] = (done.returncode, done.stdout, tests)
        status, table, tests = self.graded[key]
        self.assertNotEqual(status, 77, "the harness found no CUDA device although nvidia-smi lists one")
        return status, table, tests

    @staticmethod
    def lost(tests, labs) -> list:
        return [f"{n}: {t['score']}/{t['max_score']}: {t['output']}" for n, t in tests.items()
                if lab_of(n) in labs and t["score"] < t["max_score"]]

    def test_solutions_get_full_marks(self):
        status, table, tests = self.grade("solutions")
        self.assertEqual({lab_of(name) for name in tests}, set(LABS))
        self.assertEqual(self.lost(tests, [lab for lab in LABS if lab not in BONUS]), [], table)
        self.assertEqual(status, 0, table)  # a bonus lab does not decide the exit status

    def test_bonus_solutions_get_full_marks(self):
        status, table, tests = self.grade("solutions")
        missing = [lab for lab in BONUS if not (KIT / "solutions" / lab / SOURCES[lab]).is_file()]
        for lab in missing:  # reported as missing, scoring 0
            for name, test in tests.items():
                if lab_of(name) == lab:
                    self.assertEqual(test["score"], 0, f"{name}\n{table}")
                    self.assertIn("missing file", test["output"], f"{name}\n{table}")
        self.assertEqual(self.lost(tests, [lab for lab in BONUS if lab not in missing]), [], table)
        if missing:
            self.skipTest(f"no solution yet for {', '.join(missing)} "
                          f"({', '.join(f'solutions/{lab}/{SOURCES[lab]}' for lab in missing)} does not exist)")

    def test_blank_labs_score_no_correctness_points(self):
        """The skeletons derived from solutions/ (labs/ may hold a student's work)."""
        status, table, tests = self.grade(derive(Path(self.wrong_root.name) / "skeletons"))
        self.assertEqual(status, 1, table)
        self.assertEqual({lab_of(name) for name in tests}, set(LABS))
        for name, test in tests.items():
            if "missing file" in test["output"] and lab_of(name) in BONUS:
                continue  # labs/08-single-pass not written yet
            self.assertEqual(test["score"], 0, f"{name}: {test['output']}\n{table}")
            for sign in BROKEN_SIGNS:
                self.assertNotIn(sign, test["output"], f"{name}\n{table}")
            if name.endswith(STATIC_CHECKS):
                self.assertEqual(test["status"], "passed", f"{name}: {test['output']}\n{table}")
            elif not name.endswith((PERFORMANCE, SANITIZERS)):
                self.assertRegex(test["output"], WRONG_ANSWER, f"{name}\n{table}")

    def assert_known_wrong(self, name, message=None):
        """The known-wrong submission name loses the row and says the verdict that mutations.toml gives it (its
        `row` and `verdict`: written there once, for the simulator's tests too), and message if given (a regular
        expression for what only a GPU run says in more detail)."""
        m = mutations()[name]
        tests = self.assert_wrong(self.wrong(name), m["lab"], m["row"], re.escape(m["verdict"]))
        if message:
            self.assertRegex(tests[f"{m['lab']}: {m['row']}"]["output"], message)
        return tests

    def assert_wrong(self, submission, lab, group, message):
        """Grading submission's lab loses group (0 points, its output matching message) and performance."""
        status, table, tests = self.grade(submission, lab)
        self.assertEqual(status, 1, table)
        failed = tests[f"{lab}: {group}"]
        self.assertEqual(failed["score"], 0, table)
        self.assertRegex(failed["output"], message, table)
        self.assertEqual(tests[f"{lab}: {PERFORMANCE}"]["score"], 0, table)
        for name, test in tests.items():
            for sign in BROKEN_SIGNS:
                self.assertNotIn(sign, test["output"], f"{name}\n{table}")
        return tests

    def test_dropping_the_last_element_fails(self):
        self.assert_known_wrong("drop-one")

    def test_counting_an_element_twice_fails(self):
        self.assert_known_wrong("double-count")

    def test_unstable_compaction_fails(self):
        self.assert_known_wrong("unstable", r"element \d+: got -?\d+, expected -?\d+ .*the kept elements must stay in "
                                            r"input order")

    def test_writing_past_the_output_fails(self):
        tests = self.assert_known_wrong("overflow-write", r"wrote past the end of the output: element \d+ was written")
        self.assertIn("wrote past the end", tests["07-compact: datasets"]["output"])

    def test_scribbling_the_input_fails(self):
        """tools/instructor/variants/scribbles-input: right sums, but d_in zeroed; labs 02-05 run with --input-const."""
        tests = self.assert_known_wrong("scribbles-input", r"the input was modified: element \d+ is now 0, was")
        self.assertIn("the input was modified", tests["03-sequential: exact integer data"]["output"])

    def test_a_sum_kept_from_an_earlier_call_fails(self):
        """tools/instructor/variants/cached-sum replays its last sum when called again on the same buffers and size. One
        runner program runs a lab's cases one after another, so two dataset cases of the same size (n = 1) already meet
        it (H100: "datasets/reduce/0002-n1-negative: wrong sum"); where they would not, the harness changes the input
        before every timed run and the benchmark's sums are stale. Either way the lab loses points and performance
        scores 0."""
        lab = "05-coarsened"
        status, table, tests = self.grade(self.wrong("cached-sum"), lab)
        self.assertEqual(status, 1, table)
        perf = tests[f"{lab}: {PERFORMANCE}"]
        self.assertEqual(perf["score"], 0, table)
        failed = [t for n, t in tests.items() if t["score"] < t["max_score"] and n != f"{lab}: {PERFORMANCE}"]
        if failed:
            self.assertRegex(failed[0]["output"], r"wrong sum: got ", table)
        else:
            self.assertRegex(perf["output"], r"\d+ of \d+ timed runs gave a wrong sum", table)

    def test_missing_barrier_loses_points_when_the_race_shows(self):
        """The race of tools/instructor/variants/no-barrier may or may not show in a sum on a given run and GPU;
        racecheck sees it either way, and a hazard takes the points of the groups that passed (HAZARD, labs.toml's
        hazard_cost): the submission loses points, each lost group naming a wrong element or the race; the test
        skips only when neither happened (no wrong sum and compute-sanitizer not installed)."""
        status, table, tests = self.grade(self.wrong("no-barrier"), "06-scan")
        failed = {n: t for n, t in tests.items() if n != f"06-scan: {PERFORMANCE}" and t["score"] < t["max_score"]}
        if not failed:
            self.skipTest("the Kogge-Stone race of tools/instructor/variants/no-barrier did not show this time: "
                          "every case passed")
        self.assertEqual(status, 1, table)
        for name, test in failed.items():
            self.assertRegex(test["output"], r"element \d+: got .*kogge-stone|kogge-stone.*element \d+: got|"
                                             r"HAZARD: see the sanitizers row \(scan\.cu:\d+", table)
        self.assertEqual(tests[f"06-scan: {PERFORMANCE}"]["score"], 0, table)
        self.assertLess(sum(t["score"] for t in tests.values()), sum(t["max_score"] for t in tests.values()), table)


    def test_static_checks_zero_the_lab(self):
        """Each of these compiles and would pass on the GPU, but the static checks find what it uses: 0 points on
        every test, and none run."""
        for (folder, lab), expected in WRONG.items():  # the messages the CPU tests expect of the same objects
            with self.subTest(folder):
                status, table, tests = self.grade(self.wrong(folder), lab)
                self.assertEqual(status, 1, table)
                static = tests[f"{lab}: {STATIC_CHECKS}"]
                self.assertEqual(static["status"], "failed", table)
                for pattern in expected:  # one finding a line after "- " (CUB's headers bring findings of their own)
                    self.assertRegex(static["output"], re.compile(pattern.replace("^", "^- ", 1), re.M), table)
                for name, test in tests.items():
                    self.assertEqual(test["score"], 0, f"{name}\n{table}")
                    if name != f"{lab}: {STATIC_CHECKS}":
                        self.assertIn("not run: the static checks found what reduce.cu may not use", test["output"],
                                      f"{name}\n{table}")

    def test_compile_error_is_reported(self):
        status, table, tests = self.grade(self.wrong("compile-error"), "02-shared-strided")
        self.assertEqual(status, 1, table)
        self.assertTrue(all(t["score"] == 0 for t in tests.values()), table)
        first = tests["02-shared-strided: datasets"]["output"]
        self.assertTrue(first.startswith("reduce.cu does not compile: every test of this lab scores 0"), table)
        self.assertRegex(first, r'reduce.cu\(\d+\): error: expected a ";"', table)

    def test_infinite_loop_times_out_and_grading_goes_on(self):
        """tools/instructor/variants/infinite-loop (lab 03) beside the lab 04 solution, with a 20 s timeout per run: lab
        03's first run is killed at the timeout and reported as such, its other tests are not run, and lab 04 is then
        graded as usual (the labs missing from this submission cost nothing)."""
        timeout = 20
        with tempfile.TemporaryDirectory() as tmp:
            sub = Path(tmp) / "sub"
            shutil.copytree(self.wrong("infinite-loop") / "03-sequential", sub / "03-sequential")
            shutil.copytree(KIT / "solutions" / "04-unrolled", sub / "04-unrolled",
                            ignore=shutil.ignore_patterns("build"))
            start = time.monotonic()
            status, table, tests = self.grade(sub, None, "--timeout", str(timeout))
            seconds = time.monotonic() - start
        self.assertEqual(status, 1, table)
        self.assertEqual(tests[f"03-sequential: {STATIC_CHECKS}"]["status"], "passed", table)
        hung = tests["03-sequential: datasets"]
        self.assertEqual(hung["score"], 0, table)
        self.assertRegex(hung["output"], rf"timed out after {timeout} s .*the kernel may loop forever", table)
        for group in ("edge sizes", "exact integer data", "large sizes", PERFORMANCE):
            self.assertIn("not run: an earlier test of this lab timed out", tests[f"03-sequential: {group}"]["output"],
                          table)
        lost = [n for n in self.lost(tests, ["04-unrolled"]) if not n.startswith(f"04-unrolled: {PERFORMANCE}")]
        self.assertEqual(lost, [], table)  # lab 04 is graded after the hang: every correctness group passes
        self.assertIn("missing file", tests["05-coarsened: datasets"]["output"])
        self.assertLess(seconds, GRADE_TIMEOUT, table)

    def sanitizers_row(self, submission, lab):
        """(exit status, table, tests, the sanitizers row) of grading submission's lab; skips without the tool."""
        status, table, tests = self.grade(submission, lab)
        row = tests[f"{lab}: {SANITIZERS}"]
        if "compute-sanitizer is not installed" in row["output"]:
            self.skipTest("compute-sanitizer is not installed here (it comes with the CUDA toolkit)")
        return status, table, tests, row

    def test_sanitizers_name_the_lines_of_races_that_give_right_sums(self):
        """racecheck reports a race whether or not it shows in the sums: Harris's volatile last warp (lab 04; warnings
        between lanes of one warp) and a Kogge-Stone step without its barrier (lab 06; errors between warps)."""
        cases = {"volatile-last-warp": ("04-unrolled", r"racecheck: reduce\.cu:\d+.*between lanes of one warp",
                                        r"__syncwarp\(\)"),
                 "no-barrier": ("06-scan", r"racecheck: scan\.cu:\d+.*shared-memory race between threads",
                                r"__syncthreads\(\)")}
        for folder, (lab, message, advice) in cases.items():
            with self.subTest(folder):
                status, table, tests, row = self.sanitizers_row(self.wrong(folder), lab)
                self.assertEqual(status, 1, table)
                self.assertEqual(row["status"], "failed", table)
                self.assertRegex(row["output"], message, table)
                self.assertRegex(row["output"], advice, table)
                self.assertEqual(tests[f"{lab}: {PERFORMANCE}"]["score"], 0, table)
                # a hazard takes every correctness point (labs.toml's hazard_cost = 1): HAZARD where the sums were right
                groups = {n: t for n, t in tests.items() if not n.endswith((PERFORMANCE, STATIC_CHECKS, SANITIZERS))}
                self.assertTrue(groups and all(t["score"] == 0 for t in groups.values()), table)

    def test_memcheck_names_the_line_of_a_store_past_a_shared_array(self):
        status, table, tests, row = self.sanitizers_row(self.wrong("small-shared-array"), "04-unrolled")
        self.assertEqual(status, 1, table)
        self.assertEqual(row["status"], "failed", table)
        self.assertRegex(row["output"], r"memcheck: reduce\.cu:\d+: Invalid __shared__ write of size 4 bytes", table)
        self.assertEqual(tests[f"04-unrolled: {PERFORMANCE}"]["score"], 0, table)

    def test_writing_past_the_scan_output_loses_points(self):
        """tools/instructor/variants/out-of-bounds-write: the harness's guard after the output catches the writes (a
        write outside any allocation would be a CUDA error instead): not full marks either way."""
        status, table, tests = self.grade(self.wrong("out-of-bounds-write"), "06-scan")
        self.assertEqual(status, 1, table)
        self.assertEqual(tests[f"06-scan: {STATIC_CHECKS}"]["status"], "passed", table)
        edge = tests["06-scan: edge sizes"]
        self.assertEqual(edge["score"], 0, table)
        self.assertRegex(edge["output"], r"wrote past the end of the output|CUDA error|element \d+: got", table)
        self.assertEqual(tests[f"06-scan: {PERFORMANCE}"]["score"], 0, table)
        self.assertLess(sum(t["score"] for t in tests.values()), sum(t["max_score"] for t in tests.values()), table)



class ScheduleOnGPU(unittest.TestCase):
    """The checker's --schedule is the simulator's (docs/DESIGN.md, --runs-fd): a GPU's device program refuses it,
    saying so, and the list fails (no run passes under a schedule it did not follow); without it, the CASE message
    before each list of --runs-fd changes nothing on a GPU."""

    def test_a_gpu_refuses_a_schedule(self):
        from grader.compile.build import build_harness, build_lab
        self.assertTrue(build_harness(KIT, "reduce").ok)
        with tempfile.TemporaryDirectory() as tmp:
            built = build_lab(KIT, "reduce", KIT / "solutions" / "03-sequential" / "reduce.cu", Path(tmp) / "b")
            self.assertTrue(built.ok, built.message)
            plain = subprocess.run([str(built.program), "--n", "1000", "--seed", "1"], capture_output=True, text=True,
                                   timeout=300, cwd=KIT)
            self.assertEqual(plain.returncode, 0, plain.stdout + plain.stderr)
            done = subprocess.run([str(built.program), "--n", "1000", "--seed", "1", "--schedule", "random:5"],
                                  capture_output=True, text=True, timeout=300, cwd=KIT)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("a schedule is the simulator's", done.stdout + done.stderr)

if __name__ == "__main__":
    unittest.main()
