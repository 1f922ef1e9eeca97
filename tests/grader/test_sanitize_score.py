"""grader/sanitize/score.py without a GPU: the sanitizers row's score and what it says, from recorded and constructed
outputs (sanitizer_samples/)."""
import tempfile
import unittest

from grader.config import Sanitizers
from grader.sanitize import runs
from grader.sanitize.findings import classify
from grader.sanitize.score import SanitizerResult, score_sanitizers
from tests.grader.fakes import KIT, write_file
from tests.grader.sanitize_support import SPEC, VOLATILE_SOURCE, outcome_of


class Scoring(unittest.TestCase):
    def test_a_race_fails_the_row_with_file_line_and_advice(self):
        with tempfile.TemporaryDirectory() as tmp:
            copy = write_file(tmp, "reduce.cu", VOLATILE_SOURCE)
            result = score_sanitizers("04-unrolled", SPEC, outcome_of(("racecheck-volatile-last-warp.txt",
                                                                       "racecheck"), ("clean.txt", "memcheck")),
                                      "reduce.cu", KIT, source_path=copy)
        self.assertEqual((result.status, result.score, result.max_score, result.full), ("FAIL", 0, 10, False))
        self.assertTrue(result.summary.startswith("racecheck: reduce.cu:47 and reduce.cu:48: shared-memory race "
                                                  "between lanes of one warp: a write at reduce.cu:47 `v[t] += "
                                                  "v[t + 32];` and a read at reduce.cu:48 `v[t] += v[t + 16];`"),
                        result.summary)
        self.assertTrue(result.summary.endswith("(and 2 more findings below)"), result.summary)
        self.assertIn("Add __syncwarp() between the steps, or exchange the values in registers with "
                      "__shfl_down_sync", result.detail)
        self.assertIn("performance is not run while the sanitizers find something in reduce.cu", result.detail)
        self.assertIn("make sanitize LAB=04", result.detail)
        self.assertEqual(result.data["sanitizer_findings"][0]["locations"][0],
                         {"file": "reduce.cu", "line": 47, "function": "reduce_kernel(const float *, float *, "
                                                                       "unsigned long)", "access": "write"})

    def test_findings_that_read_the_same_are_listed_once(self):
        """racecheck reports a race once per shared word: a kernel that races on every bin gave 60 findings that read
        alike (lab 09 with bins_s[b]++ on an H200); the row lists each text once, with how many there were."""
        with tempfile.TemporaryDirectory() as tmp:
            copy = write_file(tmp, "reduce.cu", VOLATILE_SOURCE)
            twice = outcome_of(("racecheck-volatile-last-warp.txt", "racecheck"),
                               ("racecheck-volatile-last-warp.txt", "racecheck"))
            result = score_sanitizers("04-unrolled", SPEC, twice, "reduce.cu", KIT, source_path=copy)
        listed = [line for line in result.detail.splitlines() if line.startswith("- ")]
        self.assertEqual(len(listed), 3, result.detail)
        self.assertTrue(all(line.endswith("(2 findings that read the same)") for line in listed), listed)
        self.assertEqual(len(result.data["hazards"]), 6)  # results.json keeps every one

    def test_a_missing_barrier_names_the_barrier(self):
        outcome = outcome_of(("racecheck-no-barrier.txt", "racecheck"))
        classify(outcome.findings(), "reduce.cu", KIT)
        result = score_sanitizers("06-scan", SPEC, outcome, "reduce.cu", KIT)
        self.assertEqual(result.status, "FAIL")
        self.assertIn("read into a register, __syncthreads(), then write", result.detail)

    def test_memcheck_names_the_line_and_the_address(self):
        result = score_sanitizers("04-unrolled", SPEC, outcome_of(("memcheck-global-host-backtrace.txt", "memcheck")),
                                  "reduce.cu", KIT)
        self.assertEqual(result.summary, "memcheck: reduce.cu:32: Invalid __global__ write of size 4 bytes in "
                                         "reduce_kernel, thread (34,0,0) of block (0,0,0)")
        self.assertIn("and is 4 bytes after the nearest allocation", result.detail)
        self.assertIn("bound the index (if (i < n))", result.detail)

    def test_kit_findings_cost_nothing_and_are_called_kit_bugs(self):
        result = score_sanitizers("06-scan", SPEC, outcome_of(("initcheck-kit.txt", "initcheck")), "scan.cu", KIT)
        self.assertEqual((result.status, result.score, result.full), ("pass", 10, True))
        self.assertIn("2 findings in the kit's own code (a kit bug)", result.summary)
        self.assertIn("a kit bug, not scan.cu's", result.detail)
        self.assertIn("harness/device/check_i32.cu:21", result.detail)
        self.assertEqual(len(result.data["kit_findings"]), 2)
        self.assertEqual(result.data["sanitizer_findings"], [])

    def test_clean(self):
        outcome = outcome_of(("clean.txt", "memcheck"), ("clean.txt", "racecheck"))
        result = score_sanitizers("04-unrolled", SPEC, outcome, "reduce.cu", KIT)
        self.assertEqual((result.status, result.score, result.summary),
                         ("pass", 10, "nothing found in reduce.cu by memcheck, racecheck"))

    def test_missing_tool_costs_nothing(self):
        result = score_sanitizers("04-unrolled", SPEC, runs.Outcome(None), "reduce.cu", KIT)
        self.assertIsInstance(result, SanitizerResult)
        self.assertEqual((result.status, result.score, result.full), ("not run", 10, True))
        self.assertIn("compute-sanitizer is not installed here", result.summary)
        zero = score_sanitizers("04-unrolled", Sanitizers(0, ("memcheck",), (("--n", "1"),), None),
                                runs.Outcome(None), "reduce.cu", KIT)
        self.assertTrue(zero.full)  # a row of 0 points that was not run still counts as full: exit status 0

    def test_timeouts_and_tool_errors_cost_nothing(self):
        """...and the row says that it was not run in full (issue 11: it said "pass" after a timeout)."""
        outcome = outcome_of(("clean.txt", "memcheck"))
        outcome.runs.append(runs.ToolRun("racecheck", ["--n", "1"], "timeout",
                                             message="did not finish within 60 s"))
        result = score_sanitizers("04-unrolled", SPEC, outcome, "reduce.cu", KIT)
        self.assertEqual((result.status, result.score, result.full), ("not run", 10, True))
        self.assertEqual(result.summary, "not run in full: racecheck did not finish within 60 s on --n 1; memcheck "
                                         "found nothing in reduce.cu; nothing is held against reduce.cu for it")
        self.assertIn("racecheck did not finish within 60 s", result.detail)
        self.assertNotIn("hazards", result.data)
        only = runs.Outcome("cs", [runs.ToolRun("memcheck", [], "error",
                                                         message="Error: Device not supported")])
        result = score_sanitizers("04-unrolled", SPEC, only, "reduce.cu", KIT)
        self.assertEqual((result.status, result.score, result.full), ("not run", 10, True))
        self.assertIn("memcheck Error: Device not supported", result.summary)

    def test_a_lab_that_stops_under_the_tool_fails_the_row_as_a_hazard(self):
        """A lab killed by a signal, or stopped by a CUDA error the tool did not explain, under the tool: the row
        says so ("not run to the end"), and it counts as a hazard (issue 11: it said "pass" after a crash)."""
        for rc, words in ((-11, "the lab crashed under memcheck (killed by signal 11) before it finished"),
                          (3, "the lab stopped at a CUDA error under memcheck before it finished")):
            with self.subTest(rc=rc):
                outcome = outcome_of(("clean.txt", "memcheck"), ("clean.txt", "racecheck"))
                outcome.runs[0].returncode = rc
                outcome.runs[0].message = "found nothing, but ..."
                result = score_sanitizers("04-unrolled", SPEC, outcome, "reduce.cu", KIT)
                self.assertEqual((result.status, result.score, result.full), ("FAIL", 0, False))
                self.assertTrue(result.summary.startswith(f"not run to the end: {words}"), result.summary)
                self.assertEqual(len(result.data["hazards"]), 1)
                self.assertIn(words, result.data["hazards"][0])

    def test_findings_and_untrusted_logs_are_hazards(self):
        with tempfile.TemporaryDirectory() as tmp:
            copy = write_file(tmp, "reduce.cu", VOLATILE_SOURCE)
            result = score_sanitizers("04-unrolled", SPEC, outcome_of(("racecheck-volatile-last-warp.txt",
                                                                       "racecheck")), "reduce.cu", KIT,
                                      source_path=copy)
        self.assertEqual(len(result.data["hazards"]), 3)
        self.assertTrue(result.data["hazards"][0].startswith("racecheck: reduce.cu:47 and reduce.cu:48"))
        outcome = runs.Outcome("cs", [runs.ToolRun("racecheck", ["--n", "1"], "incomplete",
                                                   message="compute-sanitizer's log ends before its summary")])
        result = score_sanitizers("04-unrolled", SPEC, outcome, "reduce.cu", KIT)
        self.assertEqual(result.status, "FAIL")
        self.assertEqual(result.data["hazards"], ["compute-sanitizer's racecheck report cannot be trusted: "
                                                  "compute-sanitizer's log ends before its summary"])

    def test_a_failing_program_without_findings_is_a_hazard(self):
        """A case that fails under the tool and not without it: the program computed otherwise there (it may have
        found the tool and skipped its racy kernel), so the tool's silence proves nothing."""
        outcome = outcome_of(("clean.txt", "memcheck"))
        outcome.runs[0].returncode = 1
        outcome.runs[0].message = "found nothing, but the program exited with status 1 under it"
        result = score_sanitizers("08-single-pass", SPEC, outcome, "scan.cu", KIT)
        self.assertEqual((result.status, result.score), ("FAIL", 0))
        self.assertTrue(result.summary.startswith("not run to the end: a case of the lab failed under memcheck"),
                        result.summary)
        self.assertEqual(len(result.data["hazards"]), 1)

    def test_no_device(self):
        outcome = runs.Outcome("cs", [runs.ToolRun("memcheck", [], "no-device")])
        result = score_sanitizers("04-unrolled", SPEC, outcome, "reduce.cu", KIT)
        self.assertEqual((result.status, result.score, result.full), ("not run", 0, False))


if __name__ == "__main__":
    unittest.main()
