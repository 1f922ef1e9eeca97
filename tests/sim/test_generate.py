"""Inputs made on the device (PPL_MSG_GENERATE, harness/common/generate.h): the reductions' generated cases from
PPL_GENERATE_MIN elements on (2^22 by default) are made by the device program where they are used, not written
into the checker's input area and copied. On the simulator (sizes up to 2^21) the switch PPL_GENERATE_MIN makes
small cases take that path, and each must judge as the copied input does: the same sums and tolerances, the same
bits (the student's sum is the same float, and the input's checksum, computed by the device program over what it
made, equals the checker's over its own stream), and a lab that writes its input still fails.

Needs nvcc (skipped, saying so, without it); builds lab 03's solution, lab 01's and one known-wrong lab 03 for the
simulator (mk/sim.mk), about a minute on 2 cores.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from tests.sim.test_sim import build_reduction
from tools.instructor.variants.wrong import mutated_text

KIT = Path(__file__).resolve().parents[2]
HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None
SIZES = "5000,70001,300000"  # one block's worth, several, and past the checker's parallel threshold (2^18)


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class GeneratedOnTheDevice(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ppl-generate-")
        os.chmod(cls.tmp.name, 0o755)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def build(self, tag: str, text: str) -> Path:
        """text built as a reduction lab for the simulator (mk/sim.mk); returns the lab program."""
        return build_reduction(self, Path(self.tmp.name) / tag, text)

    def run_lab(self, program: Path, args, generate_min=None) -> tuple:
        """(exit status, the checks' result lines, stderr) of one run in process, PPL_TRACE on."""
        result = program.parent / f"result-{generate_min}.jsonl"
        result.unlink(missing_ok=True)  # the checker appends
        env = {k: v for k, v in os.environ.items() if k != "PPL_GENERATE_MIN"}
        env["PPL_TRACE"] = "1"
        if generate_min is not None:
            env["PPL_GENERATE_MIN"] = str(generate_min)
        proc = subprocess.run([str(program), *args, "--seed", "5", "--in-process", "--result", str(result)],
                              cwd=KIT, env=env, capture_output=True, text=True, timeout=600)
        lines = [json.loads(ln) for ln in result.read_text().splitlines() if ln.strip()]
        return proc.returncode, [ln for ln in lines if ln.get("kind") == "check"], proc.stderr

    @staticmethod
    def judged(checks) -> list:
        return [(c["n"], c["status"], c["got"], c["expected"], c["tolerance"], c["input_checked"]) for c in checks]

    def test_a_generated_input_is_judged_as_a_copied_one(self):
        program = self.build("lab03", (KIT / "solutions" / "03-sequential" / "reduce.cu").read_text())
        for data in ("uniform", "signs", "integer"):  # the fused pass's team (from 2^18) once: the kinds share it
            with self.subTest(data=data):
                args = ["--n", SIZES if data == "uniform" else "5000,70001", "--data", data, "--input-const"]
                copied = self.run_lab(program, args)
                made = self.run_lab(program, args, generate_min=1000)
                self.assertEqual(copied[0], 0, copied[2][-2000:])
                self.assertEqual(made[0], 0, made[2][-2000:])
                self.assertEqual(self.judged(made[1]), self.judged(copied[1]))
                self.assertEqual(len(made[1]), len(args[1].split(",")))
                self.assertTrue(all(c["input_checked"] for c in made[1]))
                self.assertIn("generate 5000", made[2])  # the trace: made on the device...
                self.assertNotIn("generate", copied[2])  # ...and only with the switch, at these sizes
                self.assertIn("load 5000", copied[2])

    def test_a_lab_that_writes_its_generated_input_fails(self):
        program = self.build("scribbles", mutated_text("scribbles-input"))
        status, checks, err = self.run_lab(program, ["--n", SIZES, "--data", "uniform", "--input-const"],
                                           generate_min=1000)
        self.assertEqual(status, 1, err[-2000:])
        self.assertEqual([c["status"] for c in checks], ["fail"] * 3)
        self.assertIn("the input was modified: its checksum after the call differs", checks[0]["message"])

    def test_lab_01_reduces_a_generated_input_in_place(self):
        """Lab 01 may overwrite its input (no --input-const): no checksum is asked for, and the sums still hold."""
        program = self.build("lab01", (KIT / "solutions" / "01-global-strided" / "reduce.cu").read_text())
        status, checks, err = self.run_lab(program, ["--n", SIZES, "--data", "signs"], generate_min=1000)
        self.assertEqual(status, 0, err[-2000:])
        self.assertEqual([(c["status"], c["input_checked"]) for c in checks], [("pass", 0)] * 3)
