"""tools/instructor/make_class.py: a synthetic class whose uploads grader/classroom/intake.py reads as the key says."""
import csv
import tempfile
import unittest
from pathlib import Path

from grader.classroom import intake
from grader.config import load_config

from tools.author import make_skeletons
from tools.instructor import make_class
from grader.patterns import KIT


class SyntheticClass(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "uploads"
        cls.key = make_class.make_class(cls.out, 20, "03,06")
        with open(cls.key, newline="") as f:
            cls.rows = {r["student"]: r for r in csv.DictReader(f)}
        cls.labs = load_config().select("03") + load_config().select("06")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def gather(self, entry):
        return intake.gather(entry, self.labs, Path(self.tmp.name) / "graded" / entry.student)

    def test_twenty_uploads_of_every_shape(self):
        entries, notes = intake.find_entries(self.out)
        self.assertEqual(notes, [])
        self.assertEqual([e.student for e in entries], [f"student{k:02d}" for k in range(1, 21)])
        self.assertEqual(set(self.rows), {e.student for e in entries})
        self.assertEqual({r["shape"] for r in self.rows.values()}, set(make_class.SHAPES))
        kinds = {Path(e.path).name.split(".", 1)[-1] for e in entries if e.kind == "archive"}
        self.assertEqual(kinds, {"zip", "tar", "tar.gz"})

    def test_each_upload_holds_what_the_key_says(self):
        texts = {}
        for entry in intake.find_entries(self.out)[0]:
            row = self.rows[entry.student]
            with self.subTest(student=entry.student, shape=row["shape"]):
                if "unreadable" in row["expected"]:
                    with self.assertRaises(intake.IntakeError):
                        self.gather(entry)
                    continue
                got = self.gather(entry)
                if "no files" in row["expected"]:
                    self.assertEqual(got.found, [])
                    continue
                for lab in ("03-sequential", "06-scan"):
                    variant = row[lab]
                    path = got.submission / lab / ("reduce.cu" if lab.startswith("03") else "scan.cu")
                    self.assertEqual(path.is_file(), variant != "missing", variant)
                    if path.is_file():
                        texts.setdefault(lab, {}).setdefault(variant, set()).add(path.read_text())
                if "escaped" in row["expected"]:
                    self.assertIn("../../escaped.cu", "\n".join(got.problems))
        self.assertFalse(list(Path(self.tmp.name).rglob("escaped.cu")))
        lab3 = texts["03-sequential"]
        self.assertEqual(lab3["solution"], {(KIT / "solutions/03-sequential/reduce.cu").read_text()})
        skeleton = make_skeletons.blank_out((KIT / "solutions/03-sequential/reduce.cu").read_text())
        self.assertEqual(lab3["blank"], {skeleton})  # derived, whatever labs/ holds
        self.assertTrue(all("WRONG ON PURPOSE" in t for v, ts in lab3.items() if v not in ("solution", "blank")
                            for t in ts))

    def test_the_mix(self):
        lab3 = [r["03-sequential"] for r in self.rows.values()]
        self.assertEqual(self.rows["student01"]["03-sequential"], "solution")
        self.assertEqual(self.rows["student02"]["03-sequential"], "blank")
        self.assertGreaterEqual(lab3.count("solution"), 10)
        wrong = set(lab3) - {"solution", "blank", "-"}
        self.assertGreaterEqual(len(wrong), 5)
        self.assertIn("infinite-loop", wrong)


if __name__ == "__main__":
    unittest.main()
