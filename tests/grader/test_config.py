"""grader/config.py: the real labs.toml is consistent, and bad files give errors that name the key."""
import tempfile
import unittest
from pathlib import Path

from grader.config import ConfigError, load_config
from grader.run import parse_sizes, case_names
from tests.grader.fakes import SMALL_TOML, write_file

LABS = ["01-global-strided", "02-shared-strided", "03-sequential", "04-unrolled", "05-coarsened"]


class RealLabsToml(unittest.TestCase):
    def setUp(self):
        self.config = load_config()

    def test_every_reduction_lab_is_there(self):
        self.assertEqual([lab.name for lab in self.config.labs], LABS)
        for lab in self.config.labs:
            self.assertEqual((lab.pattern, lab.source), ("reduce", "reduce.cu"))
            self.assertEqual([g.name for g in lab.groups],
                             ["datasets", "edge sizes", "exact integer data", "large sizes"])
            self.assertIsNotNone(lab.performance)
            self.assertGreater(lab.max_score, 0)

    def test_thresholds_are_ordered_and_below_the_measured_ladder(self):
        for lab in self.config.labs:
            perf = lab.performance
            self.assertLess(perf.lower, perf.full, lab.name)
            self.assertLessEqual(perf.full, perf.measured, lab.name)
        fulls = [lab.performance.full for lab in self.config.labs]
        self.assertEqual(fulls, sorted(fulls), "each lab should be expected to be faster than the last")

    def test_calibration_is_named(self):
        self.assertIn("gpu", self.config.calibration)
        self.assertIn("calibrated_on", self.config.calibration)

    def test_the_harness_accepts_every_run(self):
        """Each run's sizes parse as the harness reads them; integer data stays within n <= 2^20."""
        for lab in self.config.labs:
            for group in lab.groups:
                for run in group.runs:
                    names = case_names(run)
                    self.assertTrue(names)
                    if "integer" in run:
                        sizes = parse_sizes(run[run.index("--n") + 1])
                        self.assertLessEqual(max(sizes), 2 ** 20, f"{lab.name}: {group.name}")
            self.assertEqual(len(parse_sizes(lab.performance.bench)), 1)

    def test_large_sizes_pass_2_to_the_31_bytes(self):
        group = next(g for g in self.config.labs[0].groups if g.name == "large sizes")
        biggest = max(max(parse_sizes(r[r.index("--n") + 1])) for r in group.runs)
        self.assertGreater(biggest * 4, 2 ** 31)

    def test_select(self):
        self.assertEqual([lab.name for lab in self.config.select("03")], ["03-sequential"])
        self.assertEqual([lab.name for lab in self.config.select("04-unrolled")], ["04-unrolled"])
        self.assertEqual(len(self.config.select(None)), 5)
        with self.assertRaisesRegex(ConfigError, "no lab matches.*01-global-strided"):
            self.config.select("09")


class BadFiles(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def load(self, text):
        return load_config(write_file(self.tmp.name, "labs.toml", text))

    def assertBad(self, text, pattern):
        with self.assertRaisesRegex(ConfigError, pattern):
            self.load(text)

    def test_small_file_loads(self):
        config = self.load(SMALL_TOML)
        self.assertEqual([lab.name for lab in config.labs], ["01-first", "02-second"])
        self.assertEqual(config.labs[0].max_score, 60)
        self.assertEqual(config.labs[0].groups[1].runs[1], ("--data", "signs", "--n", "7"))

    def test_missing_file(self):
        with self.assertRaisesRegex(ConfigError, "cannot read .*nowhere.toml"):
            load_config(Path(self.tmp.name) / "nowhere.toml")

    def test_not_toml(self):
        self.assertBad("[calibration\n", r"labs.toml: not valid TOML: .*line 1")

    def test_missing_calibration(self):
        self.assertBad(SMALL_TOML.replace('[calibration]\ngpu = "NVIDIA H200"\ncalibrated_on = "test"', ""),
                       "labs.toml: missing calibration")

    def test_unknown_key(self):
        self.assertBad(SMALL_TOML.replace("points = 10", "points = 10\npoint = 3"),
                       r"suites.s.groups\[0\]: unknown key point")

    def test_lower_above_full(self):
        self.assertBad(SMALL_TOML.replace("lower = 1.0", "lower = 4.0", 1),
                       r"labs.01-first.performance: lower \(4\) must not exceed full \(3\)")

    def test_negative_points(self):
        self.assertBad(SMALL_TOML.replace("points = 20", "points = -1"), r"groups\[1\].points: expected a number")

    def test_group_with_runs_and_datasets(self):
        self.assertBad(SMALL_TOML.replace('name = "small"', 'name = "small"\ndatasets = "datasets/reduce"'),
                       "exactly one of runs and datasets")

    def test_runs_must_not_set_the_seed(self):
        self.assertBad(SMALL_TOML.replace('"--n", "1,2,3"', '"--n", "1,2,3", "--seed", "4"'),
                       "--seed is set by the grader")

    def test_runs_must_be_lists_of_strings(self):
        self.assertBad(SMALL_TOML.replace('["--data", "signs", "--n", "7"]', '["--n", 7]'),
                       "non-empty list of non-empty lists of strings")

    def test_unknown_suite(self):
        self.assertBad(SMALL_TOML.replace('suite = "s"', 'suite = "t"', 1), r"no \[suites.t\]")

    def test_bad_lab_name(self):
        self.assertBad(SMALL_TOML.replace("01-first", "first"), "a lab's name is its folder's")

    def test_bad_bench_size(self):
        self.assertBad(SMALL_TOML.replace('bench = "2^10"', 'bench = "lots"', 1), "bench: expected a size")

    def test_duplicate_group(self):
        self.assertBad(SMALL_TOML.replace('name = "exact"', 'name = "small"'), "'small' appears twice")


if __name__ == "__main__":
    unittest.main()
