"""grader/classroom/similarity.py: on make class-uploads' synthetic class (20 students, labs 03 and 06) the
disguised copies are paired with their originals, the students who hand in the same file come out as one group
(never as every pair of it), and the page keeps a student's file as text. Needs copydetect (requirements.txt)."""
import contextlib
import csv
import io
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader.classroom import similarity
from grader.config import load_config
from grader.patterns import KIT
from tests.grader.test_config import free_number
from tools.instructor import make_class

try:
    import copydetect
except ImportError:
    copydetect = None
HAVE_COPYDETECT = copydetect is not None


def write(folder: Path, files: dict) -> dict:
    """{student: a labs/-shaped folder} holding files ({(student, lab): text})."""
    folders = {}
    for (student, lab), text in files.items():
        path = folder / student / lab / "reduce.cu"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        folders[student] = folder / student
    return folders


@unittest.skipUnless(HAVE_COPYDETECT, "copydetect is not installed (pip install -r requirements.txt)")
class SyntheticClass(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        key = make_class.make_class(root / "uploads", 20, "03,06")
        with open(key, newline="") as f:
            cls.key = {r["student"]: r for r in csv.DictReader(f)}
        cls.out = root / "out"
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            cls.status = similarity.main([str(root / "uploads"), "--out", str(cls.out), "--lab", "03,06"])
        cls.err = err.getvalue()
        with open(cls.out / similarity.TABLE, newline="") as f:
            cls.pairs = list(csv.DictReader(f))
        cls.page = (cls.out / similarity.PAGE).read_text()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def pair_of(self, lab, a, b):
        return [p for p in self.pairs if p["lab"] == lab and ({a, b} <= set(p["students_a"].split())
                                                              | set(p["students_b"].split()))]

    def test_the_copies_are_found(self):
        self.assertEqual(self.status, similarity.EXIT_OK, self.err)
        copies = {s: r["copy_of"] for s, r in self.key.items() if r["copy_of"]}
        self.assertEqual(copies, {"student10": "student03", "student11": "student06"})
        found = 0
        for copier, original in copies.items():
            for lab in ("03-sequential", "06-scan"):
                if self.key[copier][lab] != self.key[original][lab] or self.key[copier][lab] == "solution":
                    continue
                with self.subTest(copier=copier, lab=lab):
                    pairs = self.pair_of(lab, copier, original)
                    self.assertEqual(len(pairs), 1, self.pairs)
                    self.assertEqual(max(float(pairs[0]["share_a"]), float(pairs[0]["share_b"])), 1.0)
                    found += 1
        self.assertGreaterEqual(found, 3)

    def test_identical_files_are_one_group(self):
        solution = sorted(s for s, r in self.key.items() if r["03-sequential"] == "solution")
        self.assertGreaterEqual(len(solution), 9)
        line = [ln for ln in self.page.splitlines() if "identical to the reference solution" in ln
                and "student01" in ln]
        self.assertEqual(len(line), 2, "one group per lab")  # 03's and 06's
        for student in solution:
            self.assertIn(student, line[0])
        for p in self.pairs:  # no pair inside a group, and no pair made of solutions (the solution is boilerplate)
            a, b = set(p["students_a"].split()), set(p["students_b"].split())
            self.assertFalse(a & b, p)
            self.assertFalse(a <= set(solution) and b <= set(solution), p)

    def test_no_other_pairs(self):
        """Every pair holds a copy, or students who handed in the same known-wrong file (student03 and student18
        both hand in out-of-bounds-write for lab 06: identical, one group, not a pair)."""
        copiers = {"student10", "student11"}
        for p in self.pairs:
            with self.subTest(pair=p):
                self.assertTrue(copiers & set(p["students_a"].split() + p["students_b"].split()), p)

    def test_the_page(self):
        self.assertIn("Content-Security-Policy", self.page)
        self.assertNotIn("<script", self.page)
        self.assertIn("class='highlight-red'", self.page)
        self.assertIn("boilerplate: the skeleton and the reference solution", self.page)
        self.assertIn("left out, the upload cannot be read", self.err)  # the truncated zip


@unittest.skipUnless(HAVE_COPYDETECT, "copydetect is not installed (pip install -r requirements.txt)")
class Files(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.labs = load_config().select("03")
        self.solution = (KIT / "solutions/03-sequential/reduce.cu").read_text()

    def test_a_hostile_file_stays_text(self):
        hostile = self.solution.replace("partial[t] = i < count",
                                        "partial[t] = /* </pre><script>alert(1)</script> */ i + 1 < count")
        folders = write(self.dir, {("alice", "03-sequential"): hostile, ("bob", "03-sequential"): hostile + "\n\n",
                                   ("carol", "03-sequential"): hostile.replace("if (t == 0)", "if (!t)")})
        path, results = similarity.run(folders, self.labs, self.dir / "out")
        page = path.read_text()
        self.assertEqual([g.students for g in results[0].groups], [["alice", "bob"], ["carol"]])  # blank lines aside
        self.assertEqual(len(results[0].pairs), 1)
        self.assertNotIn("<script>alert", page)
        self.assertEqual(page.count("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), 2)  # both sides

    def test_the_threshold(self):
        own = self.solution.replace("partial[t] = i < count ? src[i] : 0.0f;",
                                    "float v = 0.0f;\n    if (i < count)\n        v = src[i];\n    partial[t] = v;")
        other = own.replace("if (t == 0)", "if (!t)")
        folders = write(self.dir, {("alice", "03-sequential"): own, ("bob", "03-sequential"): other})
        _, low = similarity.run(folders, self.labs, self.dir / "low", threshold=0.1)
        self.assertEqual(len(low[0].pairs), 1)
        pair = low[0].pairs[0]
        self.assertEqual((pair.a.students, pair.b.students), (["alice"], ["bob"]))
        self.assertGreater(pair.shared, 0)
        _, high = similarity.run(folders, self.labs, self.dir / "high", threshold=max(pair.share_a, pair.share_b))
        self.assertEqual(high[0].pairs, [])

    def test_the_graded_files_of_a_class(self):
        write(self.dir / "out" / "students", {("alice", "submission/03-sequential"): self.solution})
        self.assertEqual(similarity.graded_folders(self.dir / "out"),
                         {"alice": self.dir / "out" / "students" / "alice" / "submission"})
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = similarity.main(["--graded", str(self.dir / "out"), "--lab", "3"])
        self.assertEqual(status, similarity.EXIT_OK, err.getvalue())
        self.assertTrue((self.dir / "out" / similarity.PAGE).is_file())


class Usage(unittest.TestCase):
    def main(self, *argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                status = similarity.main(list(argv))
            except SystemExit as e:
                status = e.code
        return status, err.getvalue()

    def test_what_it_refuses(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(self.main()[0], 2)  # neither SUBMISSIONS nor --graded
            status, err = self.main("--graded", tmp)
            self.assertEqual(status, similarity.EXIT_BROKEN)
            self.assertIn("run make grade-class first", err)
            free = str(int(free_number(load_config())))  # a number no lab of labs.toml has
            status, err = self.main(tmp, "--lab", free)
            self.assertEqual(status, similarity.EXIT_BROKEN)
            self.assertIn(f"no lab matches {free}", err)

    def test_without_copydetect_it_says_how_to_install_it(self):
        with mock.patch.dict("sys.modules", {"copydetect": None}):
            with self.assertRaisesRegex(similarity.SimilarityError, "pip install -r requirements.txt"):
                similarity.compare([], [], "reduce.cu")


if __name__ == "__main__":
    unittest.main()
