"""tools/instructor/variants/: every known-wrong submission is still made from its solution (each edit applies exactly once), so
a solution that changes cannot leave a stale copy behind, and each one differs from its solution."""
import tempfile
import unittest
from pathlib import Path

from tests.grader.fakes import KIT
from tools.instructor.variants.wrong import mutated_text, mutations, submission


class Mutations(unittest.TestCase):
    def test_every_mutation_applies_to_its_solution(self):
        for name, m in mutations().items():
            with self.subTest(name):
                solution = (KIT / "solutions" / m["lab"] / m["file"]).read_text()
                text = mutated_text(name)  # raises if an edit's old text is not in the solution exactly once
                self.assertTrue(m["edits"], name)
                self.assertTrue(text.startswith("/*\n * WRONG ON PURPOSE"), name)
                self.assertIn("Expected verdict", text.split("*/", 1)[0], name)
                body = lambda t: t.split("\n */\n", 1)[1]
                self.assertNotEqual(body(text), body(solution), name)

    def test_submission_is_shaped_like_labs(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = submission("drop-one", tmp)
            self.assertEqual(folder, Path(tmp) / "drop-one")
            self.assertTrue((folder / "03-sequential" / "reduce.cu").is_file())
            self.assertIn("i + 1 < count", (folder / "03-sequential" / "reduce.cu").read_text())

    def test_a_stale_edit_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            lab = Path(tmp) / "03-sequential"
            lab.mkdir()
            (lab / "reduce.cu").write_text("/*\n * a solution rewritten\n */\nint nothing_alike;\n")
            with self.assertRaisesRegex(ValueError, r"\[drop-one\]: solutions/03-sequential/reduce.cu holds this "
                                                    r"edit's old text 0 times"):
                mutated_text("drop-one", solutions=Path(tmp))
