"""Simulator grading (grade.py --simulator, grader/sim/simulator.py) over fake harness programs: what it tells a student
without a GPU. A failed run's reproduction line is the simulator's command (make sim ... ARGS='...'), never the GPU's
lab program; a hung run fails the grading (exit status 1), bonus lab or not, and says so; a grading of bonus labs
alone says that its maximum of 0 is not a mistake. Also grader/run/no_gpu.py's message, the text every GPU-only command
prints without a GPU. tests/sim runs the real simulator."""
import contextlib
import io
import json
import os
import shlex
import subprocess
import unittest
from pathlib import Path
from unittest import mock

from grader.run import no_gpu
from grader.sim import simulator
from grader.grade import main
from grader.report.report import Report, format_table
from grader.run.run import run_harness
from grader.score.score import TestResult, reproduce_line
from tests.grader.fakes import PASS, SMALL_TOML, make_submission, write_file
from tests.grader.test_grade import BONUS_TOML, GradingRun, harness_ok

KIT = Path(__file__).resolve().parents[2]
# 03-bonus whose exact data hangs: the first group passes, the second never ends.
HANGS = """
if "integer" in ARGS:
    emit(CASES[0]); time.sleep(60)
"""
FAILS = "if 'integer' in ARGS: emit(CASES[0], 'fail', message='wrong sum'); sys.exit(1)\n"


def run_one(program, args, **kwargs):
    """The grader's plain run_harness (no report channel), as the simulator's grader runs: one run at a time (given
    run_harness itself, the Grader would run a lab's groups through one runner, as on a GPU)."""
    return run_harness(program, args, **kwargs)


class SimCommandLine(GradingRun):
    """grade.main(--simulator) with fake programs, run one at a time without the simulator's report channel."""

    def main(self, config_text, programs, *extra, env=None):
        config = write_file(self.dir, "labs.toml", config_text)
        self.submission = make_submission(self.dir / "sub", ["01-first", "02-second", ("03-bonus", "scan.cu")])
        results = self.dir / "out" / "results.json"
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), \
                mock.patch.object(simulator, "SIM_TIMEOUT", 1.0), mock.patch.dict(os.environ, env or {}):
            status = main(["--simulator", "--config", str(config), "--submission", str(self.submission),
                           "--build-dir", str(self.dir / "build"), "--results", str(results), "--seed", "12345",
                           *extra], kit=self.kit, build=self.build_hook(programs, load(config)),
                          build_harness=harness_ok, check=self.check_hook, run=run_one)
        return status, out.getvalue(), json.loads(results.read_text())

    def test_a_hung_bonus_lab_fails_the_grading_and_says_so(self):
        status, out, data = self.main(BONUS_TOML, {"03-bonus": self.fake(HANGS + PASS)}, "--lab", "03")
        self.assertEqual(status, 1, out)
        self.assertRegex(out, r"  exact +0 / 20 +TIMEOUT .*timed out after 1 s")
        self.assertIn("Hung: 03-bonus: a run never finished (TIMEOUT above), so this grading fails (exit status 1), "
                      "bonus lab or not", out)
        self.assertEqual(out.rstrip().splitlines()[-2],  # the table's last line; then where the results are
                         "Total 10 / 0 (10 of them bonus points, of 60: a bonus lab's points are outside the "
                         "total's maximum)", out)
        self.assertIn("Hung: 03-bonus", data["output"])

    def test_a_hang_outside_the_bonus_lab_fails_too(self):
        status, out, _ = self.main(SMALL_TOML, {"01-first": self.fake(HANGS + PASS)}, "--lab", "01")
        self.assertEqual(status, 1, out)
        self.assertIn("Hung: 01-first", out)

    def test_a_passing_bonus_lab_alone_exits_0_and_its_total_says_why_the_maximum_is_0(self):
        status, out, data = self.main(BONUS_TOML, {"03-bonus": self.fake(PASS)}, "--lab", "03")
        self.assertEqual(status, 0, out)
        self.assertNotIn("Hung", out)
        # the performance test needs a GPU: 30 of the lab's 60 points ran
        self.assertEqual(out.rstrip().splitlines()[-2],  # the table's last line; then where the results are
                         "Total 30 / 0 (30 of them bonus points, of 60: a bonus lab's points are outside the "
                         "total's maximum)", out)
        self.assertEqual((data["score"], data["extra_data"]["max_score"]), (30, 0))

    def test_a_failed_bonus_lab_still_does_not_decide_the_exit_status(self):
        status, out, _ = self.main(BONUS_TOML, {"01-first": self.fake(PASS, name="one"),
                                                "02-second": self.fake(PASS, name="two"),
                                                "03-bonus": self.fake(FAILS + PASS, name="bonus")})
        self.assertEqual(status, 0, out)
        self.assertNotIn("Hung", out)

    def test_the_reproduction_line_is_the_simulators_command(self):
        status, out, data = self.main(SMALL_TOML, {"01-first": self.fake(FAILS + PASS, name="reduce_lab")},
                                      "--lab", "01")
        self.assertEqual(status, 1, out)
        line = next(ln.strip() for ln in out.splitlines() if "to reproduce" in ln)
        self.assertEqual(line, f"to reproduce on the simulator, from the kit's root: make sim LAB=01 "
                               f"SUBMISSION={self.submission.resolve()} ARGS='--data integer --n 5,6 --seed 12345'")
        self.assertNotIn("build/reduce_lab", out)  # the GPU's program: it exits 77 without a GPU
        self.assertIn(line, json.dumps(data["tests"]).replace("\\n", "\n").replace('\\"', '"'))

    def test_in_a_lab_folder_the_reproduction_line_is_that_folders(self):
        _, out, _ = self.main(SMALL_TOML, {"01-first": self.fake(FAILS + PASS)}, "--lab", "01",
                              env={no_gpu.HERE_VARIABLE: str(self.dir / "sub" / "01-first")})
        self.assertIn("to reproduce on the simulator, in this lab's folder: make sim ARGS='--data integer --n 5,6 "
                      "--seed 12345'", out)


def load(path):
    from grader.config import load_config
    return load_config(path)


class ReproductionLine(unittest.TestCase):
    def test_kit_labs_and_other_folders(self):
        args = ["--dataset", "datasets/reduce/0003-n2-uniform/input.raw", "--sandbox", "require"]
        self.assertEqual(simulator.sim_reproduce_line("01-global-strided", args, KIT / "labs", KIT),
                         "to reproduce on the simulator, from the kit's root: make sim LAB=01 "
                         "ARGS='--dataset datasets/reduce/0003-n2-uniform/input.raw'")
        self.assertIn("make sim LAB=06 SUBMISSION=solutions ARGS=",
                      simulator.sim_reproduce_line("06-scan", ["--n", "33"], KIT / "solutions", KIT))
        self.assertIn("SUBMISSION='/tmp/my work' ARGS='--n 33'",
                      simulator.sim_reproduce_line("06-scan", ["--n", "33"], Path("/tmp/my work"), KIT))
        self.assertEqual(simulator.sim_reproduce_line("06-scan", ["--n", "33"], KIT / "labs", KIT, here=True),
                         "to reproduce on the simulator, in this lab's folder: make sim ARGS='--n 33'")

    def test_the_make_sim_command_takes_the_arguments_back(self):
        """ARGS='...' as make passes it on (--args "$(ARGS)"), split as tools/student/sim.py splits it: the same
        list."""
        args = ["--data", "uniform", "--n", "1,2,1025", "--input-const", "--seed", "12345"]
        line = simulator.sim_reproduce_line("03-sequential", args, KIT / "labs", KIT)
        words = shlex.split(line.split(": ", 1)[1])
        self.assertEqual(words[:3], ["make", "sim", "LAB=03"])
        self.assertEqual(shlex.split(words[3].removeprefix("ARGS=")), args)

    def test_sim_grader_replaces_exactly_the_gpu_line(self):
        gpu = reproduce_line("01-global-strided", ["--n", "5"], "reduce_lab")
        self.assertTrue(gpu.startswith("to reproduce, from the kit's root: make -C labs/01-global-strided && "))


class HangsAndTotals(unittest.TestCase):
    def report(self, *results):
        report = Report("sub", 1)
        report.results.extend(results)
        return report

    def test_sim_full_marks(self):
        ok = TestResult("01-a", "small", 10, 10, "pass")
        gpu = TestResult("01-a", "large", 10, 0, simulator.NEEDS_GPU)
        hung = TestResult("08-b", "edge", 25, 0, simulator.TIMEOUT, bonus=True)
        lost = TestResult("08-b", "edge", 25, 0, "FAIL", bonus=True)
        self.assertTrue(simulator.sim_full_marks(self.report(ok, gpu, lost)))
        self.assertFalse(simulator.sim_full_marks(self.report(ok, gpu, hung)))
        self.assertEqual(simulator.hung_labs(self.report(ok, hung, hung)), ["08-b"])

    def test_total_lines(self):
        bonus = TestResult("08-b", "edge", 25, 25, "pass", bonus=True)
        graded = TestResult("01-a", "small", 10, 10, "pass")
        self.assertTrue(format_table(self.report(graded, bonus)).endswith("Total 35 / 10 (25 of them bonus points)"))
        self.assertTrue(format_table(self.report(bonus)).endswith(
            "Total 25 / 0 (25 of them bonus points, of 25: a bonus lab's points are outside the total's maximum)"))
        self.assertTrue(format_table(self.report(graded)).endswith("Total 10 / 10"))


class NoGpuMessage(unittest.TestCase):
    """grader/run/no_gpu.py: what run, check, sanitize and profile say without a GPU, and nvidia-smi's reason."""

    def test_reasons(self):
        def runner(code, out):
            return lambda argv, **kw: subprocess.CompletedProcess(argv, code, out, "")
        which = {"yes": lambda name: "/usr/bin/nvidia-smi", "no": lambda name: None}
        self.assertEqual(no_gpu.nvidia_smi(runner(0, ""), which["no"]), (False, "nvidia-smi: not found"))
        failed = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\nMake sure ...\n"
        self.assertEqual(no_gpu.nvidia_smi(runner(9, failed), which["yes"]),
                         (False, "nvidia-smi: NVIDIA-SMI has failed because it couldn't communicate with the "
                                 "NVIDIA driver."))
        self.assertEqual(no_gpu.nvidia_smi(runner(0, "No devices found.\n"), which["yes"]),
                         (False, "nvidia-smi -L lists no GPU"))
        listed, said = no_gpu.nvidia_smi(runner(0, "GPU 0: NVIDIA H100 (UUID: GPU-1)\n"), which["yes"])
        self.assertTrue(listed)
        self.assertIn("GPU 0: NVIDIA H100", said)

    def test_each_command_says_what_it_would_have_done_and_the_nearest_simulator_commands(self):
        for command, words in (("run", "default sizes"), ("check", "small and edge sizes"),
                               ("sanitize", "compute-sanitizer"), ("profile", "Nsight Compute")):
            with self.subTest(command=command):
                text = no_gpu.message(command, "03-sequential", KIT / "labs", here=False, reason="nvidia-smi: x")
                first = " ".join(text.split("The nearest")[0].split())
                self.assertTrue(first.startswith(f"make {command} "), text)
                self.assertIn(words, first)
                self.assertIn("there is none here (nvidia-smi: x).", first)
                self.assertRegex(text, r"\n  make sim LAB=03 +\S")
                self.assertRegex(text, r"\n  make grade SIM=1 LAB=03 +\S")
                here = no_gpu.message(command, "03-sequential", KIT / "labs", here=True, reason="r")
                self.assertRegex(here, r"\n  make sim +\S")
                self.assertNotIn("LAB=", here)
        text = no_gpu.message("check", "06-scan", KIT / "solutions", here=False, reason="r")
        self.assertIn("\n  make sim LAB=06 SUBMISSION=", text)  # a long command: what it does on the next line
        self.assertTrue(all(len(line) <= no_gpu.WIDTH for line in text.splitlines()), text)

    def test_the_lab_folder_is_told_by_the_environment(self):
        self.assertTrue(no_gpu.in_lab_folder({no_gpu.HERE_VARIABLE: "/k/labs/01-global-strided"}))
        self.assertFalse(no_gpu.in_lab_folder({}))

    def test_paths_are_shown_from_where_the_command_was_typed(self):
        """make grade in a lab's folder runs the grader at the kit's root (make -C): the paths it prints are the
        lab folder's own (relative inside it, absolute outside), never relative to the kit."""
        lab = KIT / "labs" / "03-sequential"
        with mock.patch.dict(os.environ, {no_gpu.HERE_VARIABLE: str(lab)}):
            self.assertEqual(no_gpu.shown(KIT / "build" / "grade" / "report.html"),
                             str((KIT / "build" / "grade" / "report.html").resolve()))
            self.assertEqual(no_gpu.shown(lab / "reduce.cu"), "reduce.cu")
        with mock.patch.dict(os.environ, {no_gpu.HERE_VARIABLE: ""}):
            self.assertEqual(no_gpu.shown(Path.cwd() / "build" / "x"), "build/x")

    def test_command_line(self):
        proc = subprocess.run([os.environ.get("PYTHON", "python3"), "-m", "grader.run.no_gpu", "run",
                               "--lab", "01-global-strided", "--here"], cwd=KIT, capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("make run builds your kernel", proc.stdout)
        self.assertIn("\n  make sim ", proc.stdout)


if __name__ == "__main__":
    unittest.main()
