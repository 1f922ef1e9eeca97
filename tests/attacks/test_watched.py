"""The observer-aware attacks as the simulator's check sees them, without a GPU (issue 35).

On a GPU, each lab is also graded on the simulator (grader/sim/sim_check.py), which links the GPU build's own
object (build_lab's object_from) and shows the runner the graded GPU (sim_target.graded_gpu_env: name, memory,
shape, event clock). An attack whose attacks.toml entry gives gpu_expected = "watched-fault" behaves one way when it
thinks it is watched and another on the GPU; here each is built as for an H100 (SM=90, machine code and PTX), linked
for the simulator from that object, and run in the check's view: in order it passes (the GPU's blocks start in
order too), and under the reverse schedule its forward-progress fault shows, so the check takes its points. A file
that still took its watched path here would pass under every schedule. Needs nvcc; slow (the harness for sm_90:
CUB's yardstick compiles once), in the attack suite, which make test-all runs."""
import os
import shutil
import subprocess
import tempfile
import tomllib
import unittest
from pathlib import Path
from unittest import mock

from grader.compile.build import build_lab
from grader.patterns import PATTERNS
from grader.sim import estimate, sim_target
from grader.sim.simulator import build_lab_sim

KIT = Path(__file__).resolve().parents[2]
TABLE = tomllib.loads((KIT / "tests" / "attacks" / "attacks.toml").read_text())
WATCHED = sorted(name for name, spec in TABLE.items() if spec.get("gpu_expected") == "watched-fault")
GPU = {"name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559}  # a model grader/gpus.toml knows
SM = "90"
ARGS = ["--n", "100000", "--seed", "3", "--cpu-seconds", "60"]


def pattern_of(lab: str) -> str:
    """The pattern whose student's file a lab's attack is (labs.toml names the lab's pattern)."""
    from grader.config import load_config
    return next(lab_.pattern for lab_ in load_config().labs if lab_.name == lab)


@unittest.skipUnless(shutil.which("nvcc"), "nvcc not found: install the CUDA toolkit to build the attacks")
@unittest.skipUnless(os.environ.get("PPL_TEST_ALL"), "slow: make test-all runs it")
class WatchedAsOnAGpu(unittest.TestCase):
    def test_each_dodge_shows_its_fault_in_the_checks_view(self):
        self.assertTrue(WATCHED, "attacks.toml has no attack whose GPU verdict is watched-fault")
        view = sim_target.graded_gpu_env(GPU, estimate.load_specs())
        with tempfile.TemporaryDirectory(prefix="ppl-watched-") as tmp, mock.patch.dict(os.environ, {"SM": SM}):
            for name in WATCHED:
                with self.subTest(attack=name):
                    lab = TABLE[name]["lab"]
                    pattern = pattern_of(lab)
                    source = KIT / "tests" / "attacks" / name / PATTERNS[pattern].source
                    folder = Path(tmp) / name
                    gpu = build_lab(KIT, pattern, source, folder / "gpu")
                    self.assertTrue(gpu.ok, gpu.message)
                    sim = build_lab_sim(KIT, pattern, source, folder / "sim", object_from=gpu.object)
                    self.assertTrue(sim.ok, sim.message)
                    self.assertEqual(sim.object.read_bytes(), gpu.object.read_bytes())
                    runs = {}
                    for schedule in ("", "reverse:1"):
                        env = {**sim_target.sim_env(budget=True), **view}
                        if schedule:
                            env["PPL_SIM_SCHEDULE"] = schedule
                        runs[schedule or "in order"] = subprocess.run([str(sim.program), *ARGS], env=env, cwd=KIT,
                                                                      capture_output=True, text=True, timeout=600)
                    order, reverse = runs["in order"], runs["reverse:1"]
                    self.assertIn(f"device: {GPU['name']} (sm_{SM}", order.stdout, order.stdout + order.stderr)
                    self.assertEqual(order.returncode, 0, order.stdout + order.stderr)  # the GPU's own verdict
                    self.assertNotEqual(reverse.returncode, 0, reverse.stdout + reverse.stderr)  # the check's
                    self.assertIn("forward-progress bug", reverse.stdout + reverse.stderr)


if __name__ == "__main__":
    unittest.main()
