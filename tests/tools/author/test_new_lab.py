"""make new-lab (tools/author/new_lab.py): a new lab of an existing pattern, scaffolded in a copy of the kit's files
it touches, for every pattern of grader/labs.toml, and the first lab of a pattern (--pattern) in a copy whose labs
of that pattern are gone; it never replaces a file."""
import re
import shutil
import tempfile
import unittest
from pathlib import Path

from grader.config import load_config
from grader.patterns import KIT, PATTERNS
from tools.author import new_lab
from tools.author.make_skeletons import blank_out, derive

CONFIG = load_config()


def free_number() -> str:
    taken = {lab.name[:2] for lab in CONFIG.labs}
    return next(f"{k:02d}" for k in range(1, 100) if f"{k:02d}" not in taken)


class Scaffold(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.kit = Path(tmp.name)
        (self.kit / "grader").mkdir()
        shutil.copy2(KIT / "grader" / "labs.toml", self.kit / "grader" / "labs.toml")
        shutil.copytree(KIT / "solutions", self.kit / "solutions")
        (self.kit / "labs").mkdir()
        (self.kit / "handouts").mkdir()
        self.config = self.kit / "grader" / "labs.toml"

    def scaffold(self, name, like, title="a title"):
        return new_lab.scaffold(name, like, title, kit=self.kit, config_path=self.config)

    def tree(self) -> dict:
        return {str(p.relative_to(self.kit)): p.read_bytes() for p in self.kit.rglob("*") if p.is_file()}

    def test_one_lab_of_each_pattern(self):
        """For the first lab of each pattern of labs.toml: the files, the skeleton, the labs.toml table."""
        firsts = {}
        for lab in CONFIG.labs:
            firsts.setdefault(lab.pattern, lab)
        number = int(free_number())
        for k, like in enumerate(firsts.values()):
            name = f"{number + k:02d}-new-{like.pattern}"
            with self.subTest(like=like.name):
                said = self.scaffold(name, like.name[:2], title="my new stage")
                solution = (KIT / "solutions" / like.name / like.source).read_text()
                mine = (self.kit / "solutions" / name / like.source).read_text()
                self.assertEqual(mine, new_lab._renamed(solution, like.name, name))
                self.assertNotIn(like.name, mine)
                self.assertEqual(blank_out(mine).count("@@ TODO"), blank_out(solution).count("@@ TODO"))
                # the blank is make skeletons' to derive, once the solution is written: a new file, so it can
                self.assertFalse((self.kit / "labs" / name / like.source).exists())
                written = derive(self.kit / "derived", self.kit / "solutions")
                self.assertEqual((written / name / like.source).read_text(), blank_out(mine))
                for root in ("labs", "solutions"):
                    readme = (self.kit / root / name / "README.md").read_text()
                    self.assertIn(f"(../../handouts/{name}.md)", readme)
                    self.assertTrue(readme.startswith(f"# Lab {name[:2]}: my new stage\n"))
                    self.assertIn(f"include $(KIT)/mk/lab.mk", (self.kit / root / name / "Makefile").read_text())
                self.assertTrue((self.kit / "handouts" / f"{name}.md").read_text().startswith(f"# Lab {name[:2]}:"))
                lab = next(x for x in load_config(self.config).labs if x.name == name)
                self.assertEqual((lab.pattern, lab.source, lab.args), (like.pattern, like.source, like.args))
                self.assertEqual([g.name for g in lab.groups], [g.name for g in like.groups])
                self.assertEqual((lab.performance.yardstick, lab.performance.bench),
                                 (like.performance.yardstick, like.performance.bench))
                self.assertIn("NOT CALIBRATED", self.config.read_text())
                self.assertIn("docs/AUTHORING.md", "\n".join(said))

    def test_the_first_lab_of_a_pattern(self):
        """Each pattern's labs taken out of the copy's labs.toml and solutions/, the first lab scaffolded from its
        descriptor: the folders, a solution file whose blank make skeletons derives, a [labs.NAME] table of the
        pattern's suite timed against CUB and marked as not calibrated."""
        for pattern in sorted({lab.pattern for lab in CONFIG.labs}):
            with self.subTest(pattern=pattern):
                self.setUp()
                text = self.config.read_text()
                for lab in (x for x in CONFIG.labs if x.pattern == pattern):
                    text = re.sub(rf"^\[labs\.{lab.name}[\].].*?(?=^\[|^# ----|\Z)", "", text, flags=re.M | re.S)
                    shutil.rmtree(self.kit / "solutions" / lab.name)
                self.config.write_text(text)
                name = f"{free_number()}-first-{pattern}"
                said = new_lab.scaffold(name, None, "a first lab", kit=self.kit, config_path=self.config,
                                        pattern_name=pattern)
                source = PATTERNS[pattern].source
                solution = (self.kit / "solutions" / name / source).read_text()
                self.assertIn(f'#include "{pattern}.h"', solution)
                written = derive(self.kit / "derived", self.kit / "solutions")
                self.assertEqual((written / name / source).read_text(), blank_out(solution))
                self.assertIn(f"PATTERN := {pattern}\n", (self.kit / "labs" / name / "Makefile").read_text())
                lab = next(x for x in load_config(self.config).labs if x.name == name)
                self.assertEqual((lab.pattern, lab.source, lab.performance.yardstick), (pattern, source, "cub"))
                self.assertEqual([g.name for g in lab.groups], [g["name"] for g in PATTERNS[pattern].suite["groups"]])
                self.assertIn("NOT CALIBRATED", self.config.read_text())
                self.assertIn("docs/AUTHORING.md", "\n".join(said))
        with self.assertRaisesRegex(new_lab.NewLabError, f"{CONFIG.labs[0].name} is already a lab of it"):
            self.setUp()
            new_lab.scaffold(f"{free_number()}-x", None, "t", kit=self.kit, config_path=self.config,
                             pattern_name=CONFIG.labs[0].pattern)
        with self.assertRaisesRegex(new_lab.NewLabError, "no such pattern"):
            new_lab.scaffold(f"{free_number()}-x", None, "t", kit=self.kit, config_path=self.config,
                             pattern_name="sort")

    def test_refusals_write_nothing(self):
        like = CONFIG.labs[0]
        before = self.tree()
        for name, like_name, words in [
                ("9-x", like.name, "two digits"),
                (f"{like.name[:2]}-again", like.name, "is taken by"),
                (f"{free_number()}-Upper", like.name, "lowercase"),
                (f"{free_number()}-x", "no-such-lab", "no single lab")]:
            with self.subTest(name=name, like=like_name):
                with self.assertRaisesRegex(new_lab.NewLabError, words):
                    self.scaffold(name, like_name)
                self.assertEqual(self.tree(), before)

    def test_never_replaces_a_file(self):
        name = f"{free_number()}-mine"
        (self.kit / "labs" / name).mkdir(parents=True)
        (self.kit / "labs" / name / "notes.txt").write_text("a student's notes")
        before = self.tree()
        with self.assertRaisesRegex(new_lab.NewLabError, "already exists; nothing was written"):
            self.scaffold(name, CONFIG.labs[0].name)
        self.assertEqual(self.tree(), before)

    def test_the_command_line_says_what_is_wrong(self):
        self.assertEqual(new_lab.main(["9-x", "--like", "01"]), 2)


if __name__ == "__main__":
    unittest.main()
