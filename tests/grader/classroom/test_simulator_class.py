"""A class graded without a GPU on the kit's CPU simulator (issue 21, item 7): `grade --simulator` (make grade-class
SIM=1) grades each student's correctness as `make grade SIM=1` does, with the real builds and simulator, and the
gradebook says so; a student whose unchanged files were graded on a GPU keeps that grading.

Slow (the simulator builds and runs one reduction lab for two students: about a minute on 2 cores); it needs nvcc,
as every simulator test does."""
import csv
import json
import shutil
import unittest

from grader.classroom import records
from grader.patterns import KIT
from tests.grader.classroom.test_classroom import ClassRun
from tests.grader.fakes import write_file
from tools.author.make_skeletons import blank_out
from tests.timing import slow

LAB = "01-global-strided"


@unittest.skipUnless(shutil.which("nvcc"), "the simulator builds the labs with nvcc, which is not on PATH")
@slow  # make test-all's: see tests/timing.py
class SimulatorClass(ClassRun):
    def test_a_class_graded_on_the_simulator_says_so(self):
        solution = (KIT / "solutions" / LAB / "reduce.cu").read_text()
        write_file(self.up, f"alice/{LAB}/reduce.cu", solution)
        write_file(self.up, f"bob/{LAB}/reduce.cu", blank_out(solution))
        status, err = self.main("grade", str(self.up), "--out", str(self.out), "--lab", "01", "--simulator",
                                "--jobs", "2", "--no-similarity", hooks=records.Hooks())
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertIn("on the kit's CPU simulator", err)
        with open(self.out / records.GRADEBOOK, newline="") as f:
            book = {r["student"]: r for r in csv.DictReader(f)}
        self.assertEqual({s: r["status"] for s, r in book.items()}, {"alice": "simulator", "bob": "simulator"})
        # the groups of small sizes (datasets, edge sizes, exact integer data: 40 points); large sizes and
        # performance need a GPU
        self.assertEqual((book["alice"]["total"], book["alice"]["max_score"]), ("40", "100"))
        self.assertEqual(book["bob"]["total"], "0")
        results = json.loads((self.folder("alice") / "results.json").read_text())
        self.assertTrue(results["extra_data"]["simulator"])
        self.assertIn("Graded on the kit's CPU simulator", (self.folder("alice") / "feedback.txt").read_text())
        with open(self.out / "canvas.csv", newline="") as f:  # correctness only: no grade for Canvas (lms.py)
            self.assertIn(["alice", "", "", "", "", ""], list(csv.reader(f)))
        self.assertIn("graded on the simulator left empty", err)

    def test_a_gpu_grading_is_kept(self):
        """A GPU grading of the same files stays: a simulator run is a lesser grading, never put in its place."""
        write_file(self.up, f"alice/{LAB}/reduce.cu", (KIT / "solutions" / LAB / "reduce.cu").read_text())
        status, err = self.main("grade", str(self.up), "--out", str(self.out), "--lab", "01", "--static-only",
                                "--no-similarity", hooks=records.Hooks())
        self.assertEqual(status, records.EXIT_OK, err)
        record_path = self.folder("alice") / records.RECORD
        record = json.loads(record_path.read_text())
        record["row"].update(status="graded", total=100.0)  # as a GPU run would have left it
        record_path.write_text(json.dumps(record))
        status, err = self.main("grade", str(self.up), "--out", str(self.out), "--lab", "01", "--simulator",
                                "--no-similarity", hooks=records.Hooks())
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertIn("unchanged, not regraded", err)
        with open(self.out / records.GRADEBOOK, newline="") as f:
            row = next(csv.DictReader(f))
        self.assertEqual((row["status"], row["total"]), ("graded", "100"))


if __name__ == "__main__":
    unittest.main()
