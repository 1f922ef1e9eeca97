"""The simulated GPU follows SM=NN (mk/sim.mk, grader/sim/sim_target.py): a kernel that uses __reduce_add_sync (compute
capability 8.0: redux.sync) does not build at the default, compute_75, and the failure says which target was built
and how to pick another; with SM=80 it builds, runs right on the simulator, and the device reports 8.0 (the
checker's "device:" line is the runner's cudaGetDeviceProperties); the reference solution at the default reports 7.5.
Needs nvcc, no GPU. About a minute here: the harness builds once per SM (build/sim/harness/smNN).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from grader.compile.build import build_lab
from grader.sim.estimate import load_specs
from grader.sim.sim_target import graded_gpu_env, sim_env, set_graded_gpu, target_note
from grader.sim.simulator import build_lab_sim
from tools.student.sim import build_folder

KIT = Path(__file__).resolve().parents[2]
SOLUTION = KIT / "solutions" / "04-unrolled" / "reduce.cu"
HAVE_NVCC = shutil.which("nvcc") is not None

# warp_reduce of lab 04's solution with the integer part of each value summed by __reduce_add_sync and the rest by
# shuffles: with --data integer (whole numbers) every sum goes through redux.sync, so a wrong one fails the run.
REDUX_WARP_REDUCE = """{
    const int whole = __float2int_rz(v);
    float part = v - (float)whole;
    for (int offset = 16; offset > 0; offset /= 2)
        part += __shfl_down_sync(FULL_MASK, part, offset);
    return (float)__reduce_add_sync(FULL_MASK, whole) + part;
}
"""


def redux_text() -> str:
    """Lab 04's solution with REDUX_WARP_REDUCE as the body of warp_reduce."""
    text, n = re.subn(r"(__device__ float warp_reduce\(float v\)\n)\{\n.*?\n\}\n",
                      lambda m: m.group(1) + REDUX_WARP_REDUCE, SOLUTION.read_text(), count=1, flags=re.S)
    assert n == 1, "solutions/04-unrolled/reduce.cu has no warp_reduce(float v) to replace"
    return text


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class SimulatedTarget(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ppl-sim-target-")
        root = Path(cls.tmp.name)
        cls.redux, cls.plain = root / "redux", root / "plain"
        for submission, text in ((cls.redux, redux_text()), (cls.plain, SOLUTION.read_text())):
            (submission / "04-unrolled").mkdir(parents=True)
            (submission / "04-unrolled" / "reduce.cu").write_text(text)

    @classmethod
    def tearDownClass(cls):
        for submission in (cls.redux, cls.plain):
            shutil.rmtree(build_folder(submission, "04-unrolled"), ignore_errors=True)
        cls.tmp.cleanup()

    def sim(self, submission: Path, sm: str | None):
        """make sim LAB=04 SUBMISSION=submission [SM=sm] (tools/student/sim.py), small sizes, no estimate."""
        env = {k: v for k, v in os.environ.items() if k != "SM"}
        if sm:
            env["SM"] = sm
        return subprocess.run([sys.executable, "-m", "tools.student.sim", "--lab", "04", "--submission",
                               str(submission), "--n", "33,1025,4097", "--no-estimate"], cwd=KIT, env=env,
                              capture_output=True, text=True, timeout=900)

    def test_default_build_says_the_target_and_how_to_pick_another(self):
        done = self.sim(self.redux, None)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertIn("compute_75", done.stdout)  # the "building ..." line
        self.assertIn("__reduce_add_sync", done.stderr)  # nvcc's own error names the function
        self.assertIn("compute capability 7.5 (compute_75", done.stderr)
        self.assertIn("make sim SM=80", done.stderr)

    def test_sm80_builds_runs_and_reports_8_0(self):
        done = self.sim(self.redux, "80")
        out = done.stdout + done.stderr
        self.assertEqual(done.returncode, 0, out)
        self.assertIn("device: PPL SIMT simulator (sm_80,", out)
        self.assertEqual(len(re.findall(r"^PASS ", done.stdout, re.M)), 3, out)
        self.assertNotRegex(done.stdout, r"(?m)^(FAIL|ERROR)")

    def test_default_reports_7_5(self):
        done = self.sim(self.plain, None)
        out = done.stdout + done.stderr
        self.assertEqual(done.returncode, 0, out)
        self.assertIn("device: PPL SIMT simulator (sm_75,", out)

    def test_grader_build_error_says_the_target(self):
        """make grade SIM=1: the build's message (what the student's report shows) ends with the same note."""
        saved = os.environ.pop("SM", None)
        try:
            with tempfile.TemporaryDirectory(prefix="ppl-sim-target-grade-") as folder:
                built = build_lab_sim(KIT, "reduce", self.redux / "04-unrolled" / "reduce.cu", Path(folder) / "b")
        finally:
            if saved is not None:
                os.environ["SM"] = saved
        self.assertFalse(built.ok)
        self.assertIn("__reduce_add_sync", built.message)
        self.assertIn(target_note(env={}, command="make grade SIM=1"), built.message)
        self.assertIn("make grade SIM=1 SM=80", built.message)


class GradedGpuIdentity(unittest.TestCase):
    """In the simulator's check of a GPU grading the device is the graded GPU: nvidia-smi's name and memory, and the
    shape and L2 grader/gpus.toml gives the model (sim_target.graded_gpu_env), in every simulated run's
    environment (sim_env)."""

    def test_a_known_model_gets_its_name_memory_shape_l2_and_clock(self):
        specs = load_specs()
        for gpu in specs[0].values():
            env = graded_gpu_env({"name": gpu.name, "memory_mib": 81559}, specs)
            self.assertEqual(env["PPL_SIM_DEVICE_NAME"], gpu.name)
            self.assertEqual(env["PPL_SIM_DEVICE_MEMORY"], str(81559 << 20))
            self.assertEqual(env["PPL_SIM_DEVICE"], gpu.device_env()["PPL_SIM_DEVICE"])
            self.assertEqual(env["PPL_SIM_DEVICE_L2"], str(gpu.l2_mb << 20))
            rate, launch = (float(x) for x in env["PPL_SIM_DEVICE_TIMING"].split(","))
            self.assertAlmostEqual(rate, gpu.sms * gpu.schedulers_per_sm * gpu.clock_mhz
                                   * specs[1].issue_efficiency, delta=1)
            self.assertEqual(launch, specs[1].launch_us)

    def test_an_unknown_model_keeps_the_simulators_shape(self):
        env = graded_gpu_env({"name": "NVIDIA Future GPU", "compute_cap": "12.0"}, load_specs())
        self.assertEqual(env, {"PPL_SIM_DEVICE_NAME": "NVIDIA Future GPU", "PPL_SIM_DEVICE_ARCH": "120"})
        self.assertEqual(graded_gpu_env({}, load_specs()), {})

    def test_every_simulated_run_gets_it_once_set(self):
        try:
            set_graded_gpu({"PPL_SIM_DEVICE_NAME": "NVIDIA H100 80GB HBM3"})
            self.assertEqual(sim_env()["PPL_SIM_DEVICE_NAME"], "NVIDIA H100 80GB HBM3")
        finally:
            set_graded_gpu({})
        self.assertNotIn("PPL_SIM_DEVICE_NAME", sim_env())


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs")
class OneBuild(unittest.TestCase):
    """The simulator's check links the GPU build's own student.o (build_lab_sim's object_from): the object the
    simulator runs is the GPU's byte for byte, its PTX of the GPU's target (mk/cuda.mk keeps the PTX), so no #if
    __CUDA_ARCH__ can tell the two apart; and the runner sees the graded GPU's name and shape."""

    def test_the_check_runs_the_gpus_object_as_the_graded_gpu(self):
        with tempfile.TemporaryDirectory(prefix="ppl-one-build-") as folder:
            gpu = build_lab(KIT, "reduce", SOLUTION, Path(folder) / "gpu")
            self.assertTrue(gpu.ok, gpu.message)
            sim = build_lab_sim(KIT, "reduce", SOLUTION, Path(folder) / "sim", object_from=gpu.object)
            self.assertTrue(sim.ok, sim.message)
            self.assertEqual(sim.object.read_bytes(), gpu.object.read_bytes())
            h100 = next(g for g in load_specs()[0].values() if g.key == "H100")
            env = {**sim_env(), **graded_gpu_env({"name": h100.name, "memory_mib": 81559}, load_specs())}
            done = subprocess.run([str(sim.program), "--n", "33,1025", "--seed", "5"], env=env, cwd=KIT,
                                  capture_output=True, text=True, timeout=300)
        out = done.stdout + done.stderr
        self.assertEqual(done.returncode, 0, out)
        self.assertRegex(out, rf"device: {re.escape(h100.name)} \(sm_\d+, {h100.sms} SMs\)")
        self.assertEqual(len(re.findall(r"^PASS ", done.stdout, re.M)), 2, out)


if __name__ == "__main__":
    unittest.main()
