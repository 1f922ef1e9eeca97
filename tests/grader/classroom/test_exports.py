"""Exports never destroy grades (issue 21, item 3): a class run's gradebook.csv, canvas.csv and gradescope.csv, with
the fake builds and harness programs of tests/grader/classroom/fakes.py, on a Gradescope-shaped export
(submission_NNN folders and submission_metadata.yml).

The rules: a row whose points are not a grade (static only, no GPU, kit error, not graded) has empty score cells
in every export; a group upload gets a row per member; a lab's column is its lms_name from labs.toml (a Canvas
roster's own header for it where the roster has one); roster mismatches are listed by id both ways; overrides name
students by email or sid, so they survive a new export, and a rerun says which overrides file it applies."""
import csv
import io

from grader.classroom import lms, records
from grader.config import load_config
from tests.grader.classroom import fakes
from tests.grader.classroom.test_classroom import ClassRun
from tests.grader.fakes import write_file

HOOKS_NO_GPU = records.Hooks(build=fakes.build, build_harness=fakes.harness_ok, check=fakes.check,
                             run=fakes.no_device_run)


def rows_of(path) -> list:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def export_metadata(submissions: dict) -> str:
    """submission_metadata.yml for {folder: [(name, sid, email), ...]}, as Gradescope's export writes it."""
    lines = []
    for folder, people in submissions.items():
        lines += [f"{folder}:", "  :submitters:"]
        for name, sid, email in people:
            lines += [f"  - :name: {name}", f"    :sid: '{sid}'", f"    :email: {email}"]
        lines.append("  :created_at: 2026-11-20 10:00:00.000000000 -05:00")
    return "\n".join(lines) + "\n"


class ExportRun(ClassRun):
    ADA, BEN, CY = ("Ada Lovelace", "101", "ada@x.edu"), ("Ben Bitdiddle", "102", "ben@x.edu"), \
        ("Cy D. Fect", "103", "cy@x.edu")

    def export(self, folders=("submission_1", "submission_2")):
        """A Gradescope export: the first folder a group upload of Ada and Ben, the second Cy's."""
        write_file(self.up, "submission_metadata.yml",
                   export_metadata({folders[0]: [self.ADA, self.BEN], folders[1]: [self.CY]}))
        self.student(folders[0], {"01-first": "ok", "02-second": "SLOW"})
        self.student(folders[1], {"01-first": "ok", "02-second": "ok"})

    def run_class(self, *argv, hooks=None):
        return self.main("grade", str(self.up), "--out", str(self.out), "--config", str(self.config), "--jobs", "1",
                         "--seed", "7", "--no-similarity", *argv, **({"hooks": hooks} if hooks else {}))


class Exports(ExportRun):
    def test_a_row_that_is_not_a_grade_has_empty_score_cells(self):
        self.export()
        for argv, hooks, status in ((("--static-only",), None, records.EXIT_OK),
                                    ((), HOOKS_NO_GPU, records.EXIT_NO_DEVICE)):
            with self.subTest(argv=argv):
                got, err = self.run_class(*argv, "--force", hooks=hooks)
                self.assertEqual(got, status, err)
                for row in rows_of(self.out / records.GRADEBOOK):
                    self.assertIn(row["status"], ("static only", "no GPU"))
                    self.assertEqual((row["total"], row["01-first"], row["02-second"]), ("", "", ""), row)
                for row in rows_of(self.out / lms.CANVAS)[1:]:
                    self.assertEqual((row["01-first"], row["02-second"]), ("", ""), row)
                for row in rows_of(self.out / lms.GRADESCOPE):
                    self.assertEqual((row["Total Score"], row["01-first"]), ("", ""), row)

    def test_a_group_upload_gets_a_row_per_member(self):
        self.export()
        self.assertEqual(self.run_class()[0], records.EXIT_OK)
        book = rows_of(self.out / records.GRADEBOOK)
        self.assertEqual([(r["student"], r["name"], r["email"], r["total"]) for r in book],
                         [("submission_1", "Ada Lovelace", "ada@x.edu", "105"),
                          ("submission_1", "Ben Bitdiddle", "ben@x.edu", "105"),
                          ("submission_2", "Cy D. Fect", "cy@x.edu", "120")])
        self.assertEqual([(r["Name"], r["SID"], r["Total Score"]) for r in rows_of(self.out / lms.GRADESCOPE)],
                         [("Ada Lovelace", "101", "105"), ("Ben Bitdiddle", "102", "105"), ("Cy D. Fect", "103", "120")])
        roster = write_file(self.dir, "roster.csv",
                            "Student,ID,SIS User ID,SIS Login ID,Section,Lab 1 (55)\n    Points Possible,,,,,60\n"
                            "\"Lovelace, Ada\",1,101,ada,S1,\n\"Bitdiddle, Ben\",2,102,ben,S1,\n"
                            "\"Fect, Cy\",3,103,cy,S1,\n")
        status, err = self.run_class("--canvas-roster", str(roster))
        self.assertEqual(status, records.EXIT_OK, err)
        canvas = rows_of(self.out / lms.CANVAS)[1:]
        self.assertEqual([(r["Student"], r["ID"], r["02-second"]) for r in canvas],
                         [("Lovelace, Ada", "1", "45"), ("Bitdiddle, Ben", "2", "45"), ("Fect, Cy", "3", "60")])
        self.assertNotIn("not in the Canvas roster", err)

    def test_columns_are_named_by_labs_toml_and_mismatches_listed_by_id(self):
        self.config.write_text(self.config.read_text().replace(
            '[labs.01-first]\n', '[labs.01-first]\nlms_name = "Lab 1"\n').replace(
            '[labs.02-second]\n', '[labs.02-second]\nlms_name = "Lab 2: second"\n'))
        self.assertEqual(load_config(self.config).named("01-first").lms_name, "Lab 1")
        self.export()
        roster = write_file(self.dir, "roster.csv",
                            "Student,ID,SIS User ID,SIS Login ID,Section,Lab 1 (55),Quiz 1 (56)\n"
                            "    Points Possible,,,,,60,10\n\"Lovelace, Ada\",1,101,ada,S1,,\n"
                            "\"Nobody, Ned\",9,109,ned,S1,,\n")
        status, err = self.run_class("--canvas-roster", str(roster))
        self.assertEqual(status, records.EXIT_OK, err)
        with open(self.out / lms.CANVAS, newline="") as f:
            header = next(csv.reader(f))
        self.assertEqual(header[5:], ["Lab 1 (55)", "Lab 2: second"])  # the roster's own header: that assignment
        with open(self.out / lms.GRADESCOPE, newline="") as f:
            self.assertEqual(next(csv.reader(f))[5:], ["Lab 1", "Lab 2: second"])
        self.assertIn("2 graded students not in the Canvas roster, left out", err)
        self.assertRegex(err, r"submission_1 \(Ben Bitdiddle, sid 102, ben@x\.edu\); submission_2 \(Cy D\. Fect")
        self.assertIn("1 student of the Canvas roster without an upload in this class: Nobody, Ned (ID 9, SIS 109)",
                      err)


class Overrides(ExportRun):
    def test_overrides_name_students_by_email_or_sid_and_survive_a_new_export(self):
        self.export()
        path = write_file(self.dir, "course/overrides.csv", "student,lab,points,reason\n"
                                                           "ADA@x.edu,02,60,regrade 4\n103,total,-10,case 7\n")
        status, err = self.run_class("--overrides", str(path))
        self.assertEqual(status, records.EXIT_OK, err)
        totals = {r["email"]: r["total"] for r in rows_of(self.out / records.GRADEBOOK)}
        self.assertEqual(totals, {"ada@x.edu": "120", "ben@x.edu": "120", "cy@x.edu": "110"})  # a group's upload
        # Gradescope exported again: new folder names, same people
        for folder in ("submission_1", "submission_2"):
            (self.up / folder).rename(self.up / folder.replace("_", "_9"))
        self.export(("submission_91", "submission_92"))
        status, err = self.run_class()
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertIn(f"overrides: {path}, as the last run of this class", err)
        totals = {r["email"]: r["total"] for r in rows_of(self.out / records.GRADEBOOK)}
        self.assertEqual(totals, {"ada@x.edu": "120", "ben@x.edu": "120", "cy@x.edu": "110"})

    def test_a_rerun_that_names_another_file_or_none_says_so(self):
        self.export()
        first = write_file(self.dir, "one.csv", "student,lab,points,reason\ncy@x.edu,total,-10,case 7\n")
        second = write_file(self.dir, "two.csv", "student,lab,points,reason\n")
        self.assertEqual(self.run_class("--overrides", str(first))[0], records.EXIT_OK)
        status, err = self.run_class("--overrides", str(second))
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertIn(f"overrides: {second}, in place of {first}, which the last run of this class applied", err)
        self.assertEqual(self.run_class("--overrides", str(first))[0], records.EXIT_OK)
        status, err = self.run_class("--overrides", "none")
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertIn(f"overrides: none, in place of {first}", err)
        self.assertEqual({r["email"]: r["total"] for r in rows_of(self.out / records.GRADEBOOK)}["cy@x.edu"], "120")
        status, err = self.run_class()  # none stays none, silently
        self.assertNotIn("overrides:", err)
        self.assertEqual(self.run_class("--overrides", str(first))[0], records.EXIT_OK)
        first.unlink()
        status, err = self.run_class()
        self.assertEqual(status, records.EXIT_BROKEN)
        self.assertIn(f"the last run of this class applied the overrides in {first}, which is gone", err)

    def test_an_email_two_uploads_share_is_refused(self):
        self.export()
        write_file(self.up, "submission_metadata.yml",
                   export_metadata({"submission_1": [self.ADA], "submission_2": [self.ADA]}))
        path = write_file(self.dir, "o.csv", "student,lab,points,reason\nada@x.edu,01,0,x\n")
        status, err = self.run_class("--overrides", str(path))
        self.assertEqual(status, records.EXIT_BROKEN)
        self.assertIn("'ada@x.edu' names more than one upload", err)


class Unit(ClassRun):
    def test_canvas_text_lists_one_row_per_member(self):
        labs = load_config(self.config).labs
        row = {"student": "s1", "name": "A; B", "sid": "1; 2", "email": "a@x; b@x", "total": 60.0,
               "max_score": 120.0, "labs": {"01-first": 60.0}, "status": "graded",
               "people": [{"name": "A", "sid": "1", "email": "a@x"}, {"name": "B", "sid": "2", "email": "b@x"}]}
        rows = list(csv.reader(io.StringIO(lms.canvas_text([row], labs))))
        self.assertEqual([r[:4] for r in rows[2:]], [["A", "", "1", "a@x"], ["B", "", "2", "b@x"]])

    def test_a_row_graded_on_the_simulator_is_no_grade_for_the_course(self):
        """make grade-class SIM=1: a reference solution's correctness-only 40 of 100 stays in gradebook.csv and out of
        canvas.csv and gradescope.csv, which say so (a helper following the README imported 40% for a perfect lab)."""
        labs = load_config(self.config).labs
        row = {"student": "s1", "name": "A", "sid": "1", "email": "a@x", "total": 30.0, "max_score": 120.0,
               "labs": {"01-first": 30.0}, "status": "simulator"}
        said = []
        lms.write(self.dir, [row], labs, warn=said.append)
        canvas = list(csv.reader(io.StringIO((self.dir / lms.CANVAS).read_text())))
        gradescope = list(csv.reader(io.StringIO((self.dir / lms.GRADESCOPE).read_text())))
        self.assertEqual(canvas[2][len(lms.CANVAS_IDENTITY):], [""] * len(labs))
        self.assertEqual(gradescope[1][3], "")
        self.assertTrue(any("1 student graded on the simulator left empty" in m for m in said), said)


if __name__ == "__main__":
    import unittest
    unittest.main()
