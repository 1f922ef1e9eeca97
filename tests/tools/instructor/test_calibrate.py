"""tools/instructor/calibrate.py (the thresholds rule of labs.toml, the thresholds file) with fake benchmark measurements, and
grader/config.py (how grader/config.py lays grader/thresholds.d/ over labs.toml)."""
import contextlib
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path

from grader.config import ConfigError, DEFAULT_PATH, load_config
from tests.grader.fakes import SMALL_TOML, write_file

from tools.instructor import calibrate

# What `make calibrate` would have measured on an H100 (the speedups of three rounds), as build/calibrate/*.json.
FAKE = {"gpu": "NVIDIA Fake GPU 80GB", "sm": "9.0", "size": "2^26", "repeats": 3, "when": "2026-11-22",
        "speedups": {"01-global-strided": [0.98, 0.97, 0.99], "02-shared-strided": [1.16, 1.16, 1.15],
                     "03-sequential": [2.8, 2.81, 2.79], "04-unrolled": [6.33, 6.3, 6.4],
                     "05-coarsened": [10.88, 10.9, 10.8], "06-scan": [0.55, 0.55, 0.56],
                     "07-compact": [0.79, 0.78, 0.8], "08-single-pass": [1.03, 1.03, 1.02]}}


class Rule(unittest.TestCase):
    def setUp(self):
        self.config = load_config()
        self.labs = {lab.name: lab for lab in self.config.labs}

    def test_rounding_halves_up(self):
        self.assertEqual([calibrate.r2(x) for x in (0.355, 0.3555, 0.2475, 2.529, 1.0)], [0.36, 0.36, 0.25, 2.53, 1.0])
        self.assertEqual(calibrate.gpu_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3")

    def test_previous_rungs(self):
        """Over every lab of labs.toml: the labs timed against the baseline form one ladder per pattern, in
        labs.toml's order, each lab's previous rung the one before it there; the first rung and a lab timed against
        CUB have none."""
        labs = list(self.config.labs)
        ladders = {}
        for lab in labs:
            with self.subTest(lab=lab.name):
                rung = calibrate.previous_rung(lab, labs)
                if not lab.performance or lab.performance.yardstick != "baseline":
                    self.assertIsNone(rung)
                    continue
                ladder = ladders.setdefault(lab.pattern, [])
                self.assertEqual(rung.name if rung else None, ladder[-1] if ladder else None)
                ladder.append(lab.name)
        self.assertTrue(any(len(ladder) > 1 for ladder in ladders.values()), "no ladder of two rungs or more")

    def test_the_rule_gives_labs_tomls_calibrated_thresholds(self):
        """Every calibrated GPU's lower and full in labs.toml follow from the measured speedups (within 0.01: one
        hand-rounded value)."""
        labs = list(self.config.labs)
        gpus = {gpu for lab in labs if lab.performance for gpu, _ in lab.performance.gpus}
        self.assertTrue(gpus)
        for gpu in gpus:
            measured = {lab.name: dict(lab.performance.gpus)[gpu].measured for lab in labs
                        if lab.performance and gpu in dict(lab.performance.gpus)}
            result = calibrate.calibrate(self.config, {k: [v] for k, v in measured.items()}, list(measured))
            for name, t in result.items():
                want = dict(self.labs[name].performance.gpus)[gpu]
                with self.subTest(gpu=gpu, lab=name):
                    self.assertAlmostEqual(t["full"], want.full, delta=0.0101)
                    self.assertAlmostEqual(t["lower"], want.lower, delta=0.0101)

    def test_each_kind_of_lab(self):
        t = calibrate.calibrate(self.config, FAKE["speedups"], ["01-global-strided", "03-sequential", "07-compact"])
        self.assertEqual({k: (v["measured"], v["lower"], v["full"]) for k, v in t.items()}, {
            "01-global-strided": (0.98, 0.5, 0.8), "03-sequential": (2.8, 1.16, 2.52),
            "07-compact": (0.79, 0.36, 0.71)})
        self.assertEqual(t["03-sequential"]["runs"], [2.8, 2.81, 2.79])

    def test_a_previous_rung_faster_than_this_labs_full(self):
        t = calibrate.thresholds(self.labs["03-sequential"], 1.1, 1.05)
        self.assertEqual((t["lower"], t["full"]), (0.5, 0.99))
        self.assertIn("more than this lab's full", t["why"])

    def test_a_missing_previous_rung(self):
        with self.assertRaisesRegex(KeyError, "02-shared-strided"):
            calibrate.calibrate(self.config, {"03-sequential": [2.8]}, ["03-sequential"])


class ThresholdsFiles(unittest.TestCase):
    """A copy of labs.toml in a temp folder, with thresholds.d/ beside it."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.toml = self.dir / "labs.toml"
        shutil.copyfile(DEFAULT_PATH, self.toml)
        self.folder = self.dir / "thresholds.d"

    def run_cli(self, *argv) -> tuple:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = calibrate.main([*argv, "--config", str(self.toml)])
        return status, out.getvalue(), err.getvalue()

    def fake(self, **changes) -> Path:
        path = self.dir / "fake.json"
        path.write_text(json.dumps({**FAKE, **changes}))
        return path

    def test_the_written_file_is_what_the_grader_uses(self):
        status, out, err = self.run_cli("--from", str(self.fake()), "--labs", "03,07")
        self.assertEqual(status, 0, err)
        path = self.folder / "nvidia-fake-gpu-80gb.toml"
        self.assertIn(f"wrote {path}", out)
        self.assertRegex(out, r"03-sequential +2\.8 +1\.16 +2\.52 +2\.8, 2\.81, 2\.79")
        text = path.read_text()
        self.assertIn('[labs.03-sequential.performance.gpus."NVIDIA Fake GPU 80GB"]\nmeasured = 2.8', text)
        self.assertNotIn("02-shared-strided.performance", text)  # timed for lab 03's lower, not written
        config = load_config(self.toml)
        labs = {lab.name: lab for lab in config.labs}
        self.assertEqual(labs["03-sequential"].performance.thresholds_for("NVIDIA Fake GPU 80GB"),
                         (1.16, 2.52, "NVIDIA Fake GPU 80GB"))
        self.assertEqual(labs["07-compact"].performance.thresholds_for("NVIDIA Fake GPU 80GB")[:2], (0.36, 0.71))
        self.assertEqual(labs["04-unrolled"].performance.thresholds_for("NVIDIA Fake GPU 80GB")[2], "")  # defaults
        self.assertIn("NVIDIA Fake GPU 80GB", config.calibration["gpu"])
        self.assertIn("thresholds.d/nvidia-fake-gpu-80gb.toml", config.calibration["calibrated_on"])
        # a second calibration of other labs keeps the first's
        status, _, err = self.run_cli("--from", str(self.fake()), "--labs", "05")
        self.assertEqual(status, 0, err)
        text = path.read_text()
        self.assertIn("labs.03-sequential.performance", text)
        self.assertIn("labs.05-coarsened.performance", text)

    def test_the_reference_runs_give_the_time_limits(self):
        """The reference solution's slowest run of each group, from the grading make calibrate made, is written
        (run_seconds) and read back: labs.toml's [limits] rule makes each run's time limit from it."""
        runs = {"03-sequential": {"datasets": 0.35, "large sizes": 2.913}}
        status, _, err = self.run_cli("--from", str(self.fake(run_seconds=runs)), "--labs", "03")
        self.assertEqual(status, 0, err)
        text = (self.folder / "nvidia-fake-gpu-80gb.toml").read_text()
        self.assertIn('run_seconds = {"datasets" = 0.35, "large sizes" = 2.91}', text)
        lab = {lab.name: lab for lab in load_config(self.toml).labs}["03-sequential"]
        self.assertEqual(lab.reference_run_seconds("NVIDIA Fake GPU 80GB", "large sizes"), 2.91)
        self.assertIsNone(lab.reference_run_seconds("NVIDIA Fake GPU 80GB", "edge sizes"))
        self.assertIsNone(lab.reference_run_seconds("Tesla T4", "large sizes"))

    def test_a_file_overrides_labs_tomls_own_table_for_its_gpu(self):
        status, _, err = self.run_cli("--from", str(self.fake(gpu="NVIDIA H200")), "--labs", "05")
        self.assertEqual(status, 0, err)
        labs = {lab.name: lab for lab in load_config(self.toml).labs}
        self.assertEqual(labs["05-coarsened"].performance.thresholds_for("NVIDIA H200")[:2], (6.33, 9.79))
        self.assertEqual(dict(labs["05-coarsened"].performance.gpus)["NVIDIA H200"].measured, 10.88)

    def test_dry_run_writes_nothing(self):
        status, out, _ = self.run_cli("--from", str(self.fake()), "--labs", "01", "--dry-run")
        self.assertEqual(status, 0)
        self.assertIn("[calibration]", out)
        self.assertFalse(self.folder.exists())

    def test_defaults_stricter_than_this_gpu_are_pointed_out(self):
        slow = {k: [v[0] / 3] for k, v in FAKE["speedups"].items()}
        status, _, err = self.run_cli("--from", str(self.fake(speedups=slow)), "--labs", "04")
        self.assertEqual(status, 0, err)
        self.assertIn("04-unrolled: labs.toml's defaults for other GPUs", err)

    def test_bad_measurements(self):
        status, _, err = self.run_cli("--from", str(self.fake(speedups={"03-sequential": [2.8]})), "--labs", "03")
        self.assertEqual(status, 2)
        self.assertIn("no measurements of 02-shared-strided", err)
        status, _, err = self.run_cli("--from", str(self.dir / "none.json"))
        self.assertEqual(status, 2)
        status, _, err = self.run_cli("--labs", "99")
        self.assertEqual(status, 2)
        self.assertIn("no lab with a performance test matches", err)

    def test_without_a_gpu_it_says_so(self):
        if calibrate.no_gpu_reason() is None:
            self.skipTest("this machine has a GPU: make calibrate would really calibrate")
        status, _, err = self.run_cli("--labs", "03")
        self.assertEqual(status, calibrate.NO_DEVICE)
        self.assertIn("make calibrate needs an NVIDIA GPU", err)


class Merge(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.toml = write_file(self.dir, "labs.toml", SMALL_TOML + '\n[labs.03-third]\npattern = "reduce"\n'
                                                                  'source = "reduce.cu"\nsuite = "s"\n')

    def thresholds(self, name, text):
        return write_file(self.dir, f"thresholds.d/{name}", '[calibration]\ngpu = "G"\ncalibrated_on = "today"\n'
                          + text)

    def table(self, lab="01-first", gpu="G", body="measured = 2.0\nlower = 1.0\nfull = 1.8\n"):
        return f'\n[labs.{lab}.performance.gpus."{gpu}"]\n{body}'

    def test_no_folder_no_change(self):
        self.assertEqual(load_config(self.toml).labs[0].performance.gpus, ())

    def test_laid_over(self):
        self.thresholds("g.toml", self.table())
        perf = load_config(self.toml).labs[0].performance
        self.assertEqual(perf.thresholds_for("G"), (1.0, 1.8, "G"))

    def test_errors_name_the_file(self):
        cases = [
            (self.table(lab="09-none"), "thresholds.d/g.toml: labs.09-none: no such lab in labs.toml"),
            (self.table(lab="03-third"), "labs.03-third: this lab has no performance test"),
            (self.table(body="lower = 1.0\n"), "expected lower, full and measured"),
            (self.table(body="lower = 0\nfull = 1.0\n"), "lower: expected a positive number"),
            (self.table(body="lower = 2.0\nfull = 1.0\n"), "lower (2) must not exceed full (1)"),
            ("\n[labs.01-first]\npoints = 3\n", "expected only performance.gpus"),
            ("\n[other]\nx = 1\n", "unknown: other"),
            ("x = [", "thresholds.d/g.toml: not valid TOML"),
        ]
        for text, message in cases:
            with self.subTest(message=message):
                self.thresholds("g.toml", text)
                with self.assertRaisesRegex(ConfigError, message.replace("(", r"\(").replace(")", r"\)")):
                    load_config(self.toml)

    def test_two_files_may_not_calibrate_the_same_lab_and_gpu(self):
        self.thresholds("a.toml", self.table())
        self.thresholds("b.toml", self.table())
        with self.assertRaisesRegex(ConfigError, "b.toml: labs.01-first: G is calibrated in thresholds.d/a.toml"):
            load_config(self.toml)


if __name__ == "__main__":
    unittest.main()
