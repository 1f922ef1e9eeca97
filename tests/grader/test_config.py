"""grader/config.py: the real labs.toml is consistent, and bad files give errors that name the key."""
import tempfile
import unittest
from pathlib import Path

from grader.config import ConfigError, load_config
from grader.patterns import KIT, PATTERNS, parse_sizes
from tests.grader.fakes import SMALL_TOML, write_file

REDUCE = ["01-global-strided", "02-shared-strided", "03-sequential", "04-unrolled", "05-coarsened"]
LABS = REDUCE + ["06-scan", "07-compact", "08-single-pass"]


def free_number(config) -> str:
    """A lab number (two digits) no lab of config has: for tests of a selection that matches nothing."""
    taken = {lab.name[:2] for lab in config.labs}
    return next(f"{k:02d}" for k in range(1, 100) if f"{k:02d}" not in taken)


def sizes(text: str) -> list:
    """The sizes of a --n list ("1,1025,2^20+1"), read by the kit's one parser (grader/patterns.py, which
    tests/grader/test_patterns.py holds to the harness's ppl_parse_sizes); ValueError for a list it refuses."""
    found = parse_sizes(text)
    if found is None:
        raise ValueError(f"bad size list {text!r}")
    return found


def run_sizes(run) -> list:
    return sizes(run[run.index("--n") + 1]) if "--n" in run else []


class RealLabsToml(unittest.TestCase):
    def setUp(self):
        self.config = load_config()
        self.labs = {lab.name: lab for lab in self.config.labs}

    def test_every_lab_is_there(self):
        """Over every lab of labs.toml: numbered in order, one number each, its folders in labs/ and solutions/,
        its file named after its pattern, its pattern's groups, a benchmark; today's eight among them."""
        names = [lab.name for lab in self.config.labs]
        self.assertEqual(names, sorted(names))
        self.assertEqual(len({name[:2] for name in names}), len(names), "two labs share a number")
        self.assertLessEqual(set(LABS), set(names))
        for lab in self.config.labs:
            with self.subTest(lab=lab.name):
                self.assertEqual(lab.source, f"{lab.pattern}.cu")
                suite = PATTERNS[lab.pattern].suite["groups"]  # the pattern's groups (patterns/NAME/pattern.toml)
                self.assertEqual([g.name for g in lab.groups], [g["name"] for g in suite])
                self.assertIsNotNone(lab.performance)
                for root in ("labs", "solutions"):
                    self.assertTrue((KIT / root / lab.name / lab.source).is_file(),
                                    f"{root}/{lab.name}/{lab.source} is missing (docs/AUTHORING.md, 'A new lab of an "
                                    f"existing pattern')")
            self.assertEqual(lab.max_score, 100, lab.name)
            self.assertEqual(lab.bonus, lab.name == "08-single-pass", lab.name)

    def test_scan_and_compact_points(self):
        for name in ("06-scan", "07-compact", "08-single-pass"):
            lab = self.labs[name]
            self.assertEqual({g.name: g.points for g in lab.groups},
                             {"datasets": 10, "edge sizes": 25, "large sizes": 15}, name)
            self.assertEqual((lab.performance.points, lab.performance.bench), (50, "2^26"), name)

    def test_yardsticks(self):
        for lab in self.config.labs:
            self.assertEqual(lab.performance.yardstick, "baseline" if lab.pattern == "reduce" else "cub", lab.name)

    def test_single_pass_checks_one_block_algorithm(self):
        self.assertEqual(self.labs["08-single-pass"].args, ("--algorithms", "brent-kung"))
        self.assertEqual(self.labs["06-scan"].args, ())
        self.assertIs(self.labs["08-single-pass"].groups, self.labs["06-scan"].groups)

    def test_datasets(self):
        folders = {name: next(g for g in self.labs[name].groups if g.name == "datasets")
                   for name in ("01-global-strided", "06-scan", "07-compact")}
        self.assertEqual((folders["01-global-strided"].datasets, folders["01-global-strided"].expected),
                         ("datasets/reduce", True))
        self.assertEqual((folders["06-scan"].datasets, folders["06-scan"].expected), ("datasets/scan", True))
        self.assertEqual((folders["07-compact"].datasets, folders["07-compact"].expected), ("datasets/compact", False))

    def test_thresholds_are_ordered_and_below_the_measured_ladder(self):
        for lab in self.config.labs:
            perf = lab.performance
            self.assertLess(perf.lower, perf.full, lab.name)
            self.assertTrue(perf.gpus, f"{lab.name}: no GPU model calibrated: run make calibrate LAB={lab.name[:2]} on "
                                       f"a GPU (docs/AUTHORING.md, 'Calibrating thresholds')")
            for gpu, t in perf.gpus:
                self.assertLess(t.lower, t.full, (lab.name, gpu))
                if t.measured is not None:  # the reference solution must clear its own GPU's full mark
                    self.assertLessEqual(t.full, t.measured, (lab.name, gpu))
                # the defaults are the most lenient of the calibrated GPUs
                self.assertLessEqual(perf.full, t.full, (lab.name, gpu))
                self.assertLessEqual(perf.lower, t.lower, (lab.name, gpu))
        for gpu in {g for lab in self.config.labs for g, _ in lab.performance.gpus}:
            ladder = [lab.name for lab in self.config.labs
                      if lab.pattern == "reduce" and lab.performance.yardstick == "baseline"]
            fulls = [self.labs[name].performance.thresholds_for(gpu)[1] for name in ladder]
            self.assertEqual(fulls, sorted(fulls), f"{gpu}: each reduction lab should be expected to be faster")
        for lab in self.config.labs:
            if lab.performance.yardstick == "cub":
                self.assertLessEqual(lab.performance.full, 1.0, f"{lab.name}: full marks faster than CUB?")

    def test_calibration_is_named(self):
        self.assertIn("gpu", self.config.calibration)
        self.assertIn("calibrated_on", self.config.calibration)

    def test_the_harness_takes_every_size(self):
        """Each run's sizes parse as the harness reads them; integer data stays within n <= 2^20; scan and compaction
        sizes stay below 2^31 (int32 positions and prefix sums). tests/grader/test_build.py hands every run to the
        real programs too."""
        for lab in self.config.labs:
            for group in lab.groups:
                for run in group.runs:
                    found = run_sizes(run)
                    self.assertTrue(found, f"{lab.name}: {group.name}")
                    if "integer" in run:
                        self.assertLessEqual(max(found), 2 ** 20, f"{lab.name}: {group.name}")
                    if lab.pattern != "reduce":
                        self.assertLess(max(found), 2 ** 31, f"{lab.name}: {group.name}")
            self.assertEqual(len(sizes(lab.performance.bench)), 1)

    def test_large_sizes_pass_2_to_the_31_bytes(self):
        group = next(g for g in self.labs["01-global-strided"].groups if g.name == "large sizes")
        biggest = max(max(run_sizes(r)) for r in group.runs)
        self.assertGreater(biggest * 4, 2 ** 31)
        for name in ("06-scan", "07-compact"):
            group = next(g for g in self.labs[name].groups if g.name == "large sizes")
            self.assertGreater(max(max(run_sizes(r)) for r in group.runs) * 4, 2 ** 29, name)

    def test_select(self):
        self.assertEqual([lab.name for lab in self.config.select("03")], ["03-sequential"])
        self.assertEqual([lab.name for lab in self.config.select("04-unrolled")], ["04-unrolled"])
        self.assertEqual([lab.name for lab in self.config.select("08")], ["08-single-pass"])
        self.assertEqual(len(self.config.select(None)), len(self.config.labs))
        with self.assertRaisesRegex(ConfigError, "no lab matches.*01-global-strided"):
            self.config.select(free_number(self.config))


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

    def test_limits(self):
        self.assertEqual(self.load(SMALL_TOML).limits.for_run(simulator=False), 8192)  # the harness's defaults
        self.assertEqual(self.load(SMALL_TOML).limits.for_run(simulator=True), 512)
        limits = self.load(SMALL_TOML + "\n[limits]\nhost_memory_mib = 4096\n").limits
        self.assertEqual((limits.for_run(False), limits.for_run(True)), (4096, 512))
        self.assertBad(SMALL_TOML + "\n[limits]\nhost_memory_mib = 16\n",
                       r"limits.host_memory_mib: expected a whole number of MiB, at least 64, got 16")
        self.assertBad(SMALL_TOML + "\n[limits]\nhost_memory = 4096\n", r"limits: unknown key host_memory")
        self.assertBad(SMALL_TOML.replace('suite = "s"', 'suite = "s"\nargs = ["--host-memory-mib", "1"]', 1),
                       r"--host-memory-mib is set by the grader, not in labs.toml")

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

    def test_gpu_thresholds(self):
        config = self.load(SMALL_TOML.replace("full = 3.0", 'full = 3.0\n\n[labs.01-first.performance.gpus."NVIDIA H200"]\n'
                                                            "lower = 2.0\nfull = 5.0\nmeasured = 5.5", 1))
        perf = config.labs[0].performance
        self.assertEqual(perf.thresholds_for("NVIDIA H200"), (2.0, 5.0, "NVIDIA H200"))
        self.assertEqual(perf.thresholds_for("Tesla T4"), (1.0, 3.0, ""))

    def test_gpu_thresholds_lower_above_full(self):
        self.assertBad(SMALL_TOML.replace("full = 3.0", 'full = 3.0\n\n[labs.01-first.performance.gpus."X"]\n'
                                                        "lower = 6.0\nfull = 5.0", 1),
                       r"gpus.'X': lower \(6\) must not exceed full \(5\)")

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

    def test_unknown_yardstick(self):
        self.assertBad(SMALL_TOML.replace('full = 3.0', 'full = 3.0\nyardstick = "thrust"', 1),
                       "performance.yardstick: expected one of baseline, cub, got 'thrust'")

    def test_yardstick_and_bonus_load(self):
        config = self.load(SMALL_TOML.replace('full = 3.0', 'full = 3.0\nyardstick = "cub"', 1).replace(
            'suite = "s"', 'suite = "s"\nbonus = true\nargs = ["--algorithms", "brent-kung"]', 1))
        first, second = config.labs
        self.assertEqual((first.performance.yardstick, first.bonus, first.args),
                         ("cub", True, ("--algorithms", "brent-kung")))
        self.assertEqual((second.performance.yardstick, second.bonus, second.args), ("baseline", False, ()))

    def test_bonus_must_be_a_boolean(self):
        self.assertBad(SMALL_TOML.replace('suite = "s"', 'suite = "s"\nbonus = "yes"', 1),
                       "labs.01-first.bonus: expected true or false")

    def test_lab_args_must_not_set_the_seed(self):
        self.assertBad(SMALL_TOML.replace('suite = "s"', 'suite = "s"\nargs = ["--seed", "1"]', 1),
                       "labs.01-first.args: --seed is set by the grader")
        self.assertBad(SMALL_TOML.replace('suite = "s"', 'suite = "s"\nargs = []', 1),
                       "labs.01-first.args: expected a non-empty list")

    def test_expected_only_with_datasets(self):
        self.assertBad(SMALL_TOML.replace('name = "small"', 'name = "small"\nexpected = false'),
                       r"groups\[0\].expected: only a datasets group has expected files")
        runs = 'runs = [["--data", "uniform", "--n", "1,2,3"]]'
        config = self.load(SMALL_TOML.replace(runs, 'datasets = "datasets/x"\nexpected = false', 1))
        self.assertEqual((config.labs[0].groups[0].datasets, config.labs[0].groups[0].expected), ("datasets/x", False))
        self.assertTrue(config.labs[0].groups[1].expected)

    def test_bad_pattern(self):
        self.assertBad(SMALL_TOML.replace('pattern = "reduce"', 'pattern = "../reduce"', 1),
                       "pattern: expected a harness family")

    def test_duplicate_group(self):
        self.assertBad(SMALL_TOML.replace('name = "exact"', 'name = "small"'), "'small' appears twice")


if __name__ == "__main__":
    unittest.main()
