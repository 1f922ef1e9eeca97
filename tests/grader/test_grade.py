"""grader/grade.py and grader/report/report.py: whole grading runs over fake harness programs (the build and the static
checks are hooks; tests/grader/test_static_check.py runs the real ones)."""
import contextlib
import io
import json
import tempfile
import time
import unittest
from pathlib import Path

from grader.compile.build import BuildResult, build_lab
from grader.config import load_config
from grader.grade import DEFAULT_TIMEOUT, Grader, main
from grader.patterns import PATTERNS
from grader.report.report import format_table, gradescope_results
from grader.run.run import run_harness
from grader.sanitize.runs import Outcome as SanitizeOutcome
from grader.score.score import STATIC_CHECKS
from grader.compile.static_check import Finding, Verdict
from tests.grader.fakes import PASS, SMALL_TOML, fake_program, make_submission, write_file

REAL_LABS = [lab.name for lab in load_config().labs]  # every lab of grader/labs.toml

# SMALL_TOML plus a bonus lab that checks one scan algorithm, its speed measured as a fraction of CUB's.
BONUS_TOML = SMALL_TOML + """
[labs.03-bonus]
pattern = "scan"
source = "scan.cu"
suite = "s"
bonus = true
args = ["--algorithms", "brent-kung"]

[labs.03-bonus.performance]
points = 30
bench = "2^10"
yardstick = "cub"
lower = 0.25
full = 0.5
"""

MEMORY = ["--host-memory-mib", "8192"]  # every run: labs.toml [limits] host_memory_mib (its default)


def harness_ok(kit, pattern, timeout=None, harness_build=None):
    return BuildResult(True)


def rows(report, lab) -> list:
    """The graded tests of lab in report, without its static checks' row (which comes first)."""
    found = [r for r in report.results if r.lab == lab]
    assert found and found[0].name == STATIC_CHECKS, [r.name for r in found]
    return found[1:]


class GradingRun(unittest.TestCase):
    """A temp kit (for datasets), a submission, a build folder, and fake programs standing in for built labs."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)
        self.kit = self.dir / "kit"
        self.kit.mkdir()
        self.calls = []  # (lab, args) of every run
        self.verdicts = {}  # lab -> the static_check.Verdict (or the exception) its check hook gives; default: clean
        self.checked = []  # (lab, pattern) of every static check

    def add_datasets(self, *names, pattern="reduce", expected=True):
        for name in names:
            write_file(self.kit, f"datasets/{pattern}/{name}/input.raw", "x")
            if expected:
                write_file(self.kit, f"datasets/{pattern}/{name}/expected.raw", "y")

    def fake(self, *bodies, name="fake_lab"):
        return fake_program(self.dir, *bodies, name=name)

    def build_hook(self, programs, config):
        """A build hook: programs maps a lab name to a fake program, or to a BuildResult for a failed build; a
        lab's file missing from the submission goes to the real build_lab, which reports it before compiling. A
        fake program's object is folder/student.o (never made: check_hook stands in for the static checks)."""
        sources = {lab.name: (lab.pattern, lab.source) for lab in config.labs}

        def build(kit, pattern, source, folder, timeout=None, harness_build=None):
            lab = Path(folder).name
            self.assertEqual((pattern, Path(source)), (sources[lab][0], self.submission / lab / sources[lab][1]))
            if not Path(source).is_file():
                return build_lab(kit, pattern, source, folder)
            program = programs[lab]
            if isinstance(program, BuildResult):
                return program
            return BuildResult(True, program=program, object=Path(folder) / "student.o")
        return build

    def check_hook(self, obj, pattern):
        lab = Path(obj).parent.name
        self.checked.append((lab, pattern))
        verdict = self.verdicts.get(lab, Verdict())
        if isinstance(verdict, Exception):
            raise verdict
        return verdict

    def run_hook(self, program, args, timeout, workdir, cwd, source):
        self.calls.append((Path(workdir).parts[-3], list(args)))
        self.sources.add(source)
        return run_harness(program, args, timeout=timeout, workdir=workdir, cwd=cwd, source=source)

    def grader(self, config, programs, labs=None, **kw):
        labs = labs or [lab.name for lab in config.labs]
        files = {lab.name: lab.source for lab in config.labs}
        self.submission = make_submission(self.dir / "sub", [(lab, files[lab]) for lab in labs])
        self.sources = set()
        grader = Grader(config, self.submission, kit=self.kit, build_dir=self.dir / "build", seed=12345,
                        build=self.build_hook(programs, config), build_harness=harness_ok, run=self.run_hook,
                        check=self.check_hook, **kw)
        # compute-sanitizer never runs on the fakes: as if it were not installed (tests/grader/test_sanitize.py)
        grader.sanitize = lambda program, runs, **kw: SanitizeOutcome(None)
        return grader

    def small_config(self):
        return load_config(write_file(self.dir, "labs.toml", SMALL_TOML))


class RealConfig(GradingRun):
    def test_full_marks(self):
        self.add_datasets("small", "tiny")
        self.add_datasets("ones", pattern="scan")
        self.add_datasets("halves", pattern="compact", expected=False)
        config = load_config()
        for pattern in {lab.pattern for lab in config.labs} - {"reduce", "scan", "compact"}:  # the other patterns'
            group = next(g for g in PATTERNS[pattern].suite["groups"] if "datasets" in g)
            self.add_datasets("one", pattern=pattern, expected=group.get("expected", True))
        program = self.fake(PASS)
        report = self.grader(config, {lab: program for lab in REAL_LABS}).grade(list(config.labs))
        self.assertTrue(report.full_marks)
        self.assertEqual(report.max_score, sum(lab.max_score for lab in config.labs if not lab.bonus))
        bonus = [lab for lab in config.labs if lab.bonus]
        self.assertEqual(report.score, report.max_score + sum(lab.max_score for lab in bonus))  # bonus points on top
        self.assertEqual(report.bonus_labs(), [lab.name for lab in bonus])
        self.assertIn("08-single-pass", report.bonus_labs())
        self.assertEqual(report.device, "NVIDIA Fake GPU")
        self.assertEqual(self.sources, {lab.source for lab in config.labs})
        self.assertEqual(self.checked, [(lab.name, lab.pattern) for lab in config.labs])
        static = [r for r in report.results if r.name == STATIC_CHECKS]
        self.assertEqual([(r.lab, r.status, r.max_score) for r in static], [(lab, "pass", 0) for lab in REAL_LABS])
        perf = {r.lab: r for r in report.results if r.name == "performance"}
        self.assertTrue(perf["03-sequential"].summary.startswith("100.00x baseline"), perf["03-sequential"].summary)
        for lab in (x.name for x in config.labs if x.performance.yardstick == "cub"):
            self.assertTrue(perf[lab].summary.startswith("100.00x of CUB"), perf[lab].summary)
        runs = {lab: [args for name, args in self.calls if name == lab] for lab in REAL_LABS}
        self.assertEqual(runs["06-scan"], [
            ["--dataset", "datasets/scan/ones/input.raw", "--expected", "datasets/scan/ones/expected.raw", *MEMORY],
            ["--n", "1,2,31,32,33,511,512,513,1023,1024,1025,4095,4096,4097,65535,65537,1048577", "--seed", "12345",
             *MEMORY],
            ["--n", "2^24+3,2^27+5", "--seed", "12345", *MEMORY],
            ["--bench", "2^26", "--seed", "12345", *MEMORY]])
        self.assertEqual(runs["07-compact"][0], ["--dataset", "datasets/compact/halves/input.raw", *MEMORY])
        self.assertEqual(runs["07-compact"][1], ["--n", "1,2,31,32,33,1023,1024,1025,4095,4097,65537,1048577",
                                                 "--seed", "12345", *MEMORY])
        self.assertEqual(runs["08-single-pass"], [  # the lab's arguments go to each correctness run, not to --bench
            ["--dataset", "datasets/scan/ones/input.raw", "--expected", "datasets/scan/ones/expected.raw",
             "--algorithms", "brent-kung", *MEMORY],
            [*runs["06-scan"][1][:2], "--algorithms", "brent-kung", "--seed", "12345", *MEMORY],
            [*runs["06-scan"][2][:2], "--algorithms", "brent-kung", "--seed", "12345", *MEMORY],
            ["--bench", "2^26", "--seed", "12345", *MEMORY]])
        table = format_table(report)
        self.assertRegex(table, r"\n08-single-pass +100 / 100 \(bonus\)\n")
        self.assertIn("Bonus: 08-single-pass is a bonus lab: its score adds to the total, its 100 points are not in "
                      "the total's maximum", table)
        extra = sum(lab.max_score for lab in bonus)
        self.assertTrue(table.rstrip().endswith(f"Total {report.max_score + extra:g} / {report.max_score:g} "
                                                f"({extra:g} of them bonus points)"), table)
        results = gradescope_results(report)
        tests = {t["name"]: t for t in results["tests"]}
        self.assertEqual(tests["08-single-pass (bonus): performance"]["max_score"], 50)
        self.assertEqual(tests["07-compact: performance"]["max_score"], 50)
        self.assertEqual((results["score"], results["extra_data"]["max_score"]),
                         (report.max_score + extra, report.max_score))
        self.assertEqual(results["extra_data"]["bonus_max_score"], 100)
        lab1 = runs["01-global-strided"]
        self.assertEqual(lab1[0], ["--dataset", "datasets/reduce/small/input.raw",
                                   "--expected", "datasets/reduce/small/expected.raw", *MEMORY])
        self.assertEqual(lab1[1][0], "--dataset")
        self.assertEqual(lab1[2][-4:], ["--seed", "12345", *MEMORY])  # generated data gets the run's seed
        self.assertEqual(lab1[-1], ["--bench", "2^26", "--seed", "12345", *MEMORY])
        self.assertEqual(len(lab1), 2 + 1 + 1 + 2 + 1)

    def test_no_datasets_is_an_error_not_a_pass(self):
        config = load_config()
        report = self.grader(config, {"03-sequential": self.fake(PASS)}, ["03-sequential"]).grade(
            config.select("03"))
        datasets, *groups, sanitizers, perf = rows(report, "03-sequential")
        self.assertEqual((datasets.score, datasets.status), (0, "ERROR"))
        self.assertIn("no datasets found in datasets/reduce", datasets.summary)
        self.assertEqual((sanitizers.name, sanitizers.status), ("sanitizers", "not run"))
        self.assertEqual((perf.score, perf.status), (0, "not run"))
        self.assertEqual([r.status for r in groups], ["pass"] * 3)

    def test_missing_lab_file_is_reported(self):
        """A submission without lab 08's scan.cu (solutions/ before lab 08 is written) scores 0 there, saying so."""
        self.add_datasets("ones", pattern="scan")
        config = load_config()
        grader = self.grader(config, {"06-scan": self.fake(PASS)}, ["06-scan"])
        report = grader.grade(config.select("06") + config.select("08"))
        bonus = [r for r in report.results if r.lab == "08-single-pass"]
        self.assertEqual([(r.score, r.bonus) for r in bonus], [(0, True)] * 6)  # sanitizers among them
        self.assertEqual((bonus[0].name, bonus[0].status), (STATIC_CHECKS, "not run"))
        self.assertEqual(bonus[1].status, "NO BUILD")
        self.assertIn(f"missing file: {self.submission / '08-single-pass' / 'scan.cu'}", bonus[1].summary)
        self.assertTrue(all("missing file" in r.summary for r in bonus))
        self.assertTrue(report.full_marks)  # the bonus lab costs nothing
        self.assertEqual((report.score, report.max_score), (100, 100))

    def test_compact_datasets_need_only_the_input(self):
        self.add_datasets("halves", pattern="compact", expected=False)
        write_file(self.kit, "datasets/compact/empty/README", "no input here")
        config = load_config()
        report = self.grader(config, {"07-compact": self.fake(PASS)}, ["07-compact"]).grade(config.select("07"))
        datasets = rows(report, "07-compact")[0]
        self.assertEqual((datasets.score, datasets.status), (0, "ERROR"))
        self.assertEqual(datasets.summary, "datasets/compact/empty lacks input.raw (a kit problem)")


class SmallConfig(GradingRun):
    def test_uncalibrated_thresholds_are_said_under_the_table(self):
        """A lab timed on a GPU model its thresholds were not calibrated on gets a note saying so and how to
        calibrate; a calibrated one gets none."""
        toml = SMALL_TOML + '[labs.02-second.performance.gpus."NVIDIA Fake GPU"]\nlower = 1.0\nfull = 2.0\n'
        config = load_config(write_file(self.dir, "labs.toml", toml))
        program = self.fake(PASS)
        report = self.grader(config, {"01-first": program, "02-second": program}).grade(list(config.labs))
        notes = [n for n in report.notes if "not calibrated" in n]
        self.assertEqual(len(notes), 1, report.notes)
        self.assertIn("01-first: its performance thresholds are not calibrated on NVIDIA Fake GPU", notes[0])
        self.assertIn("full marks at 3x baseline, none at 1x baseline", notes[0])
        self.assertIn("make calibrate LAB=01", notes[0])

    def test_timeout_is_reported_and_grading_goes_on(self):
        config = self.small_config()
        hang = self.fake("""
            if "integer" in ARGS:
                emit(CASES[0]); time.sleep(60)
            """, PASS, name="hang")
        hang_first = self.fake("""
            if "uniform" in ARGS:
                time.sleep(60)
            """, PASS, name="hang_first")
        programs = {"01-first": hang, "02-second": hang_first, "03-third": self.fake(PASS)}
        config = load_config(write_file(self.dir, "labs.toml", SMALL_TOML + SMALL_TOML[SMALL_TOML.index(
            "[labs.02-second]"):].replace("02-second", "03-third")))
        grader = self.grader(config, programs, timeout=1.0)
        start = time.monotonic()
        report = grader.grade(list(config.labs))
        self.assertLess(time.monotonic() - start, 15)
        first = {r.name: r for r in rows(report, "01-first")}
        self.assertEqual(first["small"].status, "pass")
        self.assertEqual((first["exact"].status, first["exact"].score), ("TIMEOUT", 0))
        self.assertIn("n=6 integer: timed out after 1 s", first["exact"].summary)
        self.assertIn("deadlock at a barrier", first["exact"].summary)
        self.assertEqual(first["performance"].status, "not run")
        second = rows(report, "02-second")
        self.assertEqual([r.status for r in second], ["TIMEOUT", "not run", "not run"])
        self.assertIn("n=1 uniform: timed out", second[0].summary)
        self.assertIn("an earlier test of this lab timed out", second[1].summary)
        third = rows(report, "03-third")
        self.assertEqual([r.status for r in third], ["pass", "pass", "pass"])
        self.assertEqual(report.score, 10 + 0 + 60)

    def test_crash_and_cuda_error(self):
        config = self.small_config()
        crash = self.fake("if 'signs' in ARGS: os.kill(os.getpid(), signal.SIGSEGV)", PASS, name="crash")
        cuda = self.fake("""
            if "uniform" in ARGS:
                emit(CASES[0], "error", kind="error", message="CUDA error: an illegal memory access was encountered")
                sys.exit(3)
            """, PASS, name="cuda")
        report = self.grader(config, {"01-first": crash, "02-second": cuda}).grade(list(config.labs))
        by = {r.title: r for r in report.results}
        self.assertEqual(by["01-first: exact"].status, "CRASH")
        self.assertIn("n=7 signs: crashed with signal SIGSEGV", by["01-first: exact"].summary)
        self.assertEqual(by["02-second: small"].status, "CUDA ERROR")
        self.assertIn("n=1 uniform: CUDA error: an illegal memory access", by["02-second: small"].summary)
        self.assertEqual(by["02-second: exact"].status, "pass")
        # a crash may be the host memory limit: the message says where it is; an illegal address is not memory's
        self.assertIn("(the process that runs reduce.cu may take at most 8192 MiB of host memory, the CUDA runtime's "
                      "and the harness's included: past it malloc returns NULL and new throws; labs.toml [limits])",
                      by["01-first: exact"].detail + by["01-first: exact"].summary)
        self.assertNotIn("host memory", by["02-second: small"].summary + by["02-second: small"].detail)

    def test_performance_partial_credit(self):
        config = self.small_config()
        report = self.grader(config, {"01-first": self.fake("if '--bench' in ARGS: bench(2.0)\nall_pass()")},
                             ["01-first"]).grade(config.select("01"))
        perf = report.results[-1]
        self.assertEqual((perf.score, perf.status), (15.0, "partial"))
        self.assertEqual(report.score, 45.0)

    def test_wrong_sum_in_bench(self):
        config = self.small_config()
        program = self.fake("if '--bench' in ARGS: bench(9.0, 'fail', message='2 of 12 timed runs gave a wrong sum')\n"
                            "all_pass()")
        report = self.grader(config, {"01-first": program}, ["01-first"]).grade(config.select("01"))
        perf = report.results[-1]
        self.assertEqual((perf.score, perf.status), (0, "FAIL"))
        self.assertIn("2 of 12 timed runs gave a wrong sum", perf.summary)

    def test_compile_error_costs_the_lab_only(self):
        config = self.small_config()
        broken = BuildResult(False, message="reduce.cu does not compile:\nreduce.cu(3): error: expected a \";\"")
        report = self.grader(config, {"01-first": broken, "02-second": self.fake(PASS)}).grade(list(config.labs))
        first = rows(report, "01-first")
        self.assertEqual([r.score for r in first], [0, 0, 0])
        self.assertEqual(first[0].status, "NO BUILD")
        self.assertIn('reduce.cu(3): error: expected a ";"', first[0].detail)
        self.assertTrue(all("does not compile" in r.summary for r in first))
        self.assertEqual(report.score, 60)

    def test_reports(self):
        config = self.small_config()
        failing = self.fake("""
            if "integer" in ARGS:
                emit(CASES[0], "fail", message="wrong sum: got 4, expected 5 (off by -1, tolerance 0)"); sys.exit(1)
            """, PASS, name="failing")
        report = self.grader(config, {"01-first": failing, "02-second": self.fake(PASS)}).grade(list(config.labs))
        table = format_table(report)
        self.assertIn("Grading ", table)
        self.assertIn("seed 12345", table)
        self.assertRegex(table, r"01-first +10 / 60")
        self.assertRegex(table, r"  exact +0 / 20 +FAIL +n=5 integer: wrong sum: got 4, expected 5")
        self.assertIn("to reproduce, from the kit's root: make -C labs/01-first && labs/01-first/build/failing "
                      "--data integer --n 5,6 --seed 12345", table)
        self.assertRegex(table, r"  performance +0 / 30 +not run +every correctness test must pass first")
        self.assertTrue(table.rstrip().endswith("Total 70 / 120"))

        results = gradescope_results(report)
        json.dumps(results)  # serializable
        self.assertEqual(results["score"], 70)
        self.assertIsInstance(results["execution_time"], (int, float))
        self.assertIsInstance(results["output"], str)
        self.assertEqual(len(results["tests"]), 8)  # two labs: static checks, two groups and performance each
        for test in results["tests"]:
            self.assertEqual(set(test), {"name", "score", "max_score", "status", "output", "visibility",
                                         "extra_data"})
            self.assertEqual(set(test["extra_data"]), {"lab", "test", "status", "bonus"})
            self.assertEqual(test["extra_data"]["lab"], test["name"].split(":")[0])
            self.assertIsInstance(test["name"], str)
            self.assertIsInstance(test["score"], (int, float))
            self.assertIsInstance(test["max_score"], (int, float))
            self.assertLessEqual(test["score"], test["max_score"])
            self.assertIn(test["status"], ("passed", "failed"))
            self.assertEqual(test["visibility"], "visible")
        self.assertEqual(results["tests"][0]["name"], "01-first: static checks")
        self.assertEqual((results["tests"][0]["status"], results["tests"][0]["max_score"]), ("passed", 0))
        self.assertEqual(results["tests"][2]["name"], "01-first: exact")
        self.assertIn("wrong sum: got 4", results["tests"][2]["output"])
        self.assertEqual(sum(t["score"] for t in results["tests"]), results["score"])
        self.assertEqual(results["extra_data"]["max_score"], 120)

    def test_bonus_lab(self):
        config = load_config(write_file(self.dir, "labs.toml", BONUS_TOML))
        slow = self.fake("if '--bench' in ARGS: bench(0.375)\nall_pass()", name="slow")
        report = self.grader(config, {"01-first": self.fake(PASS), "02-second": self.fake(PASS),
                                      "03-bonus": slow}).grade(list(config.labs))
        bonus = rows(report, "03-bonus")
        self.assertTrue(all(r.bonus for r in report.results if r.lab == "03-bonus"))
        self.assertEqual([r.score for r in bonus], [10, 20, 15])
        self.assertIn("0.38x of CUB (full marks at 0.50x of CUB", bonus[-1].summary)
        self.assertEqual(self.calls[-2][1], ["--data", "signs", "--n", "7", "--algorithms", "brent-kung",
                                             "--seed", "12345", *MEMORY])
        self.assertEqual((report.score, report.max_score, report.bonus_max_score), (165, 120, 60))
        self.assertTrue(report.full_marks)
        table = format_table(report)
        self.assertRegex(table, r"\n03-bonus +45 / 60 \(bonus\)\n")
        self.assertRegex(table, r"  performance +15 / 30 +partial +0.38x of CUB")
        self.assertTrue(table.rstrip().endswith("Total 165 / 120 (45 of them bonus points)"))
        results = gradescope_results(report)
        self.assertEqual([t["name"] for t in results["tests"][-3:]],
                         ["03-bonus (bonus): small", "03-bonus (bonus): exact", "03-bonus (bonus): performance"])
        self.assertEqual([t["max_score"] for t in results["tests"][-3:]], [10, 20, 30])
        self.assertEqual((results["score"], results["extra_data"]["max_score"]), (165, 120))
        self.assertIn("03-bonus is a bonus lab", results["output"])
        self.assertTrue(results["output"].startswith("Total 165 / 120 (45 of them bonus points)\n"))


FOPEN = Finding("files", "calls fopen, fread: the lab's code may not open, read or write files or file descriptors")
CTOR = Finding("startup", "runs early() before main: a static constructor")


class StaticChecks(GradingRun):
    def test_findings_score_0_and_nothing_runs(self):
        config = self.small_config()
        self.verdicts["01-first"] = Verdict([FOPEN, CTOR])
        report = self.grader(config, {"01-first": self.fake(PASS), "02-second": self.fake(PASS)}).grade(
            list(config.labs))
        self.assertEqual(self.checked, [("01-first", "reduce"), ("02-second", "reduce")])
        self.assertEqual({lab for lab, _ in self.calls}, {"02-second"})  # nothing of lab 01 ran
        static, *rest = [r for r in report.results if r.lab == "01-first"]
        self.assertEqual((static.name, static.status, static.score, static.max_score),
                         (STATIC_CHECKS, "FORBIDDEN", 0, 0))
        self.assertFalse(static.full)
        self.assertEqual(static.summary, FOPEN.message + " (and 1 more finding below)")
        self.assertIn(f"- {FOPEN.message}\n- {CTOR.message}\n", static.detail)
        self.assertEqual([(r.score, r.status) for r in rest], [(0, "not run")] * 3)
        for r in rest:
            self.assertEqual(r.summary, "not run: the static checks found what reduce.cu may not use (see static "
                                        "checks)")
        self.assertEqual([r.status for r in report.results if r.lab == "02-second"], ["pass"] * 4)
        self.assertEqual(report.score, 60)
        self.assertFalse(report.full_marks)

        table = format_table(report)
        self.assertRegex(table, r"\n01-first +0 / 60\n  static checks +0 / 0 +FORBIDDEN +calls fopen, fread: ")
        self.assertIn(f"      - {CTOR.message}\n", table)
        self.assertRegex(table, r"  performance +0 / 30 +not run +the static checks found what reduce.cu may not use")
        self.assertRegex(table, r"\n02-second +60 / 60\n  static checks +0 / 0 +pass +nothing forbidden in compiled "
                                r"reduce.cu")
        results = gradescope_results(report)
        tests = {t["name"]: t for t in results["tests"]}
        self.assertEqual(tests["01-first: static checks"]["status"], "failed")
        self.assertIn(CTOR.message, tests["01-first: static checks"]["output"])
        self.assertEqual(tests["02-second: static checks"]["status"], "passed")
        self.assertEqual(results["extra_data"]["static_check_findings"],
                         {"01-first": [{"rule": "files", "message": FOPEN.message},
                                       {"rule": "startup", "message": CTOR.message}]})

    def test_findings_win_over_a_failed_link(self):
        """The link failed (a library the program is not linked with) but the object was made: the static checks
        name what was used, rather than the linker's undefined reference."""
        config = self.small_config()
        def link(lab):
            return BuildResult(False, message="reduce.cu does not compile:\nundefined reference to `cublasSgemm_v2'",
                               object=self.dir / "build" / lab / "student.o")
        self.verdicts["01-first"] = Verdict([Finding("libraries", "calls cublasSgemm_v2: no libraries")])
        report = self.grader(config, {"01-first": link("01-first"), "02-second": link("02-second")}).grade(
            list(config.labs))
        first = [r for r in report.results if r.lab == "01-first"]
        self.assertEqual([r.status for r in first], ["FORBIDDEN", "not run", "not run", "not run"])
        second = [r for r in report.results if r.lab == "02-second"]  # a clean object, so the link error shows
        self.assertEqual([r.status for r in second], ["pass", "NO BUILD", "not run", "not run"])
        self.assertIn("cublasSgemm_v2", second[1].detail)

    def test_no_object_no_check(self):
        config = self.small_config()
        broken = BuildResult(False, message="reduce.cu does not compile:\nreduce.cu(3): error: expected a \";\"")
        report = self.grader(config, {"01-first": broken, "02-second": self.fake(PASS)}).grade(list(config.labs))
        static = report.results[0]
        self.assertEqual((static.name, static.status, static.summary),
                         (STATIC_CHECKS, "not run", "not run: reduce.cu does not compile"))
        self.assertFalse(static.full)
        self.assertEqual(self.checked, [("02-second", "reduce")])
        self.assertIn("not run    reduce.cu does not compile", format_table(report))

    def test_findings_are_reported_without_a_gpu(self):
        config = self.small_config()
        self.verdicts["02-second"] = Verdict([FOPEN])
        no_gpu = self.fake("""
            emit("device", "no-device", kind="device", message="no CUDA device here")
            sys.exit(77)""")
        report = self.grader(config, {"01-first": no_gpu, "02-second": no_gpu}).grade(list(config.labs))
        self.assertTrue(report.no_device)
        self.assertEqual([r.status for r in report.results], ["pass", "not run", "not run", "not run",
                                                              "FORBIDDEN", "not run", "not run", "not run"])
        self.assertEqual({lab for lab, _ in self.calls}, {"01-first"})


class GpuLeftovers(unittest.TestCase):
    """check_gpu_released warns of the processes this grading left on the GPU, not of a concurrent grading's."""

    def test_descendants_and_orphans_are_ours_a_living_strangers_child_is_not(self):
        import os
        import subprocess
        from grader.run.process import left_by_us
        child = subprocess.Popen(["sleep", "30"])
        # a grandchild whose parent (a shell) is alive stands for another grading's runner; an orphan (the shell
        # gone, parent pid 1 or a subreaper) for a process left behind
        stranger = subprocess.Popen(["sh", "-c", "sleep 30 & echo $!; wait"], stdout=subprocess.PIPE, text=True,
                                    start_new_session=True)
        try:
            grandchild = int(stranger.stdout.readline())
            self.assertTrue(left_by_us(child.pid))
            self.assertTrue(left_by_us(grandchild))  # a descendant, through the shell
            self.assertFalse(left_by_us(os.getppid()))  # the test runner's parent: alive, not ours
            self.assertTrue(left_by_us("not a pid"))
            self.assertTrue(left_by_us(2 ** 22 + 12345))  # gone (or another namespace's): counted, not hidden
        finally:
            child.kill(), os.killpg(stranger.pid, 9), child.wait(), stranger.wait()


class SanitizersBesideCorrectness(GradingRun):
    """On a GPU, compute-sanitizer's runs go beside the correctness runs; the rows read as they would after them."""

    TOML = SMALL_TOML.replace("""[labs.01-first]""", """[suites.s.sanitizers]
points = 0
tools = ["memcheck"]
runs = [["--data", "integer", "--n", "33"]]

[labs.01-first]""")

    def grade_one(self, status: str):
        import threading
        from grader.run.run import Outcome as RunOutcome
        config = load_config(write_file(self.dir, "labs.toml", self.TOML))
        events, lock = [], threading.Lock()

        def run_many(program, runs, timeouts, workdir, cwd, source):
            with lock:
                events.append("correctness starts")
            time.sleep(0.4)
            with lock:
                events.append("correctness ends")
            return [RunOutcome(status, "" if status == "pass" else "did not finish within 20 s") for _ in runs]

        def sanitize(program, runs, **kw):
            with lock:
                events.append("sanitizers start")
            time.sleep(0.1)
            return SanitizeOutcome(None)

        grader = self.grader(config, {"01-first": self.fake(PASS)}, labs=["01-first"], run_many=run_many)
        grader.sanitize = sanitize
        grader.gpu_snapshot = lambda: {}
        report = grader.grade([lab for lab in config.labs if lab.name == "01-first"])
        return events, [(r.name, r.status, r.summary) for r in rows(report, "01-first")]

    def test_the_sanitizers_start_before_the_correctness_runs_end(self):
        events, got = self.grade_one("pass")
        self.assertLess(events.index("sanitizers start"), events.index("correctness ends"), events)
        self.assertEqual([n for n, _, _ in got], ["small", "exact", "sanitizers", "performance"])

    def test_a_hang_skips_the_sanitizers_row_as_before(self):
        events, got = self.grade_one("timeout")
        sanitizers = [g for g in got if g[0] == "sanitizers"][0]
        self.assertIn("an earlier test of this lab timed out", sanitizers[2])


class BuildsAhead(GradingRun):
    """Each lab builds and goes through its static checks while the labs before it run (Grader._grade)."""

    def test_the_next_lab_builds_while_this_one_runs(self):
        import threading
        from grader.run.run import Outcome as RunOutcome
        config = self.small_config()
        events, lock = [], threading.Lock()
        program = self.fake(PASS)

        def note(what):
            with lock:
                events.append(what)

        def run_many(program, runs, timeouts, workdir, cwd, source):
            lab = Path(workdir).parts[-3]
            note(f"{lab} runs")
            time.sleep(0.4)
            note(f"{lab} ran")
            return [RunOutcome("pass", "") for _ in runs]

        grader = self.grader(config, {"01-first": program, "02-second": program}, run_many=run_many)
        built = grader.build

        def build(kit, pattern, source, folder, **kw):
            note(f"{Path(folder).name} builds")
            return built(kit, pattern, source, folder, **kw)

        grader.build = build
        grader.gpu_snapshot = lambda: {}
        report = grader.grade(list(config.labs))
        self.assertLess(events.index("02-second builds"), events.index("01-first ran"), events)
        self.assertLess(events.index("01-first builds"), events.index("02-second builds"), events)  # in order
        self.assertEqual(self.checked, [("01-first", "reduce"), ("02-second", "reduce")])
        self.assertTrue(report.full_marks, format_table(report))
        for lab in ("01-first", "02-second"):  # each build's own seconds, not the wait for it
            self.assertIn("build", report.stage_seconds[lab])

    def test_a_checker_that_cannot_run_stops_every_lab_after_it(self):
        from grader.compile.static_check import ToolError
        config = self.small_config()
        program = self.fake(PASS)
        self.verdicts["02-second"] = ToolError("nm is missing")
        grader = self.grader(config, {"01-first": program, "02-second": program})
        grader.gpu_snapshot = lambda: {}
        report = grader.grade(list(config.labs))
        self.assertIn("nm is missing", report.kit_error)
        self.assertTrue(all(r.status == "not run" for r in report.results if r.lab == "02-second"),
                        format_table(report))


class BlanksLeft(GradingRun):
    """A lab that loses correctness points while its file still has `// @@ TODO` blanks gets a note naming their
    lines; a lab with full correctness, or no blanks left, gets none."""

    def test_the_blanks_lines_are_named(self):
        config = self.small_config()
        fails = "emit(CASES[0], 'fail', message='wrong sum: got 9'); sys.exit(1)\n"
        grader = self.grader(config, {"01-first": self.fake(fails + PASS, name="failing_lab"),
                                      "02-second": self.fake(PASS, name="passing_lab")})
        text = "// the skeleton\n__global__ void k() {\n    // @@ TODO (about 3 lines): the tree\n}\n" \
               "    // @@ TODO (about 1 line): the last write\n"
        for lab in ("01-first", "02-second"):
            write_file(self.submission, f"{lab}/reduce.cu", text)
        grader.gpu_snapshot = lambda: {}
        report = grader.grade(list(config.labs))
        notes = [n for n in report.notes if "@@ TODO" in n]
        self.assertEqual(notes, ["01-first: reduce.cu still has 2 blanks to fill (`// @@ TODO` at lines 3, 5); the "
                                 "lab's handout explains each"], report.notes)


class SaysWhereTheResultsAre(GradingRun):
    def test_the_table_ends_with_results_json_and_report_html(self):
        config = write_file(self.dir, "labs.toml", SMALL_TOML)
        self.submission = make_submission(self.dir / "sub", ["01-first"])
        results = self.dir / "out" / "results.json"
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(["--config", str(config), "--submission", str(self.submission), "--build-dir", str(self.dir / "b"),
                  "--results", str(results), "--lab", "01"], kit=self.kit,
                 build=self.build_hook({"01-first": self.fake(PASS)}, load_config(config)), build_harness=harness_ok,
                 check=self.check_hook)
        last = out.getvalue().strip().splitlines()[-1]
        self.assertEqual(last,
                         f"Results: {results}; the same with a chart, for a browser: {results.parent}/report.html")


class RunLimits(GradingRun):
    """A correctness case's call of the lab's code is limited by labs.toml's [limits] rule from the reference
    solution's run of the same group on this GPU (the checker's --call-seconds: a hung kernel is known in seconds);
    the whole run, the kit's own work included, by the grader's --timeout or the default."""

    TOML = SMALL_TOML.replace("[labs.01-first]", """[limits]
run_floor_seconds = 5
run_reference_factor = 3

[labs.01-first]""").replace("""[labs.01-first.performance]
points = 30
bench = "2^10"
lower = 1.0
full = 3.0
""", """[labs.01-first.performance]
points = 30
bench = "2^10"
lower = 1.0
full = 3.0

[labs.01-first.performance.gpus."NVIDIA H200"]
lower = 1.0
full = 3.0
run_seconds = {small = 0.4, exact = 2.5}
""")

    def limits(self, device="NVIDIA H200", status="pass", **kw):
        from grader.run.run import Outcome as RunOutcome
        config = load_config(write_file(self.dir, "labs.toml", self.TOML))
        seen = {}

        def run_many(program, runs, timeouts, workdir, cwd, source):
            seen["timeouts"] = list(timeouts)
            seen["calls"] = [float(a[a.index("--call-seconds") + 1]) if "--call-seconds" in a else None
                             for a in runs]
            return [RunOutcome(status, "timed out after 5 s" if status == "timeout" else "") for _ in runs]

        grader = self.grader(config, {"01-first": self.fake(PASS)}, labs=["01-first"], run_many=run_many, **kw)
        grader.gpu_snapshot = lambda: {}
        grader.gpu_apps = lambda: {"gpus": [{"name": device, "index": "0"}], "apps": []}
        report = grader.grade([lab for lab in config.labs if lab.name == "01-first"])
        self.seen = seen
        return seen["timeouts"], rows(report, "01-first")

    def test_a_calibrated_gpu_gets_the_rule_for_each_call(self):
        timeouts, _ = self.limits()
        self.assertEqual(self.seen["calls"], [5.0, 7.5, 7.5])  # small: the floor; exact: 3 x 2.5 s, for each run
        self.assertEqual(timeouts, [DEFAULT_TIMEOUT] * 3)  # the kit's own work in a run is not held to the rule

    def test_another_gpu_gets_the_default(self):
        timeouts, _ = self.limits(device="Tesla T4")
        self.assertEqual(timeouts, [DEFAULT_TIMEOUT] * 3)
        self.assertEqual(self.seen["calls"], [None] * 3)

    def test_an_explicit_timeout_applies_as_it_is(self):
        timeouts, _ = self.limits(timeout=30.0)
        self.assertEqual(timeouts, [30.0] * 3)
        self.assertEqual(self.seen["calls"], [None] * 3)

    def test_a_timeout_says_where_its_limit_came_from(self):
        _, got = self.limits(status="timeout")
        small = next(r for r in got if r.name == "small")
        self.assertIn("3x the reference solution's slowest run of this group on this GPU (0.4 s), at least 5 s",
                      small.summary + small.detail)

    def test_groups_that_labs_toml_lacks_are_refused(self):
        from grader.config import ConfigError
        bad = self.TOML.replace("exact = 2.5", "exakt = 2.5")
        with self.assertRaisesRegex(ConfigError, "run_seconds: no such group in suites.s: exakt"):
            load_config(write_file(self.dir, "labs.toml", bad))


class BenchInTheCorrectnessProgram(GradingRun):
    """One grading on a GPU (no class lock): a lab's benchmark is its correctness program's last argument list
    (platform.BenchTail: one CUDA context less), let through only once every correctness list ended with status 0
    and the static checks and sanitizers row passed; otherwise it never reaches the program. With a class's GPU lock
    it is a program of its own, as before."""

    TOML = SanitizersBesideCorrectness.TOML

    def grade_one(self, body: str, sanitizers: str = "pass", lock=None):
        from grader.score.score import TestResult
        config = load_config(write_file(self.dir, "labs.toml", self.TOML))
        self.submission = make_submission(self.dir / "sub", [("01-first", "reduce.cu")])
        # run and run_many are the kit's own (run_harness, run_harness_runs): the fake reads --runs-fd as the checker
        grader = Grader(config, self.submission, kit=self.kit, build_dir=self.dir / "build", seed=12345,
                        build=self.build_hook({"01-first": self.fake(body)}, config), build_harness=harness_ok,
                        check=self.check_hook)
        sanitized = []

        def grade_sanitizers(lab, program, cancel=None):
            time.sleep(0.3)  # the correctness lists end first: the benchmark's list waits for this row
            sanitized.append(time.monotonic())
            return TestResult(lab.name, "sanitizers", 0, 0.0, sanitizers, f"memcheck: {sanitizers}")
        grader.grade_sanitizers = grade_sanitizers
        grader.gpu_snapshot = lambda: {}
        grader.gpu_lock = lock
        report = grader.grade([lab for lab in config.labs if lab.name == "01-first"])
        runs = self.dir / "build" / "01-first" / "runs"
        lines = [json.loads(ln) for ln in (runs / "correctness" / "result.jsonl").read_text().splitlines()]
        return report, lines, runs, report.stage_seconds["01-first"]

    def test_the_benchmark_is_the_last_list_once_the_rest_passed(self):
        report, lines, runs, stages = self.grade_one(PASS)
        self.assertEqual([(r.name, r.status) for r in rows(report, "01-first")],
                         [("small", "pass"), ("exact", "pass"), ("sanitizers", "pass"), ("performance", "pass")])
        self.assertEqual([ln["run"] for ln in lines if ln.get("kind") == "bench"], [3])  # after the 3 lists
        self.assertFalse((runs / "bench").exists())  # no program of its own
        self.assertGreater(stages["benchmark"], 0.0)  # timed from the list's letting through to its end
        self.assertIn("GPU queries", stages)

    def test_a_failed_group_or_sanitizers_row_keeps_the_benchmark_out(self):
        for body, sanitizers in (("all_pass(status='fail')", "pass"), (PASS, "fail")):
            with self.subTest(body=body, sanitizers=sanitizers):
                report, lines, runs, _ = self.grade_one(body, sanitizers)
                self.assertEqual([ln for ln in lines if ln.get("kind") == "bench"], [])
                self.assertEqual(max(ln.get("run", -1) for ln in lines), 2)  # the three correctness lists alone
                performance = rows(report, "01-first")[-1]
                self.assertEqual((performance.name, performance.status), ("performance", "not run"))
                self.assertFalse((runs / "bench").exists())

    def test_beside_other_students_the_benchmark_is_a_program_of_its_own(self):
        class Lock:
            shared = exclusive = staticmethod(contextlib.nullcontext)
        report, lines, runs, _ = self.grade_one(PASS, lock=Lock())
        self.assertEqual([ln for ln in lines if ln.get("kind") == "bench"], [])
        self.assertTrue((runs / "bench" / "result.jsonl").exists())
        self.assertEqual(rows(report, "01-first")[-1].status, "pass")


class SharedGpu(GradingRun):
    """In a class run whose students share a GPU (grader/run/gpu_lock.py), a lab's correctness runs and sanitizers hold
    the GPU shared and its benchmark holds it alone."""

    def test_runs_shared_benchmark_alone(self):
        events = []

        class Recording:
            @contextlib.contextmanager
            def shared(self):
                events.append("shared")
                yield
                events.append("/shared")

            @contextlib.contextmanager
            def exclusive(self):
                events.append("exclusive")
                yield
                events.append("/exclusive")

        config = self.small_config()
        grader = self.grader(config, {"01-first": self.fake(PASS)}, labs=["01-first"])
        grader.gpu_lock = Recording()
        grader.gpu_snapshot = lambda: {}
        run = grader.run

        def run_hook(program, args, **kw):
            events.append("bench" if "--bench" in args else "run")
            return run(program, args, **kw)

        grader.run = run_hook
        report = grader.grade([lab for lab in config.labs if lab.name == "01-first"])
        self.assertEqual(events, ["shared", "run", "run", "run", "/shared", "exclusive", "bench", "/exclusive"])
        self.assertEqual(rows(report, "01-first")[-1].status, "pass")

    def test_a_failure_a_neighbour_could_cause_is_graded_again_alone(self):
        """Out of GPU memory while other students' runs shared the GPU (one may take its memory on purpose): the
        lab's run-time tests run again with the GPU alone, and that verdict counts; a wrong sum is not rerun."""
        from grader.run.run import Outcome as RunOutcome
        config = self.small_config()
        for first, expected_runs in (("cuda-error", 2), ("fail", 1)):
            events, tries = [], []

            class Recording:
                @contextlib.contextmanager
                def shared(self):
                    events.append("shared")
                    yield

                @contextlib.contextmanager
                def exclusive(self):
                    events.append("exclusive")
                    yield

            def run_many(program, runs, timeouts, workdir, cwd, source):
                tries.append(events[-1])
                status = first if len(tries) == 1 else "pass"
                message = "CUDA error: out of memory" if status == "cuda-error" else "wrong sum"
                return [RunOutcome(status, "" if status == "pass" else message) for _ in runs]

            grader = self.grader(config, {"01-first": self.fake(PASS)}, labs=["01-first"], run_many=run_many)
            grader.gpu_lock = Recording()
            grader.gpu_snapshot = lambda: {}
            report = grader.grade([lab for lab in config.labs if lab.name == "01-first"])
            self.assertEqual(len(tries), expected_runs, first)
            got = {r.name: r.status for r in rows(report, "01-first")}
            if first == "cuda-error":
                self.assertEqual(tries, ["shared", "exclusive"])
                self.assertEqual((got["small"], got["exact"]), ("pass", "pass"))
            else:
                self.assertEqual(got["small"], "FAIL")

    def test_which_rows_a_neighbour_may_have_failed(self):
        from grader.score.score import TestResult
        race = TestResult("01-first", "sanitizers", 0, 0, "FAIL", "racecheck: a race at reduce.cu:31",
                          data={"hazards": ["a race"]})
        stopped = TestResult("01-first", "sanitizers", 0, 0, "FAIL", "not run to the end: out of memory",
                             data={"hazards": ["out of memory"], "ran_to_the_end": False})
        wrong = TestResult("01-first", "small", 10, 0, "FAIL", "wrong sum")
        oom = TestResult("01-first", "small", 10, 0, "CUDA ERROR", "out of memory")
        self.assertFalse(Grader._may_be_a_neighbours([race, wrong]))  # the lab's own, on any GPU
        self.assertTrue(Grader._may_be_a_neighbours([stopped]))
        self.assertTrue(Grader._may_be_a_neighbours([oom]))
