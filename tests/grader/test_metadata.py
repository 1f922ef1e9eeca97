"""grader/intake/metadata.py: Gradescope's submission metadata, the export's YAML and the runner's JSON, read with
PyYAML: names with quotes and letters outside ASCII come out as written, created_at and the due dates as aware
datetimes, extensions per student, and a clear error for a file that is not metadata."""
import datetime as dt
import json
import tempfile
import unittest
from pathlib import Path

from grader.intake import metadata

UTC = dt.timezone.utc
EST = dt.timezone(dt.timedelta(hours=-5))

# An export's submission_metadata.yml as Gradescope writes it (Ruby's YAML: symbol keys, single-quoted strings with
# '' for a quote, timestamps with nanoseconds), with a group, a numeric sid, a Ruby tag and a block of results.
EXPORT = """\
submission_409194023:
  :submitters:
  - :name: 'Conan O''Brien'
    :sid: '123456789'
    :email: conan@example.edu
  :created_at: 2026-12-02 04:59:30.861687000 Z
  :score: 2.0
  :results: !ruby/hash:ActiveSupport::HashWithIndifferentAccess
    score: 2.0
    output: |-
      Total 2 / 100
      a line: with a colon
submission_500000001:
  :submitters:
  - :name: José Ñúñez-Łukasz
    :sid: 222
    :email: jose@example.edu
  - :name: "Zoë \\"Z\\" Smith"
    :sid: '0042'
  :created_at: 2026-12-01 23:59:00.000000000 -05:00
submission_600000002:
  :submitters: []
"""

# The runner's /autograder/submission_metadata.json: one user with an extension of two days.
RUNNER = {
    "id": 123456,
    "created_at": "2026-12-03T10:00:00.365935-05:00",
    "assignment": {"due_date": "2026-12-01T23:59:00.000000-05:00", "late_due_date": "2026-12-04T23:59:00-05:00",
                   "release_date": "2026-11-01T00:00:00.000000-05:00", "title": "Lab 03", "total_points": "100.0"},
    "submission_method": "upload",
    "users": [{"email": "o.brien@example.edu", "id": 1234, "name": "Conan O'Brien", "sid": "123",
               "assignment": {"due_date": "2026-12-03T23:59:00-05:00",
                              "late_due_date": "2026-12-06T23:59:00-05:00"}}],
    "previous_submissions": [],
}


class Metadata(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="metadata-")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name: str, text: str) -> Path:
        path = self.dir / name
        path.write_text(text, encoding="utf-8")
        return path

    def test_the_export(self):
        subs = metadata.read_export(self.write("submission_metadata.yml", EXPORT))
        self.assertEqual(sorted(subs), ["submission_409194023", "submission_500000001", "submission_600000002"])
        conan = subs["submission_409194023"]
        self.assertEqual(conan.name, "Conan O'Brien")
        self.assertEqual((conan.sid, conan.email), ("123456789", "conan@example.edu"))
        self.assertEqual(conan.created_at, dt.datetime(2026, 12, 2, 4, 59, 30, 861687, tzinfo=UTC))
        group = subs["submission_500000001"]
        self.assertEqual(group.name, 'José Ñúñez-Łukasz; Zoë "Z" Smith')
        self.assertEqual(group.sid, "222; 0042")
        self.assertEqual(group.created_at, dt.datetime(2026, 12, 1, 23, 59, tzinfo=EST))
        self.assertEqual(group.created_at, dt.datetime(2026, 12, 2, 4, 59, tzinfo=UTC))
        self.assertEqual(subs["submission_600000002"].people, ())
        self.assertIsNone(subs["submission_600000002"].created_at)

    def test_the_runner(self):
        sub = metadata.read_runner(self.write("submission_metadata.json", json.dumps(RUNNER)))
        self.assertEqual(sub.name, "Conan O'Brien")
        self.assertEqual(sub.created_at, dt.datetime(2026, 12, 3, 10, 0, 0, 365935, tzinfo=EST))
        self.assertEqual(sub.due, dt.datetime(2026, 12, 1, 23, 59, tzinfo=EST))
        self.assertEqual(sub.late_due, dt.datetime(2026, 12, 4, 23, 59, tzinfo=EST))
        self.assertEqual(sub.own_dates(), (dt.datetime(2026, 12, 3, 23, 59, tzinfo=EST),
                                           dt.datetime(2026, 12, 6, 23, 59, tzinfo=EST)))

    def test_a_group_is_due_when_its_most_extended_member_is(self):
        data = dict(RUNNER, users=[{"name": "A", "assignment": {"due_date": "2026-12-02T23:59:00-05:00"}},
                                   {"name": "B", "assignment": {"due_date": "2026-12-05T23:59:00-05:00"}},
                                   {"name": "C"}])
        sub = metadata.read_runner(self.write("m.json", json.dumps(data)))
        self.assertEqual(sub.own_dates()[0], dt.datetime(2026, 12, 5, 23, 59, tzinfo=EST))
        self.assertEqual(sub.name, "A; B; C")

    def test_a_date_that_is_not_one_is_noted_not_guessed(self):
        sub = metadata.read_runner(self.write("m.json", json.dumps(dict(RUNNER, created_at="yesterday"))))
        self.assertIsNone(sub.created_at)
        self.assertIn("created_at: 'yesterday' is not a date and time", "\n".join(sub.notes))

    def test_times_in_every_spelling(self):
        for text, want in (("2026-04-26 17:34:00.861687000 Z", dt.datetime(2026, 4, 26, 17, 34, 0, 861687, UTC)),
                           ("2026-12-01 23:59:00 -05:00", dt.datetime(2026, 12, 1, 23, 59, tzinfo=EST)),
                           ("2018-07-01T14:22:32.365935-07:00",
                            dt.datetime(2018, 7, 1, 21, 22, 32, 365935, tzinfo=UTC)),
                           ("2026-12-01T23:59:00", dt.datetime(2026, 12, 1, 23, 59, tzinfo=UTC))):
            with self.subTest(text=text):
                self.assertEqual(metadata.parse_time(text), want)
        self.assertIsNone(metadata.parse_time(None))
        with self.assertRaises(ValueError):
            metadata.parse_time(12)

    def test_files_that_are_not_metadata(self):
        cases = {"broken.yml": ("a: [1, 2\n", "not valid YAML at line"),
                 "list.yml": ("- 1\n- 2\n", "expected one entry per submission folder"),
                 "binary.yml": (None, "not UTF-8 text")}
        for name, (text, said) in cases.items():
            with self.subTest(name=name):
                path = self.dir / name
                if text is None:
                    path.write_bytes(b"\xff\xfe\x00bad")
                else:
                    path.write_text(text)
                with self.assertRaises(metadata.MetadataError) as caught:
                    metadata.read_export(path)
                self.assertIn(said, str(caught.exception))
        with self.assertRaises(metadata.MetadataError) as caught:
            metadata.read_runner(self.dir / "missing.json")
        self.assertIn("cannot read", str(caught.exception))

    def test_nothing_in_the_file_runs(self):
        """A Python tag is read as plain data by the safe loader, never constructed."""
        path = self.write("evil.yml", "submission_1:\n  :submitters:\n  - :name: !!python/object/apply:os.system "
                                      "['touch pwned']\n")
        subs = metadata.read_export(path)
        self.assertFalse((Path.cwd() / "pwned").exists())
        self.assertEqual(subs["submission_1"].people[0].name, "")  # a list under the tag: not a name


if __name__ == "__main__":
    unittest.main()
