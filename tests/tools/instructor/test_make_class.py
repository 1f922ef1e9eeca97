"""tools/instructor/make_class.py: a synthetic class whose uploads grader/classroom/intake.py reads as the key says."""
import csv
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.classroom import intake
from grader.config import load_config

from tools.author import make_skeletons
from tools.instructor import make_class
from tools.instructor.variants import disguise
from tools.instructor.variants.wrong import mutations
from grader.patterns import KIT, PATTERNS


class Uploads(unittest.TestCase):
    """A class of 20 made once for the tests of a class (labs 03 and 06)."""

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


class SyntheticClass(Uploads):

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
        self.assertGreaterEqual(lab3.count("solution"), 9)
        wrong = set(lab3) - {"solution", "blank", "-"}
        self.assertGreaterEqual(len(wrong), 5)
        self.assertIn("infinite-loop", wrong)


class Copies(Uploads):
    """From 13 students on, two copy another's known-wrong files in disguise (tools/instructor/variants/
    disguise.py); grader/classroom/similarity.py's test checks that they are found."""

    def test_the_key_names_the_copies(self):
        self.assertEqual({s: r["copy_of"] for s, r in self.rows.items() if r["copy_of"]},
                         {"student10": "student03", "student11": "student06"})
        for copier in ("student10", "student11"):
            original = self.rows[self.rows[copier]["copy_of"]]
            self.assertIn("in disguise", self.rows[copier]["expected"])
            for lab in ("03-sequential", "06-scan"):
                wrong = original[lab] in mutations()
                self.assertEqual(self.rows[copier][lab], original[lab] if wrong else "solution")

    def test_a_copy_is_its_original_renamed_and_reordered(self):
        entries = {e.student: e for e in intake.find_entries(self.out)[0]}
        for which, (copier, original) in enumerate((("student10", "student03"), ("student11", "student06"))):
            mine, theirs = self.gather(entries[copier]), self.gather(entries[original])
            for lab in self.rows[copier]:
                if lab not in ("03-sequential", "06-scan") or self.rows[copier][lab] not in mutations():
                    continue
                source = "reduce.cu" if lab.startswith("03") else "scan.cu"
                text = (theirs.submission / lab / source).read_text()
                copied = (mine.submission / lab / source).read_text()
                self.assertNotEqual(text, copied)
                self.assertEqual(copied, disguise.disguise(text, which)[0])
                names = disguise.declared(text)
                self.assertTrue(names)
                self.assertFalse(set(names) & set(disguise.declared(copied)))  # every local renamed

    def test_small_classes_have_none(self):
        with tempfile.TemporaryDirectory() as tmp:
            key = make_class.make_class(Path(tmp) / "u", 12, "03")
            with open(key, newline="") as f:
                self.assertEqual({r["copy_of"] for r in csv.DictReader(f)}, {""})


class Disguise(unittest.TestCase):
    def test_what_it_changes(self):
        text = ("__global__ void k(const float *in, float *out)\n{\n    __shared__ float partial[32];\n"
                "    const unsigned t = threadIdx.x;\n    float4 x = in4[t];\n"
                "    out[t] = x.x + partial[t];\n}\n")
        changed, what = disguise.disguise(text, 0)
        self.assertEqual(what, "3 renamed, 1 swapped")
        self.assertIn("    const unsigned t_c = threadIdx.x;\n    __shared__ float partial_c[32];", changed)
        self.assertIn("out[t_c] = x_c.x + partial_c[t_c];", changed)  # .x, a member, keeps its name
        self.assertEqual(disguise.disguise(text, 1)[1], "3 renamed, 0 swapped")

    def test_dependent_or_ordered_lines_stay(self):
        for lines in (["    int a = 1;", "    int b = a;"], ["    int a = 1;", "    int b = atomicAdd(p, 1);"],
                      ["    int a = 1;", "    return;"], ["    int a = 1;", "        int b = 2;"]):
            with self.subTest(lines=lines):
                self.assertEqual(disguise.swappable(lines), [])
        self.assertEqual(disguise.swappable(["    int a = 1;", "    int b = 2;"]), [0])

    @unittest.skipUnless(shutil.which("nvcc"), "nvcc is not installed")
    def test_disguised_solutions_compile(self):
        with tempfile.TemporaryDirectory() as tmp:
            files = []
            for lab in ("03-sequential", "06-scan"):
                source = next((KIT / "solutions" / lab).glob("*.cu"))
                for which in (0, 1):
                    files.append(Path(tmp) / f"{lab}-{which}.cu")
                    files[-1].write_text(disguise.disguise(source.read_text(), which)[0])
            includes = [f"-I{folder}" for p in ("reduce", "scan") for folder in PATTERNS[p].include_folders]
            done = subprocess.run(["nvcc", "-std=c++17", "-c", *includes, *map(str, files)], cwd=tmp,
                                  capture_output=True, text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stderr[-3000:])


if __name__ == "__main__":
    unittest.main()
