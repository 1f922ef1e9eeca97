"""make rescore (grader/classroom/rescore.py, issue 21 item 7): a graded class scored again under a changed labs.toml
from the measurements of its grading, nothing built or run; with the fake builds and harness programs of
tests/grader/classroom/fakes.py (SLOW passes at a speedup of 2, the others at 100)."""
import json

from grader.classroom import lms, records
from tests.grader.classroom.test_classroom import ClassRun, read_gradebook
from tests.grader.fakes import write_file


class Rescore(ClassRun):
    def setUp(self):
        super().setUp()
        self.student("alice", {"01-first": "ok", "02-second": "SLOW"})
        self.student("bob", {"01-first": "WRONG", "02-second": "ok"})

    def run_class(self, *argv):
        return self.main("grade", str(self.up), "--out", str(self.out), "--config", str(self.config), "--jobs", "1",
                         "--seed", "7", "--no-similarity", *argv)

    def rescore(self):
        return self.main("rescore", "--out", str(self.out))

    def edit(self, old: str, new: str) -> None:
        text = self.config.read_text()
        self.assertIn(old, text)
        self.config.write_text(text.replace(old, new))

    def test_changed_points_and_thresholds_without_timing_again(self):
        self.assertEqual(self.run_class()[0], records.EXIT_OK)
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual((book["alice"]["total"], book["alice"]["02-second"], book["bob"]["total"]), ("105", "45", "60"))
        built = self.builds()
        graded_at = json.loads((self.folder("alice") / records.RECORD).read_text())["graded_at"]
        # a group worth 15 now, not 10; lab 02's full marks at 2x (alice's SLOW 2x earned half of 30 under 3x)
        self.edit('name = "small"\npoints = 10', 'name = "small"\npoints = 15')
        self.edit('[labs.02-second.performance]\npoints = 30\nbench = "2^10"\nlower = 1.0\nfull = 3.0',
                  '[labs.02-second.performance]\npoints = 30\nbench = "2^10"\nlower = 1.0\nfull = 1.9')
        status, err = self.rescore()
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertIn("rescored 2 students", err)
        self.assertIn("nothing was run", err)
        self.assertEqual(self.builds(), built)  # nothing built, nothing run
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual((book["alice"]["01-first"], book["alice"]["02-second"], book["alice"]["total"]),
                         ("65", "65", "130"))
        self.assertEqual((book["bob"]["01-first"], book["bob"]["total"]), ("0", "65"))  # a failed group stays 0
        self.assertEqual(book["alice"]["max_score"], "130")
        results = json.loads((self.folder("alice") / "results.json").read_text())
        self.assertEqual(results["score"], 130)
        perf = next(t for t in results["tests"] if t["name"] == "02-second: performance")
        self.assertEqual((perf["score"], perf["max_score"]), (30, 30))
        self.assertIn("full marks at 1.90x baseline", perf["output"])
        self.assertIn("Total 130 / 130", (self.folder("alice") / "feedback.txt").read_text())
        record = json.loads((self.folder("alice") / records.RECORD).read_text())
        self.assertEqual(record["graded_at"], graded_at)  # when the files were graded; the rescore has its own time
        self.assertIn("rescored_at", record)
        with open(self.out / lms.CANVAS) as f:
            self.assertIn("alice,,,,,65,65", f.read())
        # a grading now skips them: their records carry the key of the labs file as it is
        status, err = self.run_class()
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertEqual(self.builds(), built)
        self.assertEqual(read_gradebook(self.out / records.GRADEBOOK)["alice"]["total"], "130")

    def test_changed_tests_are_not_rescored(self):
        self.assertEqual(self.run_class()[0], records.EXIT_OK)
        self.edit('runs = [["--data", "uniform", "--n", "1,2,3"]]', 'runs = [["--data", "uniform", "--n", "1,2,4"]]')
        status, err = self.rescore()
        self.assertIn("not rescored, graded again by the next make grade-class", err)
        self.assertIn("alice (01-first: its tests changed since the grading", err)
        self.assertEqual(read_gradebook(self.out / records.GRADEBOOK)["alice"]["total"], "105")  # as graded

    def test_overrides_and_late_work_are_applied_again(self):
        overrides = write_file(self.dir, "o.csv", "student,lab,points,reason\nbob,total,+5,extra credit\n")
        self.assertEqual(self.run_class("--overrides", str(overrides))[0], records.EXIT_OK)
        self.edit('name = "exact"\npoints = 20', 'name = "exact"\npoints = 25')
        status, err = self.rescore()
        self.assertEqual(status, records.EXIT_OK, err)
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual(book["bob"]["total"], "70")  # 65 graded under the new points, +5
        self.assertIn("extra credit", book["bob"]["notes"])

    def test_no_class(self):
        status, err = self.rescore()
        self.assertEqual(status, records.EXIT_BROKEN)
        self.assertIn("class.json: missing or unreadable", err)


if __name__ == "__main__":
    import unittest
    unittest.main()
