"""The checker's OpenMP team (grader/run/run.py: checker_env; harness/checker/parallel.h): a lab program gets a team
of the cores its grading has, idle threads asleep, and a simulated run one thread; a caller's own setting stands."""
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader.run import runs_ahead
from grader.run.run import checker_env, run_harness
from grader.sim.sim_target import sim_env
from tests.grader.fakes import fake_program

ARGS = ["--data", "integer", "--n", "1,33,65537"]


class CheckerEnv(unittest.TestCase):
    def setUp(self):
        self.clean = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}

    def test_the_team_is_the_gradings_share_of_the_cores(self):
        with mock.patch.dict(os.environ, self.clean, clear=True), mock.patch.object(runs_ahead, "_SHARE", 3):
            env = checker_env()
        self.assertEqual((env["OMP_NUM_THREADS"], env["OMP_WAIT_POLICY"]), ("3", "passive"))
        self.assertEqual(checker_env({}, threads=5)["OMP_NUM_THREADS"], "5")

    def test_a_callers_own_setting_stands(self):
        env = checker_env({"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "active", "PATH": "/bin"})
        self.assertEqual((env["OMP_NUM_THREADS"], env["OMP_WAIT_POLICY"], env["PATH"]), ("2", "active", "/bin"))

    def test_a_simulated_run_has_one_thread(self):
        with mock.patch.dict(os.environ, {**self.clean, "OMP_NUM_THREADS": "16"}, clear=True):
            env = sim_env()
        self.assertEqual((env["OMP_NUM_THREADS"], env["OMP_WAIT_POLICY"]), ("1", "passive"))

    def test_the_lab_program_is_given_it(self):
        with tempfile.TemporaryDirectory() as tmp, mock.patch.dict(os.environ, self.clean, clear=True), \
                mock.patch.object(runs_ahead, "_SHARE", 2):
            program = fake_program(tmp, """
                open(os.path.join(os.path.dirname(sys.argv[0]), "omp.txt"), "w").write(
                    os.environ.get("OMP_NUM_THREADS", "") + " " + os.environ.get("OMP_WAIT_POLICY", ""))
                all_pass()""")
            outcome = run_harness(program, ARGS, timeout=10.0, workdir=Path(tmp) / "run")
            self.assertEqual(outcome.status, "pass", outcome.message)
            self.assertEqual((Path(tmp) / "omp.txt").read_text(), "2 passive")


if __name__ == "__main__":
    unittest.main()
