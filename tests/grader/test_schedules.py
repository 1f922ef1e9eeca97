"""grader/sim/schedules.py: the adversarial schedules a simulated case runs under (seeds from the case, a failure naming
the schedule that replays it), without running the simulator (tests/sim/test_ordering.py does)."""
import unittest
from pathlib import Path
from types import SimpleNamespace

from grader.sim import schedules


class Schedules(unittest.TestCase):
    def test_seeds_come_from_the_case(self):
        a = schedules.case_schedules("08-single-pass", "edge-0", ["--n", "1,1025", "--seed", "5"])
        self.assertEqual([s.split(":")[0] for s in a], ["interleave", "reverse", "random"])
        self.assertTrue(all(s.split(":")[1].isdigit() for s in a))
        # the same case, another grading's data seed: the same schedules (a regrade gives the same score)
        self.assertEqual(a, schedules.case_schedules("08-single-pass", "edge-0", ["--n", "1,1025", "--seed", "9"]))
        # another case: other seeds
        self.assertNotEqual(a, schedules.case_schedules("08-single-pass", "edge-1", ["--n", "1,1025"]))
        self.assertNotEqual(a, schedules.case_schedules("07-compact", "edge-0", ["--n", "1,1025"]))

    def test_specs(self):
        for good in ("inorder", "interleave:1", "reverse", "reverse:7", "random:18446744073709551615"):
            self.assertEqual(schedules.schedule_env(good), {"PPL_SIM_SCHEDULE": good})
        for bad in ("", "sideways", "random:", "random:-1", "inorder:3", "random:1 ; rm -rf x"):
            with self.assertRaisesRegex(ValueError, "interleave:SEED"):
                schedules.check_spec(bad)

    def test_first_failure_names_its_schedule(self):
        calls = []

        def run(program, args, *, timeout, workdir, env, **kwargs):
            calls.append((env["PPL_SIM_SCHEDULE"], workdir.name))
            ok = not env["PPL_SIM_SCHEDULE"].startswith("reverse")
            return SimpleNamespace(passed=ok, message="" if ok else "element 5: got 1, expected 2")

        out = schedules.run_schedules(run, "08-single-pass", "data-0", "prog", ["--n", "5"], timeout=5,
                                      workdir=Path("/nonexistent"))
        self.assertEqual([c[0].split(":")[0] for c in calls], ["interleave", "reverse"])  # stops at the first
        self.assertEqual(calls[1][1], calls[1][0].replace(":", "-"))  # a run folder per schedule
        self.assertEqual(out.schedule, calls[1][0])
        self.assertIn(f"under the schedule {calls[1][0]}", out.message)
        self.assertIn("element 5: got 1, expected 2", out.message)

        passing = schedules.run_schedules(lambda *a, **k: SimpleNamespace(passed=True), "03", "t", "p", [],
                                          timeout=5, workdir=Path("/x"))
        self.assertIsNone(passing)


if __name__ == "__main__":
    unittest.main()
