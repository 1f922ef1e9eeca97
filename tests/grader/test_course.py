"""The course's own folder (course/, issue 21 item 7): course/labs.toml laid over the kit's grader/labs.toml
(grader/config.py: course_file, lay_over): a hidden group of the course's datasets after the kit's groups, an
lms_name, a changed threshold; a labs file given elsewhere is taken as it is; a change under course/ regrades a
class (records.kit_version)."""
import tempfile
import unittest
from pathlib import Path

from grader.classroom.records import kit_version
from grader.config import ConfigError, lay_over, load_config
from tests.grader.fakes import SMALL_TOML, write_file

COURSE = """
[[suites.s.groups]]
name = "course datasets"
points = 5
datasets = "course/datasets/reduce"
visibility = "after_due_date"

[labs.01-first]
lms_name = "Lab 1"

[labs.02-second.performance]
full = 2.5
"""


class Course(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.kit = Path(tmp.name)
        self.labs = write_file(self.kit, "grader/labs.toml", SMALL_TOML)

    def test_course_labs_toml_is_laid_over_the_kits(self):
        self.assertIsNone(load_config(self.labs).course)
        write_file(self.kit, "course/labs.toml", COURSE)
        config = load_config(self.labs)
        self.assertEqual(config.course, self.kit / "course" / "labs.toml")
        lab = config.named("01-first")
        self.assertEqual([g.name for g in lab.groups], ["small", "exact", "course datasets"])
        self.assertEqual((lab.groups[2].datasets, lab.groups[2].visibility), ("course/datasets/reduce",
                                                                             "after_due_date"))
        self.assertEqual(lab.lms_name, "Lab 1")
        self.assertEqual(config.named("02-second").performance.full, 2.5)
        self.assertEqual(config.named("02-second").performance.points, 30)  # the kit's, where the course says none
        other = write_file(self.kit, "elsewhere/labs.toml", SMALL_TOML)
        self.assertEqual(len(load_config(other).named("01-first").groups), 2)  # not the kit's: taken as it is

    def test_a_bad_course_file_names_itself(self):
        write_file(self.kit, "course/labs.toml", "[labs.01-first]\ncolour = 'red'\n")
        with self.assertRaisesRegex(ConfigError, r"unknown key colour.*course/labs.toml laid over labs.toml"):
            load_config(self.labs)

    def test_lay_over(self):
        self.assertEqual(lay_over({"a": {"b": 1, "c": [{"x": 1}]}, "d": [1]}, {"a": {"c": [{"x": 2}]}, "d": [2]}),
                         {"a": {"b": 1, "c": [{"x": 1}, {"x": 2}]}, "d": [2]})

    def test_course_data_is_part_of_the_kits_version(self):
        before = kit_version(self.kit, self.labs)
        write_file(self.kit, "course/datasets/reduce/a/input.raw", "x")
        self.assertNotEqual(kit_version(self.kit, self.labs), before)


if __name__ == "__main__":
    unittest.main()
