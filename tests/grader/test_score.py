"""grader/score.py: groups are all or nothing, performance is linear between lower and full, the static checks'
row has no points but can fail."""
import unittest

from grader.config import GpuThresholds, Group, Performance
from grader.run import Outcome
from grader.score import not_run, perf_fraction, score_group, score_performance, score_static_check
from grader.static_check import Finding, Verdict

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
        r = score_performance("lab", PERF, bench(1.5), calibration_gpu="NVIDIA H200")
        self.assertIn("measured on NVIDIA H100 80GB HBM3", r.detail)
        self.assertIn("no thresholds are calibrated for this GPU model, so the defaults apply (from NVIDIA H200)",
                      r.detail)

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
