"""Regrades and overrides in a whole class run (grader/classroom/cli.py, pool.py, closing.py), with the fake builds
and harness programs of tests/grader/classroom/fakes.py: --only grades some students and keeps the others' rows,
--force grades again what did not change, an overrides file is laid over the gradebook and the students' outputs
and survives reruns, a bad one stops the run before anything is graded; --static-only rows all say so; what the
class run leaves besides the gradebook (report.html, canvas.csv, similarity.html)."""
import csv
import json

from grader.classroom import records
from tests.grader.classroom import fakes
from tests.grader.classroom.test_classroom import ClassRun, read_gradebook
from tests.grader.fakes import write_file


class Regrades(ClassRun):
    def setUp(self):
        super().setUp()
        self.student("alice", {"01-first": "ok", "02-second": "SLOW"})
        self.student("bob", {"01-first": "WRONG", "02-second": "ok"})
        self.student("carol", {"01-first": "ok"})

    def run_class(self, *argv):
        return self.main("grade", str(self.up), "--out", str(self.out), "--config", str(self.config), "--jobs", "1",
                         "--seed", "7", "--no-similarity", *argv)

    def test_only_some_students(self):
        status, err = self.run_class("--only", "bob")
        self.assertEqual(status, records.EXIT_UNGRADED, err)  # the others have no record yet
        self.assertIn("grading 1 of 3 students", err)
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual({s: r["status"] for s, r in book.items()},
                         {"alice": "not graded", "bob": "graded", "carol": "not graded"})
        self.assertEqual(self.builds(), ["bob/01-first", "bob/02-second"])
        self.assertEqual(self.run_class()[0], records.EXIT_OK)  # the others now; bob unchanged
        self.assertEqual(self.builds().count("bob/01-first"), 1)
        (self.up / "alice" / "labs" / "02-second" / "reduce.cu").write_text("ok")
        status, err = self.run_class("--only", "carol,bob")
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertEqual(self.builds().count("alice/02-second"), 1)  # changed, but not asked for
        self.assertEqual(read_gradebook(self.out / records.GRADEBOOK)["alice"]["total"], "105")

    def test_force_grades_again_what_did_not_change(self):
        self.assertEqual(self.run_class()[0], records.EXIT_OK)
        status, err = self.run_class("--only", "alice", "--force")
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertIn("graded again whether changed or not", err)
        self.assertEqual(self.builds().count("alice/01-first"), 2)
        self.assertEqual(self.builds().count("bob/01-first"), 1)

    def test_an_unknown_id(self):
        status, err = self.run_class("--only", "alice,mallory")
        self.assertEqual(status, records.EXIT_BROKEN)
        self.assertIn("--only: no student mallory in this class", err)
        self.assertFalse((self.out / records.GRADEBOOK).exists())

    def test_overrides_survive_reruns(self):
        write_file(self.dir, "overrides.csv", "student,lab,points,reason\nalice,02,60,regrade 4: idle GPU\n"
                                              "bob,total,+5,extra credit\n")
        status, err = self.run_class("--overrides", str(self.dir / "overrides.csv"))
        self.assertEqual(status, records.EXIT_OK, err)
        for rerun in (False, True):
            with self.subTest(rerun=rerun):
                book = read_gradebook(self.out / records.GRADEBOOK)
                self.assertEqual((book["alice"]["02-second"], book["alice"]["total"]), ("60", "120"))
                self.assertIn("override 02-second: 45 -> 60 (regrade 4: idle GPU)", book["alice"]["notes"])
                self.assertEqual(book["bob"]["total"], "65")
                results = json.loads((self.folder("alice") / "results.json").read_text())
                self.assertEqual(results["score"], 120)
                self.assertEqual(results["extra_data"]["score_before_overrides"], 105)
                self.assertIn("regrade 4", (self.folder("alice") / "feedback.txt").read_text())
                record = json.loads((self.folder("alice") / records.RECORD).read_text())
                self.assertEqual(record["row"]["total"], 105)  # the record keeps what was graded
                with open(self.out / "canvas.csv", newline="") as f:
                    self.assertIn(["alice", "", "", "", "", "60", "60"], list(csv.reader(f)))
                status, err = self.run_class("--overrides", str(self.dir / "overrides.csv"))
                self.assertEqual(status, records.EXIT_OK, err)
        self.assertEqual(self.builds().count("alice/01-first"), 1)  # an override regrades nobody
        (self.dir / "overrides.csv").write_text("student,lab,points,reason\n")
        self.assertEqual(self.run_class("--overrides", str(self.dir / "overrides.csv"))[0], records.EXIT_OK)
        self.assertEqual(read_gradebook(self.out / records.GRADEBOOK)["alice"]["total"], "105")
        self.assertNotIn("Overrides", (self.folder("alice") / "feedback.txt").read_text())

    def test_out_overrides_csv_is_read_without_asking(self):
        write_file(self.out, "overrides.csv", "student,lab,points,reason\ncarol,1,0,plagiarism case 7\n")
        self.assertEqual(self.run_class()[0], records.EXIT_OK)
        self.assertEqual(read_gradebook(self.out / records.GRADEBOOK)["carol"]["total"], "0")

    def test_a_bad_overrides_file_grades_nobody(self):
        write_file(self.dir, "overrides.csv", "student,lab,points,reason\nmallory,01,10,x\nalice,07,10,y\n")
        status, err = self.run_class("--overrides", str(self.dir / "overrides.csv"))
        self.assertEqual(status, records.EXIT_BROKEN)
        self.assertIn("overrides.csv:2: no student 'mallory'", err)
        self.assertIn("overrides.csv:3: no lab '07'", err)
        self.assertEqual(self.builds(), [])

    def test_a_bad_canvas_roster_grades_nobody(self):
        write_file(self.dir, "roster.csv", "Name,Email\n")
        status, err = self.run_class("--canvas-roster", str(self.dir / "roster.csv"))
        self.assertEqual(status, records.EXIT_BROKEN)
        self.assertIn("not a Canvas gradebook export", err)

    def test_what_a_class_run_leaves(self):
        status, err = self.main("grade", str(self.up), "--out", str(self.out), "--config", str(self.config),
                                "--jobs", "1")
        self.assertEqual(status, records.EXIT_OK, err)
        for name in ("report.html", "similarity.html", "similarity.csv", "canvas.csv", "gradescope.csv"):
            self.assertTrue((self.out / name).is_file(), name)
        for student in ("alice", "bob", "carol"):
            self.assertTrue((self.folder(student) / "report.html").is_file())  # linked from the class's page
        page = (self.out / "report.html").read_text()
        self.assertEqual(page.count("<svg"), 2)
        self.assertIn("class report: ", err)
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual((book["alice"]["01-first speedup"], book["alice"]["02-second speedup"]), ("100", "2"))


class LateWork(ClassRun):
    """labs.toml's [late] rule (grader/score/late.py) applied by grade-class as on Gradescope, from the export's
    submission_metadata.yml (created_at)."""

    def test_a_late_upload_loses_points(self):
        self.config.write_text(self.config.read_text() + "\n[late]\ndue = 2026-12-01T23:59:00-05:00\n"
                                                         "penalty_per_day = 0.1\n")
        write_file(self.up, "submission_metadata.yml",
                   "submission_1:\n  :submitters:\n  - :name: Ada\n    :sid: '1'\n    :email: ada@x.edu\n"
                   "  :created_at: 2026-12-03 10:00:00.000000000 -05:00\n"
                   "submission_2:\n  :submitters:\n  - :name: Bob\n  :created_at: 2026-12-01 20:00:00 -05:00\n")
        self.student("submission_1", {"01-first": "ok", "02-second": "ok"})
        self.student("submission_2", {"01-first": "ok", "02-second": "ok"})
        status, err = self.main("grade", str(self.up), "--out", str(self.out), "--config", str(self.config),
                                "--jobs", "1", "--no-similarity")
        self.assertEqual(status, records.EXIT_OK, err)
        book = read_gradebook(self.out / records.GRADEBOOK)
        late, on_time = book["submission_1"], book["submission_2"]
        self.assertEqual((late["01-first"], late["02-second"], late["total"]), ("48", "48", "96"))  # 2 days: -20%
        self.assertIn("01-first: 2 late days, -12", late["notes"])
        self.assertEqual(on_time["total"], "120")
        results = json.loads((self.folder("submission_1") / "results.json").read_text())
        self.assertEqual(results["score"], 96)
        penalties = [t for t in results["tests"] if t["name"].endswith(": late penalty")]
        self.assertEqual([t["score"] for t in penalties], [-12, -12])
        feedback = (self.folder("submission_1") / "feedback.txt").read_text()
        self.assertIn("Late work: 01-first: submitted", feedback)
        self.assertIn("2 late days: -20% of the lab's points (-12 of 60)", feedback)
        page = (self.out / "report.html").read_text()
        self.assertNotIn("<td>late penalty</td>", page)  # not a test of the lab's pass rates


class StaticOnly(ClassRun):
    def test_every_row_says_static_only(self):
        """A rejected upload's row said "graded" beside the clean ones' "static only" (issue 12)."""
        self.student("alice", {"01-first": "ok", "02-second": "ok"})
        self.student("bob", {"01-first": "NO BUILD", "02-second": "FORBIDDEN"})
        status, err = self.main("grade", str(self.up), "--out", str(self.out), "--config", str(self.config),
                                "--static-only", "--jobs", "1", "--no-similarity")
        self.assertEqual(status, records.EXIT_OK, err)
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual({s: r["status"] for s, r in book.items()}, {"alice": "static only", "bob": "static only"})
        self.assertEqual(book["bob"]["notes"], "01-first: NO BUILD; 02-second: FORBIDDEN")

    def test_the_exit_status_is_said(self):
        self.student("alice", {"01-first": "ok"})
        hooks = records.Hooks(build=fakes.build, build_harness=fakes.harness_ok, check=fakes.check,
                              run=fakes.no_device_run)
        status, err = self.main("grade", str(self.up), "--out", str(self.out), "--config", str(self.config),
                                "--jobs", "1", "--no-similarity", hooks=hooks)
        self.assertEqual(status, records.EXIT_NO_DEVICE, err)
        self.assertIn("exit status 77: no GPU: the run-time tests did not run", err)
