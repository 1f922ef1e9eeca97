"""One verdict (grader/sim/sim_check.py): a GPU grading also grades each lab on the simulator, and a lab's correctness
is what both platforms allow. The GPU's runs and the simulator's are fake harness programs here (the GPU side cannot
run without a GPU; tests/sim runs the real simulator): a group that passes on the GPU and fails on the simulator
scores 0 with the simulator's words, a group the simulator cannot run keeps the GPU's points and says so, the
sanitizers row fails on a finding only the simulator made, a simulator that cannot build its kit costs nothing, and
the check can be turned off (--no-simulator-check, labs.toml), which results.json records."""
import contextlib
import io
import json
import time
import unittest
from pathlib import Path

from grader.sim import sim_check
from grader.compile.build import BuildResult
from grader.config import SANITIZERS, load_config
from grader.grade import Grader, main
from grader.report.report import Report, format_table, gradescope_results
from grader.run.run import Outcome, run_harness
from grader.score.score import HAZARD, TestResult, hung_labs
from tests.grader.fakes import PASS, SMALL_TOML, write_file
from tests.grader.test_grade import GradingRun, rows

FAILS_EXACT = "if 'integer' in ARGS: emit(CASES[0], 'fail', message='wrong sum: got 4'); sys.exit(1)\n"
SANITIZED = SMALL_TOML.replace("[labs.01-first]", """[suites.s.sanitizers]
points = 0
tools = ["memcheck"]
runs = [["--data", "integer", "--n", "33"]]

[labs.01-first]""")
LARGE = SMALL_TOML.replace('runs = [["--data", "uniform", "--n", "1,2,3"]]',
                           'runs = [["--data", "uniform", "--n", "1,2^22"]]')
SHUFFLE = {"kind": "shfl-outside-mask", "kernel": "reduce_kernel", "where": "reduce.cu:42", "file": "reduce.cu",
           "line": 42, "count": 3, "message": "a shuffle reads lane 17 outside its mask"}


class SimCheckRun(GradingRun):
    """A grading whose GPU side runs one fake program and whose simulator side another (sim_hooks)."""

    def setUp(self):
        super().setUp()
        self.sim_builds, self.sim_calls = [], []
        self.sim_harness = BuildResult(True)
        self.findings = []  # what the simulator's report channel carries, for every run
        self.sim_stalls = 0  # seconds each simulator run takes before it ends (0: it runs the fake program)

    def sim_hooks(self, program):
        def build(kit, pattern, source, folder, **kw):
            self.sim_builds.append(Path(folder))
            return BuildResult(True, program=program, object=Path(folder) / "student.o")

        def run(program, args, timeout, workdir, cwd, source, env=None, cancel=None):
            self.sim_calls.append((Path(workdir).parts[-3], list(args)))
            if self.sim_stalls:  # a run that would take long: only a cancel ends it early
                stopped = cancel.wait(self.sim_stalls)
                return Outcome("timeout" if not stopped else "cancelled", "stopped" if stopped else "timed out")
            outcome = run_harness(program, args, timeout=timeout, workdir=workdir, cwd=cwd, source=source)
            report = {"lines": 1, "findings": self.findings, "kernels": [{"name": "reduce_kernel",
                                                                         "module": "student"}],
                      "run": {"status": outcome.status}}
            (Path(workdir) / "sim-report.json").write_text(json.dumps(report))
            return outcome

        return {"build": build, "build_harness": lambda kit, pattern, **kw: self.sim_harness, "run": run}

    def graded(self, toml, gpu_body=PASS, sim_body=PASS, labs=("01-first",), gpu_sanitizers=None, **kw):
        config = load_config(write_file(self.dir, "labs.toml", toml))
        gpu, sim = self.fake(gpu_body, name="gpu_lab"), self.fake(sim_body, name="sim_lab")
        grader = self.grader(config, {lab: gpu for lab in labs}, labs=list(labs), sim_check=True,
                             sim_hooks=self.sim_hooks(sim), **kw)
        if gpu_sanitizers:
            grader.grade_sanitizers = lambda lab, program, cancel=None: TestResult(
                lab.name, SANITIZERS, 0.0, 0.0, *gpu_sanitizers)
        self.report = grader.grade([lab for lab in config.labs if lab.name in labs])
        return {r.name: r for r in rows(self.report, labs[0])}


class Combined(SimCheckRun):
    def test_a_group_passing_on_the_gpu_and_failing_on_the_simulator_scores_0_with_its_words(self):
        got = self.graded(SMALL_TOML, sim_body=FAILS_EXACT + PASS)
        self.assertEqual((got["small"].score, got["small"].status), (10, "pass"))
        exact = got["exact"]
        self.assertEqual((exact.score, exact.status), (0, "FAIL"))
        self.assertTrue(exact.summary.startswith("the simulator: n=5 integer: wrong sum: got 4"), exact.summary)
        self.assertIn("On the GPU this group passed", exact.detail)
        self.assertEqual(exact.data["platforms"]["gpu"]["status"], "pass")
        perf = got["performance"]
        self.assertEqual((perf.score, perf.status), (0, "not run"))
        self.assertIn("every correctness test must pass first (exact did not, on the simulator)", perf.summary)
        self.assertNotIn("speedup", perf.data)  # no leaderboard entry for it
        # the simulator's build and runs in a folder of their own, never the GPU build's
        self.assertEqual(self.sim_builds, [(self.dir / "build" / "sim" / "01-first").resolve()])
        self.assertTrue(all(Path(p).is_relative_to(self.dir / "build" / "sim") for p in self.sim_builds))
        data = gradescope_results(self.report)["extra_data"]["simulator_check"]
        self.assertTrue(data["enabled"])
        lab = data["labs"]["01-first"]
        self.assertEqual(lab["status"], "ran")
        self.assertEqual((lab["tests"]["exact"]["gpu"]["status"], lab["tests"]["exact"]["simulator"]["status"]),
                         ("pass", "FAIL"))
        self.assertIn("the simulator: n=5 integer: wrong sum", format_table(self.report))

    def test_a_group_failing_on_the_gpu_alone_says_so(self):
        got = self.graded(SMALL_TOML, gpu_body=FAILS_EXACT + PASS)
        self.assertEqual((got["exact"].score, got["exact"].status), (0, "FAIL"))
        self.assertTrue(got["exact"].summary.startswith("the GPU: n=5 integer: wrong sum"), got["exact"].summary)
        self.assertIn("On the simulator this group passed", got["exact"].detail)

    def test_a_group_the_simulator_cannot_run_keeps_the_gpus_score_and_says_so(self):
        got = self.graded(LARGE)
        small = got["small"]
        self.assertEqual((small.score, small.status), (10, "pass"))
        self.assertIn("the simulator could not tell: sizes up to 4194304 elements are too large for the simulator",
                      small.detail)
        self.assertEqual(small.data["platforms"]["simulator"]["status"], "needs GPU")
        self.assertEqual(got["performance"].status, "pass")
        self.assertTrue(self.report.full_marks)
        self.assertNotIn("--n 1,2^22", [a for _, args in self.sim_calls for a in args])

    def test_the_simulators_time_share_spent_keeps_the_gpus_verdict(self):
        toml = SMALL_TOML.replace("[calibration]", "[limits]\nsimulator_check_seconds = 0.5\n\n[calibration]")
        got = self.graded(toml, sim_body=FAILS_EXACT + PASS)
        self.assertEqual(self.sim_calls, [])  # no run started: the share was spent
        self.assertEqual((got["exact"].score, got["exact"].status), (20, "pass"))
        self.assertIn("the simulator could not tell: not graded: the simulator's share of this lab's grading was "
                      "spent", got["exact"].detail)

    def test_the_sanitizers_row_fails_on_a_finding_only_the_simulator_made(self):
        self.findings = [SHUFFLE]
        got = self.graded(SANITIZED, gpu_sanitizers=("pass", "compute-sanitizer found nothing in reduce.cu"))
        row = got[SANITIZERS]
        self.assertEqual(row.status, "FAIL")
        self.assertTrue(row.summary.startswith("the simulator found: [shfl-outside-mask] kernel reduce_kernel, "
                                               "reduce.cu:42"), row.summary)
        self.assertIn("compute-sanitizer on the GPU: pass: compute-sanitizer found nothing", row.detail)
        self.assertEqual(row.data["failed_on"], "simulator")
        for name in ("small", "exact"):  # the hazard costs the correctness points (hazard_cost 1: all)
            self.assertEqual((got[name].score, got[name].status), (0, HAZARD))
            self.assertIn("reduce.cu:42", got[name].summary)
        self.assertEqual(got["performance"].status, "not run")

    def test_a_hazard_found_by_the_simulator_costs_the_groups_it_could_not_run_too(self):
        self.findings = [SHUFFLE]
        toml = LARGE.replace("[labs.01-first]", SANITIZED[SANITIZED.index("[suites.s.sanitizers]"):
                                                          SANITIZED.index("[labs.01-first]")] + "[labs.01-first]")
        got = self.graded(toml, gpu_sanitizers=("pass", "compute-sanitizer found nothing"))
        self.assertEqual((got["small"].score, got["small"].status), (0, HAZARD))  # needs GPU on the simulator
        self.assertIn("the simulator could not tell", got["small"].detail)

    def test_a_finding_of_compute_sanitizer_alone_fails_the_row_as_before(self):
        # half the groups' points for a hazard: they keep points, so the simulator's check still counts (Moot)
        toml = SANITIZED.replace('tools = ["memcheck"]', 'hazard_cost = 0.5\ntools = ["memcheck"]')
        got = self.graded(toml, gpu_sanitizers=("FAIL", "memcheck found: out of bounds (reduce.cu:7)", "",
                                                     {"hazards": ["out of bounds (reduce.cu:7)"]}))
        self.assertEqual(got[SANITIZERS].status, "FAIL")
        self.assertTrue(got[SANITIZERS].summary.startswith("the GPU: memcheck found"), got[SANITIZERS].summary)
        self.assertEqual(got[SANITIZERS].data["failed_on"], "gpu")

    def test_a_simulator_kit_failure_keeps_the_gpus_verdict_and_says_so(self):
        self.sim_harness = BuildResult(False, message="make: *** mk/sim.mk: the simulator's library does not build")
        got = self.graded(SMALL_TOML, sim_body=FAILS_EXACT + PASS)
        self.assertEqual(self.sim_builds, [])
        self.assertTrue(self.report.full_marks)
        self.assertEqual(got["exact"].status, "pass")
        self.assertIn("the simulator's check of this lab did not run (not your code's doing: the simulator's "
                      "reduce harness does not build: make: *** mk/sim.mk", got["exact"].detail)
        self.assertTrue(any(n.startswith("01-first: the simulator's check did not run") and "not the student's" in n
                            for n in self.report.notes), self.report.notes)
        self.assertEqual(self.report.simulator_check["labs"]["01-first"]["status"], "kit error")
        self.assertEqual(self.report.kit_error, "")  # the GPU grading itself is whole

    def test_an_instruction_limit_hang_counts_a_wall_clock_one_does_not(self):
        lab = load_config(write_file(self.dir, "labs.toml", SMALL_TOML)).labs[0]
        gpu = [TestResult(lab.name, "small", 10, 10, "pass", "3 cases passed"),
               TestResult(lab.name, "exact", 20, 20, "pass", "3 cases passed")]
        hang = TestResult(lab.name, "small", 10, 0, "TIMEOUT", "a kernel ran 30000000 warp instructions")
        slow = TestResult(lab.name, "exact", 20, 0, "TIMEOUT", "timed out after 60 s", data={"wall_clock": True})
        out = {r.name: r for r in sim_check.combine(lab, gpu, sim_check.Verdict("ran", [hang, slow]))}
        self.assertEqual((out["small"].score, out["small"].status), (0, "TIMEOUT"))
        self.assertEqual((out["exact"].score, out["exact"].status), (20, "pass"))
        self.assertIn("its wall-clock backstop stopped a run", out["exact"].detail)
        self.assertIn("timed out after 60 s", out["exact"].data["kit_fault"])  # marked for the instructors
        self.assertEqual([r.score for r in gpu], [10, 20])  # the GPU's rows are not changed

    def combined(self, sim_rows, toml=SMALL_TOML):
        lab = load_config(write_file(self.dir, "labs.toml", toml)).labs[0]
        gpu = [TestResult(lab.name, "small", 10, 10, "pass", "3 cases passed"),
               TestResult(lab.name, "exact", 20, 20, "pass", "3 cases passed")]
        return {r.name: r for r in sim_check.combine(lab, gpu, sim_check.Verdict("ran", sim_rows))}

    def budget(self, lab_name):
        return TestResult(lab_name, "exact", 20, 0, "not graded",
                          "not graded on the simulator: ... instruction budget exhausted, not a hang ...",
                          "your code's doing: a launch ran far more warp instructions than the lab needs",
                          data={"whose": "student"})

    def test_what_the_file_keeps_the_check_from_judging_costs_its_points(self):
        """Fails closed: a launch past the instruction budget (the student's doing) withholds the group's points,
        whatever the GPU said, and the row says why and what to change."""
        out = self.combined([TestResult("01-first", "small", 10, 10, "pass", "3 cases passed"),
                             self.budget("01-first")])
        self.assertEqual((out["exact"].score, out["exact"].status), (0, "not graded"))
        self.assertTrue(out["exact"].summary.startswith("the simulator: "), out["exact"].summary)
        self.assertIn("points are withheld", out["exact"].detail)
        self.assertIn("far more warp instructions than the lab needs", out["exact"].detail)
        self.assertEqual(out["exact"].data["failed_on"], "simulator")
        self.assertEqual(out["small"].score, 10)

    def test_a_group_not_run_after_the_files_hang_is_withheld_too(self):
        hung = TestResult("01-first", "small", 10, 0, "TIMEOUT", "a kernel ran 30000000 warp instructions")
        after = TestResult("01-first", "exact", 20, 0, "not run", "not run: an earlier test of this lab timed out",
                           data={"whose": "student"})
        out = self.combined([hung, after])
        self.assertEqual([(out[g].score, out[g].data.get("failed_on")) for g in ("small", "exact")],
                         [(0, "simulator"), (0, "simulator")])
        self.assertNotIn("kit_fault", out["exact"].data)

    def test_a_course_may_let_the_gpus_verdict_stand_and_the_report_says_so(self):
        toml = SMALL_TOML.replace("[labs.01-first]", "[labs.01-first]\nsimulator_check_open = true")
        out = self.combined([self.budget("01-first")], toml)
        self.assertEqual((out["exact"].score, out["exact"].status), (20, "pass"))
        self.assertIn("simulator_check_open = true", out["exact"].detail)
        self.assertIn("instruction budget", out["exact"].data["check_relaxed"])

    def test_the_kits_gap_keeps_the_gpus_verdict_and_marks_the_row_for_review(self):
        gap = TestResult("01-first", "exact", 20, 0, "not graded",
                         "not graded on the simulator: the simulator cannot run k (unsupported): redux.sync.max",
                         data={"whose": "kit"})
        out = self.combined([TestResult("01-first", "small", 10, 10, "pass", "3 cases passed"), gap])
        self.assertNotIn("kit_fault", out["small"].data)
        self.assertEqual((out["exact"].score, out["exact"].status), (20, "pass"))
        self.assertIn("unsupported", out["exact"].data["kit_fault"])
        from grader.classroom.records import lab_notes
        report = Report("s", 1)
        report.results = list(out.values())
        self.assertTrue(any("could not judge exact (the kit's fault" in n for n in lab_notes(report)),
                        lab_notes(report))


class Moot(SimCheckRun):
    """Where the GPU gave every correctness group 0 points (a hung kernel, a blank lab), the simulator cannot lower
    anything: its check is stopped, its run in progress killed, and the grading does not wait for it."""

    FAILS_ALL = "emit(CASES[0], 'fail', message='wrong sum: got 4'); sys.exit(1)\n"

    def test_the_check_is_stopped_and_says_why(self):
        self.sim_stalls = 30
        started = time.monotonic()
        got = self.graded(SMALL_TOML, gpu_body=self.FAILS_ALL + PASS)
        self.assertLess(time.monotonic() - started, 15)  # not the 30 s the simulator's run would have taken
        self.assertTrue(all(got[g].score == 0 for g in ("small", "exact")), format_table(self.report))
        self.assertTrue(got["small"].summary.startswith("n="), got["small"].summary)  # the GPU's words, as they were
        lab = gradescope_results(self.report)["extra_data"]["simulator_check"]["labs"].get("01-first")
        self.assertIsNotNone(lab)
        self.assertEqual(lab["status"], "skipped")
        self.assertIn("which the simulator cannot lower", lab["message"])

    def test_a_lab_with_points_waits_for_the_simulator_as_before(self):
        got = self.graded(SMALL_TOML, gpu_body=FAILS_EXACT + PASS, sim_body=FAILS_EXACT.replace("integer", "uniform")
                          + PASS)
        self.assertEqual(got["small"].score, 0)  # the simulator's verdict counted
        self.assertEqual(gradescope_results(self.report)["extra_data"]["simulator_check"]["labs"]["01-first"][
            "status"], "ran")


class CheckedApart(SimCheckRun):
    """A class run checks each student's labs on the simulator in a CPU job of its own (sim_check.check_ahead); the
    GPU side's Grader (sim_later) ends its grading without them, and lay_over_sim_checks lays them over its rows as
    the Grader would its own check's."""

    def test_verdicts_made_apart_count_as_a_check_made_now(self):
        config = load_config(write_file(self.dir, "labs.toml", SMALL_TOML))
        gpu, sim = self.fake(PASS, name="gpu_lab"), self.fake(FAILS_EXACT + PASS, name="sim_lab")
        lab = [x for x in config.labs if x.name == "01-first"]
        first = self.grader(config, {"01-first": gpu}, labs=["01-first"], sim_check=True, sim_hooks=self.sim_hooks(sim))
        verdicts = sim_check.check_ahead(first, Grader, lab, hooks=self.sim_hooks(sim))
        self.assertEqual(verdicts["01-first"].status, "ran")
        calls = len(self.sim_calls)
        self.assertGreater(calls, 0)
        grader = self.grader(config, {"01-first": gpu}, labs=["01-first"], sim_check=True,
                             sim_hooks=self.sim_hooks(sim), sim_later=True)
        self.report = grader.grade(lab)
        self.assertEqual(len(self.sim_calls), calls)  # nothing simulated again
        self.assertEqual({r.name: r.status for r in rows(self.report, "01-first")}["exact"], "pass")  # the GPU's
        apart = grader.sim_apart
        Grader(config, grader.submission, kit=self.kit).lay_over_sim_checks(lab, self.report, verdicts,
                                                                             apart.submitted, apart.dropped)
        got = {r.name: r for r in rows(self.report, "01-first")}
        self.assertEqual((got["exact"].score, got["exact"].status), (0, "FAIL"))
        self.assertTrue(got["exact"].summary.startswith("the simulator: n=5 integer: wrong sum"), got["exact"].summary)
        self.assertEqual(gradescope_results(self.report)["extra_data"]["simulator_check"]["labs"]["01-first"][
            "status"], "ran")


class TurnedOff(SimCheckRun):
    def main(self, toml, *extra):
        config = write_file(self.dir, "labs.toml", toml)
        from tests.grader.fakes import make_submission
        self.submission, self.sources = make_submission(self.dir / "sub", ["01-first"]), set()
        results = self.dir / "out" / "results.json"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            status = main(["--config", str(config), "--submission", str(self.submission), "--build-dir",
                           str(self.dir / "build"), "--results", str(results), "--lab", "01", *extra],
                          kit=self.kit, build=self.build_hook({"01-first": self.fake(PASS)}, load_config(config)),
                          build_harness=lambda *a, **k: BuildResult(True), check=self.check_hook,
                          run=self.run_hook, sim_check=True,
                          sim_hooks=self.sim_hooks(self.fake(FAILS_EXACT + PASS, name="sim_lab")))
        return status, json.loads(results.read_text())

    def test_on_it_costs_the_points(self):
        status, data = self.main(SMALL_TOML)
        self.assertEqual(status, 1)
        self.assertTrue(data["extra_data"]["simulator_check"]["enabled"])

    def test_the_option_skips_it_and_results_json_says_so(self):
        status, data = self.main(SMALL_TOML, "--no-simulator-check")
        self.assertEqual((status, self.sim_builds, self.sim_calls), (0, [], []))
        check = data["extra_data"]["simulator_check"]
        self.assertEqual((check["enabled"], check["labs"]), (False, {}))
        self.assertIn("--no-simulator-check", check["why"])

    def test_labs_toml_turns_it_off(self):
        toml = SMALL_TOML.replace("[calibration]", "[limits]\nsimulator_check = false\n\n[calibration]")
        status, data = self.main(toml)
        self.assertEqual((status, self.sim_builds), (0, []))
        self.assertIn("simulator_check = false", data["extra_data"]["simulator_check"]["why"])

    def test_on_by_default_when_the_kit_builds_and_runs_off_with_a_tests_hooks(self):
        config = load_config(write_file(self.dir, "labs.toml", SMALL_TOML))
        self.assertEqual(Grader(config, self.dir).sim_check_plan()[0], True)
        self.assertEqual(Grader(config, self.dir, run=self.run_hook).sim_check_plan()[0], False)
        self.assertEqual(Grader(config, self.dir, sim_check=False).sim_check_plan()[0], False)

    def test_a_hang_on_the_simulator_marks_the_lab_hung(self):
        report = self.report = None
        hang = TestResult("01-first", "exact", 20, 0, "TIMEOUT", "a kernel ran 30000000 warp instructions")
        lab = load_config(write_file(self.dir, "labs.toml", SMALL_TOML)).labs[0]
        gpu = [TestResult("01-first", "exact", 20, 20, "pass", "ok")]
        from grader.report.report import Report
        report = Report("sub", 1, results=sim_check.combine(lab, gpu, sim_check.Verdict("ran", [hang])))
        self.assertEqual(hung_labs(report), ["01-first"])


if __name__ == "__main__":
    unittest.main()
