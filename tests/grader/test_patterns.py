"""grader/patterns.py: the one Python reader of the harness's size syntax (the same sizes harness/checker/cli.c
takes, the same refusals), the patterns' descriptors (patterns/NAME/pattern.toml: every folder of patterns/ is a
pattern with its role files, and the checker the build makes knows each one), and the registry against the labs:
every lab of labs.toml is a pattern of the registry, with its file, and each lab folder's Makefile names the pattern
labs.toml gives it."""
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.config import ConfigError, load_config
from tests.grader.test_config import free_number
from grader.patterns import (KIT, PATTERNS, PatternError, format_size, lab_dirs, parse_size, parse_sizes, pattern,
                             read_pattern, select_labs)


class Sizes(unittest.TestCase):
    def test_the_harness_syntax(self):
        for text, n in [("1", 1), ("1025", 1025), ("2^20", 1 << 20), ("2^24+3", (1 << 24) + 3),
                        ("2^10-1", 1023), (" 2^26 ", 1 << 26), ("2^40", 1 << 40)]:
            with self.subTest(text=text):
                self.assertEqual(parse_size(text), n)

    def test_what_the_harness_refuses(self):
        # as ppl_parse_sizes (tests/harness/test_cli.c): no zero, no other base, no exponent over 40, nothing else
        for text in ["0", "2^0-1", "3^4", "2^41", "-5", "1e6", "", "2^", "2^4+", "x", "2 ^ 4", "1,2"]:
            with self.subTest(text=text):
                self.assertIsNone(parse_size(text))

    def test_lists(self):
        self.assertEqual(parse_sizes("1,33,2^20+1"), [1, 33, (1 << 20) + 1])
        self.assertIsNone(parse_sizes("1,,2"))
        self.assertIsNone(parse_sizes("1,"))
        self.assertIsNone(parse_sizes(""))

    def test_format(self):
        self.assertEqual([format_size(n) for n in (1, 2, 1 << 26, 1000, 65537)], ["2^0", "2^1", "2^26", "1000",
                                                                                  "65537"])
        for n in (1, 7, 1 << 20, (1 << 20) + 1):
            self.assertEqual(parse_size(format_size(n)), n)


class Registry(unittest.TestCase):
    def test_every_run_is_well_formed(self):
        for p in PATTERNS.values():
            with self.subTest(pattern=p.name):
                self.assertEqual(p.source, f"{p.name}.cu")  # mk/lab.mk's default LAB_SRC
                for run in (*p.check_runs, p.sim_run, p.counts_run):
                    self.assertEqual(len(run) % 2, 0, run)
                    self.assertIsNotNone(parse_sizes(dict(zip(run[::2], run[1::2]))["--n"]), run)

    def test_an_unknown_pattern_is_named(self):
        with self.assertRaisesRegex(ValueError, "'sort' is not a pattern of the kit \\(the patterns: " +
                                    ", ".join(sorted(PATTERNS)) + "\\)"):
            pattern("sort")

    def test_every_folder_is_a_pattern_with_its_role_files(self):
        """Each folder of patterns/ has its descriptor and its side of each program (mk/harness.mk finds them by
        these names), its header, and the kit's calls its labs may make, declared in that header."""
        folders = sorted(p.name for p in (KIT / "patterns").iterdir() if p.is_dir())
        self.assertEqual(folders, sorted(PATTERNS))
        for p in PATTERNS.values():
            with self.subTest(pattern=p.name):
                for role in ("pattern.toml", "check.c", "serve.cu", "runner.cpp", "support.cu", "datasets.c"):
                    self.assertTrue((p.folder / role).is_file(), f"patterns/{p.name}/{role} (docs/AUTHORING.md, "
                                                                 f"\"A new pattern\")")
                self.assertEqual(p.headers, (f"{p.name}.h",))
                header = (p.folder / "include" / p.headers[0]).read_text()
                for name in p.calls.get("names", []):
                    self.assertRegex(header, rf"\b{name}\(", f"{name} of [calls] is not declared in {p.headers[0]}")
                self.assertIn(f"PPL_PATTERN(ppl_pattern_{p.name})", (p.folder / "check.c").read_text())
                self.assertTrue(p.suite.get("groups"), f"patterns/{p.name}/pattern.toml has no [[suite.groups]]")

    def test_a_broken_descriptor_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "sort"
            shutil.copytree(KIT / "patterns" / "compact", folder)
            text = (folder / "pattern.toml").read_text()
            for broken, said in ((text.replace("element_bytes = 4", "element_bytes = 3"), "element_bytes must be"),
                                 (text.replace('yardstick = "--copy"\n', ""), "missing keys yardstick"),
                                 ("colour = 1\n" + text, "unknown keys colour"), ("x = [", "cannot read it")):
                with self.subTest(said=said):
                    (folder / "pattern.toml").write_text(broken)
                    with self.assertRaisesRegex(PatternError, f"patterns/sort/pattern.toml: .*{said}"):
                        read_pattern(folder)

    def test_the_checker_knows_every_pattern(self):
        """The checker's table is every pattern the build links (checker/pattern.h's PPL_PATTERN): its usage names
        each folder of patterns/."""
        checker = KIT / "build" / "tests" / "patterns" / "ppl_checker"
        made = subprocess.run(["make", "-s", "-f", "mk/checker.mk", f"KIT={KIT}", f"CHECKER_BUILD={checker.parent}"],
                              cwd=KIT, capture_output=True, text=True, timeout=600)
        self.assertEqual(made.returncode, 0, made.stderr)
        said = subprocess.run([str(checker), "--pattern", "sort"], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(said.returncode, 0)
        usage = re.search(r"--pattern (\S+) ", said.stderr)
        self.assertIsNotNone(usage, said.stderr)
        self.assertEqual(sorted(usage.group(1).split("|")), sorted(PATTERNS))
        self.assertIn("unknown pattern: sort", said.stderr)

    def test_the_labs_and_their_makefiles(self):
        """labs.toml says each lab's pattern; its Makefiles (labs/ and solutions/) name the same one and no file of
        their own (mk/lab.mk takes the pattern's)."""
        config = load_config()
        for lab in config.labs:
            self.assertIn(lab.pattern, PATTERNS)
            self.assertEqual(lab.source, PATTERNS[lab.pattern].source)
        for root in ("labs", "solutions"):
            for folder in lab_dirs(KIT / root):
                with self.subTest(folder=f"{root}/{folder.name}"):
                    lab = config.named(folder.name)
                    self.assertIsNotNone(lab, f"{root}/{folder.name} is not a lab of grader/labs.toml")
                    text = (folder / "Makefile").read_text()
                    self.assertEqual(re.findall(r"^PATTERN := (\S+)$", text, re.M), [lab.pattern])
                    self.assertNotIn("LAB_SRC", text)


class LabSelector(unittest.TestCase):
    """One lab selector for every target (issue 12): LAB=03,05; a bare number names its lab (LAB=1 is 01)."""

    NAMES = ["01-global-strided", "03-sequential", "05-coarsened", "10-extra"]

    def test_what_it_picks(self):
        cases = {None: self.NAMES, "": self.NAMES, "03": ["03-sequential"], "3": ["03-sequential"],
                 "1": ["01-global-strided"], "03,05": ["03-sequential", "05-coarsened"],
                 "05,03,3": ["03-sequential", "05-coarsened"], "03-seq": ["03-sequential"], "10": ["10-extra"],
                 "01-global-strided": ["01-global-strided"], " 05 , 1 ": ["01-global-strided", "05-coarsened"]}
        for text, names in cases.items():
            with self.subTest(text=text):
                self.assertEqual(select_labs(self.NAMES, text), names)

    def test_an_item_that_picks_nothing_is_named(self):
        for text in ("9", "03,9", "0", "sequential"):
            with self.subTest(text=text), self.assertRaisesRegex(ValueError, "no lab matches"):
                select_labs(self.NAMES, text)

    def test_every_tool_reads_it(self):
        config = load_config()
        self.assertEqual([lab.name for lab in config.select("3,5")], ["03-sequential", "05-coarsened"])
        free = str(int(free_number(config)))  # a number no lab of labs.toml has
        with self.assertRaisesRegex(ConfigError, f"--lab {free}: no lab matches {free}"):
            config.select(free)
        self.assertEqual([d.name for d in lab_dirs(KIT / "solutions", "1,8")], ["01-global-strided", "08-single-pass"])
        self.assertEqual(lab_dirs(KIT / "solutions", free), [])


if __name__ == "__main__":
    unittest.main()
