"""`make help`: printed from the one-line `## ` comments above the Makefile's rules, and listing every target."""
import re
import subprocess
import unittest

from grader.patterns import KIT


def rule_targets(text: str) -> list:
    """The targets of the Makefile's rules, in order (not variables, pattern rules or special targets)."""
    targets = []
    for line in text.splitlines():
        m = re.match(r"^([a-z][\w -]*):(?!=)", line)
        if m:
            targets += m[1].split()
    return targets


class MakeHelp(unittest.TestCase):
    def setUp(self):
        self.text = (KIT / "Makefile").read_text()

    def test_every_target_is_listed(self):
        listed = set(re.findall(r"^## .*?\bmake ([\w-]+)", self.text, re.M))
        listed |= set(re.findall(r"^## make [\w-]+, make ([\w-]+)", self.text, re.M))
        missing = [t for t in rule_targets(self.text) if t not in listed]
        self.assertEqual(missing, [], "targets without a `## make TARGET ...` line in the Makefile")
        self.assertIn("clean", rule_targets(self.text))
        self.assertIn("test-gpu", rule_targets(self.text))

    def test_each_help_line_sits_above_its_rule(self):
        lines = self.text.splitlines()
        for k, line in enumerate(lines):
            targets = rule_targets(line)
            if targets:
                self.assertTrue(lines[k - 1].startswith("## "), f"no `## ` line right above the rule {line!r}")

    def test_make_help_prints_them(self):
        done = subprocess.run(["make", "-s", "--no-print-directory", "help"], cwd=KIT, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        want = [line[3:] for line in self.text.splitlines() if line.startswith("## ")]
        self.assertEqual(done.stdout.splitlines(), want)


if __name__ == "__main__":
    unittest.main()
