"""make bench-grader (tools/instructor/bench_grader.py): the largest input it copies is labs.toml's, its table gives
every stage of every lab as a ratio to the floor, and without a GPU it says so and exits 77."""
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.config import load_config
from grader.patterns import parse_sizes
from tools.instructor import bench_grader


class LargestInput(unittest.TestCase):
    def test_is_the_largest_n_of_labs_toml(self):
        config = load_config()
        labs = config.select(None)
        sizes = [n for lab in labs for g in lab.groups for run in g.runs or () for flag, value in zip(run, run[1:])
                 if flag == "--n" for n in parse_sizes(value)]
        self.assertEqual(bench_grader.largest_input_bytes(config, labs), max(sizes) * bench_grader.ELEMENT_BYTES)


class Table(unittest.TestCase):
    def test_every_stage_of_every_lab_as_a_ratio_to_the_floor(self):
        floors = {"build": 1.0, "context": 0.5, "copy": 0.5}  # a floor of 2 s
        stages = {"kit": {"reduce harness": 3.0, "scan harness": 2.5, "harness builds": 3.0},
                  "03-sequential": {"build": 2.0, "static checks": 0.5, "correctness": 4.0, "sanitizers": 6.0,
                                    "benchmark": 1.0, "GPU queries": 0.2, "total": 9.0, "simulator check": 12.0,
                                    "simulator check (waiting)": 1.5}}
        text = bench_grader.table(floors, stages, 15.5, 1 << 31)
        row = next(line for line in text.splitlines() if line.startswith("| 03-sequential"))
        self.assertEqual(row, "| 03-sequential | 9.0 | 4.50x | 1.00x | 0.25x | 2.00x | 3.00x | 0.50x | 0.10x | 6.00x |")
        self.assertIn("Floor of one grading: 2.00 s", text)
        self.assertIn("the kit's harness builds 3.0 s, waiting for the simulator's checks 1.5 s, the rest (start-up, "
                      "report) 2.0 s", text)
        self.assertNotIn("| kit", text)


@unittest.skipUnless(shutil.which("nvcc"), "nvcc not found: the floor program is compiled with it")
class Floors(unittest.TestCase):
    def test_measured_or_no_device(self):
        """On a GPU every part of the floor is measured (positive); without one, exit 77 with a message."""
        has_gpu = shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
        with tempfile.TemporaryDirectory() as tmp:
            if has_gpu:
                floors = bench_grader.measure_floors(Path(tmp), "reduce", 1 << 20, repeats=1)
                self.assertTrue(all(v > 0 for v in floors.values()), floors)
            else:
                with self.assertRaises(SystemExit) as raised:
                    bench_grader.measure_floors(Path(tmp), "reduce", 1 << 20, repeats=1)
                self.assertEqual(raised.exception.code, bench_grader.NO_DEVICE)


if __name__ == "__main__":
    unittest.main()
