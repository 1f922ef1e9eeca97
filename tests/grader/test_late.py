"""grader/score/late.py: labs.toml's [late] rule checked; late days counted from created_at against the due date that
applies (a lab's own, [late]'s, the Gradescope assignment's, moved by a student's extension); the penalty shown and
taken off results.json's score the same way for every path."""
import datetime as dt
import tomllib
import unittest

from grader.score import late
from grader.config import DEFAULT_PATH, ConfigError, parse_config
from grader.intake.metadata import Person, Submission
from tests.grader.fakes import kit_labs_text

EST = dt.timezone(dt.timedelta(hours=-5))
DUE = dt.datetime(2026, 12, 1, 23, 59, tzinfo=EST)

LABS_TOML = """
[late]
due = 2026-12-01T23:59:00-05:00
grace_minutes = 15
penalty_per_day = 0.1
max_late_days = 3
"""


def at(**delta) -> dt.datetime:
    return DUE + dt.timedelta(**delta)


def results() -> dict:
    """A results.json of two labs as grader/report/report.py writes it."""
    tests = [{"name": "03-sequential: datasets", "score": 10, "max_score": 10, "extra_data": {"lab": "03-sequential"}},
             {"name": "03-sequential: performance", "score": 30, "max_score": 50,
              "extra_data": {"lab": "03-sequential"}},
             {"name": "06-scan: datasets", "score": 10, "max_score": 10, "extra_data": {"lab": "06-scan"}}]
    return {"score": 50, "output": "Total 50 / 70", "tests": tests, "extra_data": {"seed": 1}}


class Policy(unittest.TestCase):
    def test_labs_toml(self):
        policy = late.parse_policy(tomllib.loads(LABS_TOML)["late"],
                                   lab_due={"06-scan": dt.datetime(2026, 12, 8, 23, 59, tzinfo=EST)})
        self.assertEqual((policy.due, policy.grace_minutes, policy.penalty_per_day, policy.max_late_days),
                         (DUE, 15.0, 0.1, 3))
        self.assertEqual(policy.due_for("03-sequential"), DUE)
        self.assertEqual(policy.due_for("06-scan"), dt.datetime(2026, 12, 8, 23, 59, tzinfo=EST))

    def test_mistakes_are_named(self):
        cases = {'due = "2026-12-01"': "expected a date and time with its offset",
                 "due = 2026-12-01T23:59:00": "has no offset from UTC",
                 "penalty_per_day = 10": "expected a fraction of the points per day",
                 "penalty_per_day = -0.1": "expected a number >= 0",
                 "max_late_days = 1.5": "expected a whole number of days",
                 "grace = 5": "unknown key grace"}
        for line, said in cases.items():
            with self.subTest(line=line):
                with self.assertRaises(late.LateError) as caught:
                    late.parse_policy(tomllib.loads(f"[late]\n{line}\n")["late"])
                self.assertIn(said, str(caught.exception))


class LabsToml(unittest.TestCase):
    """grader/config.py reads [late], a lab's own due, [gradescope] and the visibility of a row, refusing mistakes."""

    def config(self, extra: str, lab_line: str = ""):
        text = DEFAULT_PATH.read_text()
        if lab_line:
            text = text.replace("[labs.03-sequential]\n", f"[labs.03-sequential]\n{lab_line}\n", 1)
        return parse_config(tomllib.loads(text + extra), DEFAULT_PATH)

    def test_read(self):
        config = self.config(LABS_TOML + '[gradescope]\noutput_format = "md"\nvisibility = "after_published"\n',
                             "due = 2026-10-01T23:59:00-04:00")
        self.assertEqual(config.late.due_for("04-unrolled"), DUE)
        self.assertEqual(config.late.due_for("03-sequential"), dt.datetime(2026, 10, 1, 23, 59,
                                                                           tzinfo=dt.timezone(dt.timedelta(hours=-4))))
        self.assertEqual(dict(config.gradescope), {"output_format": "md", "visibility": "after_published"})
        self.assertIsNone(self.config("").late)

    def test_mistakes(self):
        for extra, lab_line, said in (
                ("[late]\npenalty = 0.1\n", "", "late: unknown key penalty"),
                ("", 'due = "soon"', "labs.03-sequential.due: expected a date and time"),
                ('[gradescope]\noutput_format = "rtf"\n', "", "gradescope.output_format: expected one of text, md"),
                ('[gradescope]\nleaderboard = true\n', "", "gradescope: unknown key leaderboard")):
            with self.subTest(said=said):
                with self.assertRaises(ConfigError) as caught:
                    self.config(extra, lab_line)
                self.assertIn(said, str(caught.exception))
        text = kit_labs_text().replace('name = "edge sizes"\n', 'name = "edge sizes"\nvisibility = "x"\n', 1)
        with self.assertRaises(ConfigError) as caught:
            parse_config(tomllib.loads(text), DEFAULT_PATH)
        self.assertIn("visibility: expected one of visible, hidden, after_due_date, after_published",
                      str(caught.exception))


class Lateness(unittest.TestCase):
    policy = late.parse_policy(tomllib.loads(LABS_TOML)["late"])

    def days(self, submitted, policy=None, **fields):
        item = late.lateness(policy or self.policy, "03-sequential", Submission(created_at=submitted, **fields))
        return item.days, item.fraction, item.refused

    def test_days_begun_after_the_grace(self):
        self.assertEqual(self.days(at(minutes=-1)), (0, 0.0, False))
        self.assertEqual(self.days(at(minutes=15)), (0, 0.0, False))  # within the grace
        self.assertEqual(self.days(at(minutes=16)), (1, 0.1, False))
        self.assertEqual(self.days(at(days=1, minutes=15)), (1, 0.1, False))
        self.assertEqual(self.days(at(days=1, minutes=16)), (2, 0.2, False))
        self.assertEqual(self.days(at(days=3, minutes=15)), (3, 0.3, False))
        self.assertEqual(self.days(at(days=3, minutes=16)), (4, 1.0, True))  # past max_late_days

    def test_the_same_instant_in_another_time_zone(self):
        utc = at(minutes=16).astimezone(dt.timezone.utc)
        self.assertEqual(self.days(utc), (1, 0.1, False))

    def test_the_assignment_due_date_and_an_extension(self):
        no_due = late.parse_policy({"penalty_per_day": 0.25})
        assignment = dict(due=DUE, late_due=at(days=2))
        self.assertEqual(self.days(at(hours=5), no_due, **assignment), (1, 0.25, False))
        self.assertEqual(self.days(at(days=2, hours=1), no_due, **assignment), (3, 1.0, True))  # after late_due
        extended = Person("Conan O'Brien", due=at(days=2), late_due=at(days=4))
        item = late.lateness(no_due, "03-sequential", Submission(created_at=at(days=2, hours=5), people=(extended,),
                                                                 **assignment))
        self.assertEqual((item.days, item.fraction, item.refused), (1, 0.25, False))
        self.assertIn("with your extension of 2 days", item.text(40))
        # labs.toml's own due date moves by the same extension
        item = late.lateness(self.policy, "03-sequential", Submission(created_at=at(days=1), people=(extended,),
                                                                      **assignment))
        self.assertEqual(item.days, 0)

    def test_without_a_rule_or_a_date_nothing_is_late(self):
        self.assertEqual(late.lateness(None, "03-sequential", Submission(created_at=at(days=9), due=DUE)).days, 0)
        item = late.lateness(late.parse_policy({"penalty_per_day": 0.1}), "03-sequential",
                             Submission(created_at=at(days=9)))
        self.assertIsNone(item.due)
        self.assertEqual(item.fraction, 0)
        unknown = late.lateness(self.policy, "03-sequential", Submission())
        self.assertEqual(unknown.days, 0)
        self.assertIn("submission time is unknown", unknown.text())

    def test_the_text(self):
        item = late.lateness(self.policy, "03-sequential", Submission(created_at=at(days=1, hours=2)))
        self.assertEqual(item.text(40), "03-sequential: submitted 2026-12-03 01:59-05:00, 1 day 2 hours late "
                                        "(due 2026-12-01 23:59-05:00 (labs.toml)): 2 late days: -20% of the lab's "
                                        "points (-8 of 40)")


class Apply(unittest.TestCase):
    policy = late.parse_policy(tomllib.loads(LABS_TOML)["late"],
                               lab_due={"06-scan": dt.datetime(2026, 12, 8, 23, 59, tzinfo=EST)})

    def test_results_json(self):
        sub = Submission(created_at=at(hours=5))
        data = late.apply(results(), [late.lateness(self.policy, lab, sub) for lab in ("03-sequential", "06-scan")])
        self.assertEqual(data["score"], 46)  # 03: 40 points, 10% off; 06 is due a week later
        names = [t["name"] for t in data["tests"]]
        self.assertEqual(names, ["03-sequential: datasets", "03-sequential: performance",
                                 "03-sequential: late penalty", "06-scan: datasets"])
        row = data["tests"][2]
        self.assertEqual((row["score"], row["max_score"]), (-4, 0))
        self.assertEqual(sum(t["score"] for t in data["tests"]), data["score"])
        self.assertTrue(data["output"].startswith("Late work: 03-sequential: submitted"), data["output"])
        self.assertIn("Late work: 06-scan: submitted 2026-12-02 04:59-05:00, on time", data["output"])
        self.assertEqual(data["extra_data"]["late"]["03-sequential"]["points_lost"], 4)
        self.assertEqual(data["extra_data"]["seed"], 1)
        # applying it to the results again (a rerun) does not count the penalty row as the lab's points
        self.assertEqual(late.lab_scores(data), {"03-sequential": 40, "06-scan": 10})

    def test_on_time_and_without_dates_the_results_are_unchanged(self):
        sub = Submission(created_at=at(days=9))
        self.assertEqual(late.apply(results(), [late.lateness(None, "03-sequential", sub)]), results())

    def test_a_refused_lab_scores_zero(self):
        data = late.apply(results(), [late.lateness(self.policy, "03-sequential", Submission(created_at=at(days=5)))])
        self.assertEqual(data["score"], 10)
        self.assertIn("past the last day work is taken: the lab scores 0 (-40 of 40)", data["output"])


if __name__ == "__main__":
    unittest.main()
