"""Student bytes are data (issue 20, item 4): tool output read as bytes, student text stripped of control characters
before it is printed or stored, results.json never left from a previous grading, and the size caps of labs.toml's
[limits] (a lab file refused unread; the similarity report leaves such a file out)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader import grade
from grader.config import ConfigError, load_config
from grader.compile.objfile import read_symbols
from grader.report.report import Report, format_table, gradescope_results
from grader.classroom.gradebook import text_cell
from grader.report.report_html import esc
from grader.score.score import TestResult
from grader.report.text import decode, encode, printable, printable_json
from tests.grader.fakes import make_submission

KIT = Path(__file__).resolve().parents[2]
FORGED = "\x1b[2J\x1b[H\x1b[32mTotal 100 / 100\x1b[0m\r\n  datasets   10 / 10   pass\x9b1A\x1b]0;owned\x07\u202e"


class Decoding(unittest.TestCase):
    def test_bytes_that_are_not_utf8_never_raise(self):
        self.assertEqual(decode(b"sum\xff"), "sum\ufffd")
        self.assertEqual(decode(b"sum\xff", round_trip=True), "sum\udcff")
        self.assertEqual(encode(decode(b"a\xfe\xffb", round_trip=True)), b"a\xfe\xffb")
        self.assertNotEqual(decode(b"a\xfe", round_trip=True), decode(b"a\xff", round_trip=True))
        self.assertEqual(decode(None), "")

    @unittest.skipUnless(shutil.which("gcc") and shutil.which("nm"), "gcc or nm is not installed here")
    def test_nm_reads_a_symbol_with_0xff_escapes_and_spaces(self):
        """A symbol name is any bytes but NUL (an assembler's quoted name): nm's listing is read as bytes, the name
        kept whole, its type read from the end of the line."""
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / "t.c"
            source.write_bytes(b'void f(void) __asm__("weird\\xffname");\nvoid f(void) {}\n'
                               b'__asm__(".globl \\"esc\\x1b[2Jx y\\"\\n\\"esc\\x1b[2Jx y\\": ret\\n");\n')
            subprocess.run(["gcc", "-c", str(source), "-o", f"{tmp}/t.o"], check=True, capture_output=True)
            symbols = {s.name: s.kind for s in read_symbols(shutil.which("nm"), f"{tmp}/t.o")}
        self.assertEqual(symbols, {"weird\udcffname": "T", "esc\x1b[2Jx y": "T"})
        self.assertEqual(printable("weird\udcffname"), "weird\\xffname")


class Stripping(unittest.TestCase):
    def test_escapes_and_controls_go_line_feeds_and_tabs_stay(self):
        self.assertEqual(printable(FORGED), "Total 100 / 100\n  datasets   10 / 10   pass")
        self.assertEqual(printable("a\tb\nc\x00d\x7fe\x85f"), "a\tb\ncdef")
        self.assertEqual(printable("one\ntwo\tthree", keep=""), "one two three")
        self.assertEqual(printable("bell\x07 and a lone escape \x1b"), "bell and a lone escape ")

    def test_json_strings_and_keys(self):
        self.assertEqual(printable_json({"o\x1b[1mk": ["x\ry", 3, None, {"z": "\x1b[31mred"}]}),
                         {"ok": ["xy", 3, None, {"z": "red"}]})

    def test_cells_and_html(self):
        self.assertEqual(text_cell("\x1b[2J=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0")
        self.assertEqual(text_cell("two\nlines"), "two lines")
        self.assertEqual(esc("<b>\x1b[31m"), "&lt;b&gt;")

    def report(self) -> Report:
        report = Report("labs\x1b[2J", 7)
        report.results = [TestResult("03-sequential", "datasets", 10, 0.0, "FAIL", "case 1: wrong sum" + FORGED,
                                     "the runner printed:\n" + FORGED)]
        report.notes.append("a note\x1b[5m")
        return report

    def test_the_table_holds_no_control_character_and_no_forged_row(self):
        table = format_table(self.report())
        self.assertFalse(any(ord(c) < 32 and c not in "\n\t" or 0x7f <= ord(c) <= 0x9f for c in table), repr(table))
        self.assertNotIn("\u202e", table)
        rows = [ln for ln in table.splitlines() if ln.startswith("  datasets")]
        self.assertEqual(len(rows), 1, table)  # the summary is one line; the forged row is inside the details
        self.assertEqual([ln for ln in table.splitlines() if ln.startswith("Total ")], ["Total 0 / 10"])

    def test_results_json_holds_no_control_character(self):
        text = json.dumps(gradescope_results(self.report()), ensure_ascii=False)
        self.assertNotIn("\x1b", text)
        self.assertNotIn("\\u001b", text)
        self.assertNotIn("\r", json.loads(text)["tests"][0]["output"])


class ResultsFile(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)

    def test_a_grading_that_fails_leaves_no_previous_results(self):
        """results.json is removed when a grading starts and written (temp file + os.replace) at its end: a grader
        that stops on the way leaves none, never the previous submission's."""
        results = self.dir / "results.json"
        results.write_text('{"score": 100}')
        submission = make_submission(self.dir / "sub", ["03-sequential"])

        class Boom(Exception):
            pass

        with mock.patch.object(grade.Grader, "grade", side_effect=Boom("a crash mid-grading")):
            with self.assertRaises(Boom):
                grade.main(["--submission", str(submission), "--lab", "03", "--results", str(results),
                            "--build-dir", str(self.dir / "build"), "--quiet"])
        self.assertFalse(results.exists())

    def test_written_atomically(self):
        report = Report("labs", 1)
        path = self.dir / "out" / "results.json"
        with mock.patch("grader.report.report.os.replace", wraps=os.replace) as replaced:
            grade.write_results(report, path)
        replaced.assert_called_once()
        self.assertEqual(json.loads(path.read_text())["score"], 0)
        self.assertEqual(sorted(p.name for p in path.parent.iterdir()), ["results.json"])


class Caps(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)

    def test_labs_toml_states_the_lab_file_cap(self):
        config = load_config(KIT / "grader" / "labs.toml")
        self.assertEqual(config.limits.lab_file_bytes, 256 << 10)
        bad = self.dir / "labs.toml"
        text = (KIT / "grader" / "labs.toml").read_text().replace("lab_file_kib = 256", "lab_file_kib = 1")
        bad.write_text(text)
        with self.assertRaisesRegex(ConfigError, "lab_file_kib"):
            load_config(bad)

    def test_an_oversized_lab_file_is_refused_unread(self):
        submission = make_submission(self.dir / "sub", ["03-sequential"], text="// x\n" * ((300 << 10) // 5))
        built = []
        config = load_config(KIT / "grader" / "labs.toml")
        grader = grade.Grader(config, submission, kit=KIT, build_dir=self.dir / "build",
                              build=lambda *a, **k: built.append(a), build_harness=lambda *a, **k: mock.Mock(ok=True))
        report = grader.grade(config.select("03"))
        self.assertEqual(built, [])
        first = report.results[1]
        self.assertEqual((first.name, first.status), ("datasets", "NO BUILD"))
        self.assertRegex(first.summary, r"reduce\.cu is refused unread: it is 300 KiB, over the 256 KiB a lab file "
                                        r"may be \(grader/labs\.toml \[limits\] lab_file_kib\)")
        self.assertIn("submit it again", first.summary)
        self.assertEqual(report.score, 0)

    def test_similarity_leaves_an_oversized_file_out_reading_no_more_than_the_cap(self):
        from grader.classroom import similarity
        files = {}
        for student, size in (("alice", 100), ("bob", 5 << 20)):
            path = self.dir / student / "reduce.cu"
            path.parent.mkdir()
            path.write_text("x" * size)
            files[student] = path
        too_large = []
        real_open = open
        reads = []

        def spying_open(path, mode="r", *a, **k):
            f = real_open(path, mode, *a, **k)
            read = f.read
            f.read = lambda n=-1: reads.append(n) or read(n)  # noqa: E731
            return f

        with mock.patch("builtins.open", spying_open):
            groups = similarity.identical_groups(files, None, None, cap=256 << 10, too_large=too_large)
        self.assertEqual([g.students for g in groups], [["alice"]])
        self.assertEqual(too_large, [("bob", 5 << 20)])
        self.assertTrue(reads and all(0 < n <= (256 << 10) + 1 for n in reads), reads)
        html = similarity.lab_section(similarity.LabResult("03-sequential", "reduce.cu", groups, too_large=too_large),
                                      0.5)
        self.assertIn("bob (5.0 MiB)", html)
        self.assertIn("lab_file_kib", html)


if __name__ == "__main__":
    unittest.main()
