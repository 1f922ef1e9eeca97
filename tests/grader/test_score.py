"""grader/score/score.py: groups are all or nothing; performance is linear between lower and full without a [scoring]
table, and in whole steps of a speedup credited with a margin for timing noise with one (labs.toml's rule), which
gives the same points on regrades where the linear rule does not; the static checks' row has no points but can fail."""
import random
import tempfile
import unittest
from dataclasses import replace

from grader.config import ConfigError, GpuThresholds, Group, Performance, Scoring, load_config
from grader.run.run import Outcome
from grader.score.score import (credit_margin, not_run, perf_fraction, perf_points, perf_steps, score_group,
                          score_performance, score_static_check, speedup_spread, step_thresholds)
from grader.compile.static_check import Finding, Verdict
from tests.grader.fakes import SMALL_TOML, write_file

GROUP = Group(name="exact integer data", points=15.0, runs=(), datasets=None, timeout=None)
PERF = Performance(points=50.0, bench="2^26", lower=1.0, full=3.0, measured=None, timeout=None)
CUB = Performance(points=50.0, bench="2^26", lower=0.25, full=0.42, measured=0.5, timeout=None, yardstick="cub")


def passed(cases=("n=1 integer", "n=2 integer")):
    return Outcome("pass", "ok", lines=[{"case": c, "status": "pass"} for c in cases], cases=list(cases))


def bench(speedup, status="pass", message="timed", baseline_ms=1.0):
    line = {"case": "bench n=67108864", "kind": "bench", "status": status, "speedup": speedup, "student_ms": 0.5,
            "baseline_ms": baseline_ms, "spread": 0.012, "samples": 20, "device": "NVIDIA H100 80GB HBM3", "sm": "9.0",
            "message": message}
    return Outcome(status, message, lines=[line], cases=["bench n=67108864"])


class Groups(unittest.TestCase):
    def test_every_run_passes(self):
        r = score_group("03-sequential", GROUP, [(["--n", "1,2"], passed()), (["--n", "3"], passed(["n=3 integer"]))],
                        "reduce_lab")
        self.assertEqual((r.score, r.max_score, r.status), (15.0, 15.0, "pass"))
        self.assertEqual(r.summary, "3 cases passed in 2 runs")
        self.assertEqual(r.title, "03-sequential: exact integer data")

    def test_one_failing_case_costs_the_group(self):
        bad = Outcome("fail", "wrong sum: got 1024, expected 1025 (off by -1, tolerance 0)", case="n=1025 integer")
        r = score_group("03-sequential", GROUP, [(["--n", "1,2"], passed()), (["--n", "1025", "--seed", "7"], bad)],
                        "reduce_lab")
        self.assertEqual((r.score, r.status), (0.0, "FAIL"))
        self.assertIn("n=1025 integer: wrong sum: got 1024, expected 1025", r.summary)
        self.assertIn("labs/03-sequential/build/reduce_lab --n 1025 --seed 7", r.detail)

    def test_reproduce_names_the_labs_program(self):
        bad = Outcome("fail", "element 4: got 3, expected 4 (1 of 31 elements wrong)", case="n=31 random")
        r = score_group("06-scan", GROUP, [(["--n", "31", "--seed", "7"], bad)], "scan_lab")
        self.assertIn("make -C labs/06-scan && labs/06-scan/build/scan_lab --n 31 --seed 7", r.detail)

    def test_status_words(self):
        for status, word in [("timeout", "TIMEOUT"), ("crash", "CRASH"), ("cuda-error", "CUDA ERROR"),
                             ("harness-error", "ERROR")]:
            r = score_group("lab", GROUP, [(["--n", "1"], Outcome(status, "why", case="n=1 uniform"))], "reduce_lab")
            self.assertEqual((r.score, r.status), (0.0, word))

    def test_no_device_is_not_run(self):
        r = score_group("lab", GROUP, [(["--n", "1"], Outcome("no-device"))], "reduce_lab")
        self.assertEqual((r.score, r.status), (0.0, "not run"))
        self.assertIn("no CUDA device", r.summary)

    def test_no_runs_is_not_a_pass(self):
        self.assertEqual(score_group("lab", GROUP, [], "reduce_lab").score, 0.0)


class Performance_(unittest.TestCase):
    def test_fraction(self):
        self.assertEqual(perf_fraction(0.5, 1.0, 3.0), 0.0)
        self.assertEqual(perf_fraction(1.0, 1.0, 3.0), 0.0)  # at lower: nothing yet
        self.assertAlmostEqual(perf_fraction(2.0, 1.0, 3.0), 0.5)
        self.assertEqual(perf_fraction(3.0, 1.0, 3.0), 1.0)  # at full: full marks
        self.assertEqual(perf_fraction(30.0, 1.0, 3.0), 1.0)
        self.assertEqual(perf_fraction(2.0, 2.0, 2.0), 1.0)  # lower == full: a step

    def test_scores(self):
        for speedup, points, status in [(0.9, 0, "slow"), (1.0, 0, "slow"), (1.5, 12.5, "partial"),
                                        (3.0, 50, "pass"), (9.0, 50, "pass")]:
            r = score_performance("lab", PERF, bench(speedup))
            self.assertEqual((r.score, r.status), (points, status), speedup)
            self.assertTrue(r.summary.startswith(f"{speedup:.2f}x baseline (full marks at 3.00x baseline, none at or "
                                                 f"below 1.00x baseline): "), r.summary)
            self.assertIn("0.5000 ms vs baseline 1.0000 ms, spread 1.2%", r.summary)
            self.assertEqual(r.data["yardstick"], "baseline")

    def test_fraction_of_cub(self):
        """For scans and compaction the speedup is the fraction of CUB's speed, and the report says so."""
        for speedup, points, status in [(0.2, 0, "slow"), (0.335, 25, "partial"), (0.42, 50, "pass"),
                                        (1.1, 50, "pass")]:
            r = score_performance("06-scan", CUB, bench(speedup, baseline_ms=0.25))
            self.assertEqual((r.score, r.status), (points, status), speedup)
            self.assertTrue(r.summary.startswith(f"{speedup:.2f}x of CUB (full marks at 0.42x of CUB, none at or "
                                                 f"below 0.25x of CUB): 0.5000 ms vs CUB 0.2500 ms"), r.summary)
            self.assertNotIn("baseline", r.summary)
            self.assertEqual(r.data["yardstick"], "cub")

    def test_other_gpu_is_noted(self):
        perf = replace(PERF, gpus=(("NVIDIA H200", GpuThresholds(lower=1.0, full=3.0, measured=3.3)),))
        r = score_performance("lab", perf, bench(1.5), calibration_gpu="NVIDIA H200")
        self.assertIn("measured on NVIDIA H100 80GB HBM3", r.detail)
        self.assertIn("no thresholds are calibrated for this GPU model, so the defaults apply (from NVIDIA H200)",
                      r.detail)

    def test_a_lab_no_gpu_has_calibrated_says_so(self):
        """A new lab (make new-lab) has thresholds copied from another: no GPU model's calibration is claimed."""
        r = score_performance("09-new", PERF, bench(1.5), calibration_gpu="NVIDIA H200")
        self.assertIn("this lab's thresholds are not calibrated on any GPU model yet (make calibrate)", r.detail)
        self.assertNotIn("NVIDIA H200", r.detail)

    def test_thresholds_of_the_measuring_gpu_apply(self):
        """A GPU with thresholds of its own is scored by them; any other GPU by the defaults."""
        perf = Performance(points=50.0, bench="2^26", lower=1.0, full=3.0, measured=None, timeout=None,
                           gpus=(("NVIDIA H100 80GB HBM3", GpuThresholds(lower=2.0, full=4.0, measured=4.4)),))
        r = score_performance("lab", perf, bench(3.0))  # bench() reports an H100
        self.assertEqual((r.score, r.status), (25.0, "partial"))
        self.assertIn("full marks at 4.00x baseline, none at or below 2.00x baseline", r.summary)
        self.assertIn("thresholds calibrated on this GPU model", r.detail)
        other = bench(3.0)
        other.bench_line()["device"] = "Tesla T4"
        r = score_performance("lab", perf, other)
        self.assertEqual((r.score, r.status), (50.0, "pass"))
        self.assertIn("full marks at 3.00x baseline", r.summary)

    def test_wrong_sum_in_a_timed_run_scores_zero(self):
        r = score_performance("lab", PERF, bench(9.0, "fail", "3 of 22 timed runs gave a wrong sum"))
        self.assertEqual((r.score, r.status), (0.0, "FAIL"))
        self.assertIn("3 of 22 timed runs gave a wrong sum", r.summary)

    def test_timeout_scores_zero(self):
        r = score_performance("lab", PERF, Outcome("timeout", "timed out after 300 s", case="bench n=67108864"))
        self.assertEqual((r.score, r.status), (0.0, "TIMEOUT"))

    def test_speedup_must_be_a_finite_number(self):
        for bad in ("inf", "nan", 0.0, None):
            r = score_performance("lab", PERF, bench(bad))
            self.assertEqual((r.score, r.status), (0.0, "ERROR"), bad)

    def test_pass_without_a_bench_line_scores_zero(self):
        r = score_performance("lab", PERF, Outcome("pass", "1 case passed", lines=[]))
        self.assertEqual(r.score, 0.0)



RULE = Scoring(steps=5, min_margin=0.03, max_margin=0.06, spread_factor=2.0)  # labs.toml's
STEPPED = replace(PERF, scoring=RULE)  # lower 1, full 3: steps at 1.4, 1.8, 2.2, 2.6 and 3.0


def quiet(speedup_spread_=0.005):
    """A bench line's spreads: quiet enough that the margin is min_margin."""
    return {"speedup_spread": speedup_spread_, "spread": 0.004, "baseline_spread": 0.003}


class Steps(unittest.TestCase):
    def test_thresholds(self):
        self.assertEqual([round(x, 9) for x in step_thresholds(1.0, 3.0, 5)], [1.4, 1.8, 2.2, 2.6, 3.0])
        self.assertEqual(step_thresholds(2.81, 5.92, 1), [5.92])
        self.assertEqual(step_thresholds(2.0, 2.0, 4), [2.0] * 4)  # lower == full: all or nothing

    def test_steps_earned(self):
        for credited, steps in [(0.5, 0), (1.0, 0), (1.39, 0), (1.4, 1), (2.19, 2), (2.2, 3), (2.6, 4), (2.99, 4),
                                (3.0, 5), (30.0, 5)]:
            self.assertEqual(perf_steps(credited, 1.0, 3.0, 5), steps, credited)
        # a threshold computed in floating point is reached by the same number written out
        self.assertEqual(perf_steps(1.0 + 3 / 5 * (2.0 - 1.0), 1.0, 2.0, 5), 3)
        self.assertEqual([perf_steps(s, 2.0, 2.0, 4) for s in (1.99, 2.0)], [0, 4])

    def test_spread_of_the_speedup(self):
        self.assertEqual(speedup_spread({"speedup_spread": 0.012, "spread": 0.5}), 0.012)  # the paired one first
        self.assertAlmostEqual(speedup_spread({"spread": 0.03, "baseline_spread": 0.04}), 0.05)
        self.assertEqual(speedup_spread({"spread": 0.02}), 0.02)
        for bad in ({}, {"speedup_spread": "nan", "spread": None}, {"speedup_spread": -1}):
            self.assertEqual(speedup_spread(bad), 0.0, bad)

    def test_margin(self):
        self.assertEqual(credit_margin(RULE, quiet()), 0.03)  # 2 x 0.5% is under min_margin
        self.assertAlmostEqual(credit_margin(RULE, quiet(0.02)), 0.04)  # 2 x 2%
        self.assertEqual(credit_margin(RULE, quiet(0.2)), 0.06)  # a noisy run buys at most max_margin
        self.assertEqual(credit_margin(Scoring(), quiet(0.2)), 0.0)

    def test_points(self):
        # 2.15 * 1.03 = 2.2145: three steps of five
        self.assertEqual(perf_points(50, 2.15, 1.0, 3.0, RULE, quiet()), (30.0, 0.6, 2.15 * 1.03, 0.03, 3))
        self.assertEqual(perf_points(50, 2.15, 1.0, 3.0, Scoring(), quiet())[:2], (28.75, 0.575))
        self.assertEqual(perf_points(30, 2.95, 1.0, 3.0, RULE, quiet())[0], 30.0)  # within the margin of full
        self.assertEqual(perf_points(30, 1.3, 1.0, 3.0, RULE, quiet())[0], 0.0)

    def test_score_says_how(self):
        r = score_performance("lab", STEPPED, bench(2.15))  # bench(): spread 1.2%, no speedup_spread
        self.assertEqual((r.score, r.status), (30.0, "partial"))
        self.assertTrue(r.summary.startswith("2.15x baseline (full marks at 3.00x baseline, none at or below 1.00x "
                                             "baseline; 2.21x baseline with the 3.0% margin for timing noise: 3 of 5 "
                                             "steps): "
                                             "0.5000 ms vs baseline"), r.summary)
        self.assertIn("points in steps of 10, at 1.40, 1.80, 2.20, 2.60, 3.00x baseline; the speedup is credited "
                      "3.0% for timing noise (its spread in this run: 1.2%)", r.detail)
        self.assertEqual((r.data["steps"], r.data["of_steps"], r.data["margin"]), (3, 5, 0.03))
        for speedup, points, status in [(0.5, 0, "slow"), (1.35, 0, "slow"), (1.36, 10, "partial"),
                                        (2.92, 50, "pass"), (9.0, 50, "pass")]:
            r = score_performance("lab", STEPPED, bench(speedup))
            self.assertEqual((r.score, r.status), (points, status), speedup)

    def test_linear_summary_is_unchanged(self):
        r = score_performance("lab", PERF, bench(2.0))
        self.assertEqual(r.score, 25.0)
        self.assertNotIn("steps", r.summary + r.detail)
        self.assertEqual((r.data["steps"], r.data["margin"]), (None, 0.0))


class Regrades(unittest.TestCase):
    """Five regrades of one kernel: its true speedup times a noise factor each time, scored by both rules."""

    K = 5
    TRIALS = 400

    def regrades(self, true_speedup, scoring, noise, rng):
        return [perf_points(50, true_speedup * noise(rng), 1.0, 3.0, scoring, quiet())[0] for _ in range(self.K)]

    def flipped(self, true_speedup, scoring, noise, seed=7) -> int:
        """In how many of TRIALS series of K regrades the points were not all the same."""
        rng = random.Random(seed)
        return sum(len(set(self.regrades(true_speedup, scoring, noise, rng))) > 1 for _ in range(self.TRIALS))

    def test_at_a_threshold_the_margin_holds_the_points(self):
        """A kernel right at full: up to 2% off either way on each run. The linear rule gives new points nearly
        every time; labs.toml's rule credits 3% and gives full marks every time (0.98 * 1.03 > 1)."""
        bounded = lambda rng: 1 + rng.uniform(-0.02, 0.02)  # noqa: E731
        self.assertGreater(self.flipped(3.0, Scoring(), bounded), 0.95 * self.TRIALS)
        self.assertEqual(self.flipped(3.0, RULE, bounded), 0)
        rng = random.Random(1)
        self.assertEqual(set(self.regrades(3.0, RULE, bounded, rng)), {50.0})
        for threshold in step_thresholds(1.0, 3.0, 5):  # at every step's threshold, not only full's
            self.assertEqual(self.flipped(threshold, RULE, bounded), 0, threshold)

    def test_between_thresholds_nothing_flips(self):
        bounded = lambda rng: 1 + rng.uniform(-0.02, 0.02)  # noqa: E731
        self.assertEqual(self.flipped(2.0, RULE, bounded), 0)  # credited 2.02..2.10, between 1.8 and 2.2
        self.assertGreater(self.flipped(2.0, Scoring(), bounded), 0.95 * self.TRIALS)

    def test_gaussian_noise(self):
        """1% Gaussian noise, no bound: at a threshold a flip needs a run 3% (3 sigma) low, so few series flip."""
        gauss = lambda rng: rng.gauss(1.0, 0.01)  # noqa: E731
        self.assertLess(self.flipped(3.0, RULE, gauss), 0.03 * self.TRIALS)
        self.assertGreater(self.flipped(3.0, Scoring(), gauss), 0.95 * self.TRIALS)

    def test_the_edge_still_flips(self):
        """No rule without memory can hold every kernel: one whose credited speedup sits on a threshold (true
        speedup full / 1.03) flips about as often as a linear score would change. It is what make regrade-bench's
        'edge' kernels show; such kernels are a thin band, a few per cent wide, below each threshold."""
        gauss = lambda rng: rng.gauss(1.0, 0.01)  # noqa: E731
        self.assertGreater(self.flipped(3.0 / 1.03, RULE, gauss), 0.8 * self.TRIALS)


class ScoringConfig(unittest.TestCase):
    def load(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            return load_config(write_file(tmp, "labs.toml", text))

    def with_scoring(self, table):
        return SMALL_TOML.replace("[calibration]", f"[scoring]\n{table}\n\n[calibration]")

    def test_the_kits_rule(self):
        config = load_config()
        rules = {lab.performance.scoring for lab in config.labs if lab.performance}
        self.assertEqual(rules, {RULE})

    def test_without_a_table_points_are_linear(self):
        self.assertEqual(self.load(SMALL_TOML).labs[0].performance.scoring, Scoring())

    def test_a_table_applies_to_every_lab(self):
        config = self.load(self.with_scoring("steps = 10\nmin_margin = 0.02\nmax_margin = 0.05\nspread_factor = 1"))
        self.assertEqual({lab.performance.scoring for lab in config.labs},
                         {Scoring(steps=10, min_margin=0.02, max_margin=0.05, spread_factor=1.0)})

    def test_bad_tables(self):
        good = {"steps": "5", "min_margin": "0.03", "max_margin": "0.06", "spread_factor": "2.0"}
        cases = [({"steps": "-1"}, r"scoring.steps: expected a whole number >= 0"),
                 ({"steps": "2.5"}, r"scoring.steps: expected a whole number"),
                 ({"steps": "true"}, r"scoring.steps: expected a whole number"),
                 ({"min_margin": "0.07"}, r"scoring: min_margin \(0.07\) must not exceed max_margin \(0.06\)"),
                 ({"max_margin": "0.5"}, r"scoring.max_margin: expected a fraction under 0.5"),
                 ({"spread_factor": "-2"}, r"scoring.spread_factor: expected a number >= 0"),
                 ({"margin": "0.03"}, r"scoring: unknown key margin"),
                 ({"min_margin": None}, r"scoring: missing min_margin")]
        for change, message in cases:
            table = {**good, **change}
            text = "\n".join(f"{k} = {v}" for k, v in table.items() if v is not None)
            with self.subTest(change):
                with self.assertRaisesRegex(ConfigError, message):
                    self.load(self.with_scoring(text))
        with self.assertRaisesRegex(ConfigError, r"scoring: expected a table"):
            self.load(SMALL_TOML.replace("[calibration]", "scoring = 5\n\n[calibration]"))


class StaticChecks(unittest.TestCase):
    def test_clean(self):
        r = score_static_check("03-sequential", Verdict(), "reduce.cu")
        self.assertEqual((r.name, r.score, r.max_score, r.status, r.full), ("static checks", 0, 0, "pass", True))
        self.assertTrue(r.summary.startswith("nothing forbidden in compiled reduce.cu"))
        self.assertEqual(r.detail, "")

    def test_clean_with_a_note(self):
        r = score_static_check("03-sequential", Verdict(notes=["1 compressed device image not inspected"]), "reduce.cu")
        self.assertTrue(r.full)
        self.assertEqual(r.detail, "note: 1 compressed device image not inspected")

    def test_findings(self):
        found = [Finding("files", "calls fopen: no files"), Finding("copies", "calls cudaMemcpy: no copies"),
                 Finding("startup", "runs f() before main: no")]
        r = score_static_check("03-sequential", Verdict(found), "reduce.cu")
        self.assertEqual((r.score, r.max_score, r.status, r.full), (0, 0, "FORBIDDEN", False))
        self.assertEqual(r.summary, "calls fopen: no files (and 2 more findings below)")
        self.assertEqual(r.detail.splitlines()[:4], ["compiled reduce.cu:", "- calls fopen: no files",
                                                     "- calls cudaMemcpy: no copies", "- runs f() before main: no"])
        self.assertEqual(r.data["findings"][1], {"rule": "copies", "message": "calls cudaMemcpy: no copies"})
        one = score_static_check("03-sequential", Verdict(found[:1]), "reduce.cu")
        self.assertEqual(one.summary, "calls fopen: no files")

    def test_a_row_of_no_points_is_full_only_when_it_passed(self):
        self.assertFalse(not_run("03-sequential", "static checks", 0.0, "not run: reduce.cu does not compile").full)
        self.assertFalse(not_run("03-sequential", "datasets", 10.0, "not run").full)


if __name__ == "__main__":
    unittest.main()
