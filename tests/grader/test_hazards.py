"""Hazards cost points, and the sanitizers row says what happened (issue 11), without a GPU or a compiler:
grader/score/score.py's apply_hazards and student_paths, grader/sim/simulator.py's score_hazards on constructed reports,
and labs.toml's hazard_cost."""
import json
import tempfile
import tomllib
import unittest
from pathlib import Path

from grader.sim import sim_report, simulator
from grader.config import ConfigError, load_config, parse_config
from grader.score.score import (HAZARD, TestResult, apply_hazards, hazard_places, hazards_of, note_writes_past_the_end,
                          student_path_mapper, student_paths)
from tests.grader.fakes import KIT
from tests.grader.fakes import kit_labs_text

GROUPS = ("datasets", "edge sizes", "exact integer data")


def results(row_data=None, row_status="FAIL", scores=(10, 15, 0)) -> list:
    """A lab's results: static checks, three groups (the last failed), the sanitizers row, performance."""
    rows = [TestResult("02", "static checks", 0, 0, "pass")]
    for name, score, most in zip(GROUPS, scores, (10, 15, 15)):
        rows.append(TestResult("02", name, most, score, "pass" if score else "FAIL", f"{name} passed", "detail"))
    rows.append(TestResult("02", "sanitizers", 0, 0, row_status, "row", "", dict(row_data or {})))
    rows.append(TestResult("02", "performance", 50, 0, "needs GPU"))
    return rows


class ApplyHazards(unittest.TestCase):
    def test_a_hazard_takes_every_passed_groups_points(self):
        rows = apply_hazards(results({"hazards": ["race at reduce.cu:29 and reduce.cu:34", "another"]}), GROUPS, 1.0)
        by = {r.name: r for r in rows}
        self.assertEqual([(by[g].status, by[g].score) for g in GROUPS], [(HAZARD, 0), (HAZARD, 0), ("FAIL", 0)])
        self.assertEqual(by["datasets"].summary, "HAZARD: see the sanitizers row (reduce.cu:29, reduce.cu:34)")
        self.assertNotIn("race at", by["datasets"].detail)  # the finding's lines are the sanitizers row's alone
        self.assertIn("labs.toml's hazard_cost", by["datasets"].detail)
        self.assertTrue(by["datasets"].detail.endswith("detail"))  # the group's own detail is kept
        self.assertEqual(by["performance"].status, "needs GPU")

    def test_the_places_are_named_once_each_and_cut_short(self):
        found = [f"[race] kernel k, reduce.cu:{n} and /x/y/reduce.cu:{n} (1 time): m" for n in (31, 31, 32, 33, 34)]
        self.assertEqual(hazard_places(found), "reduce.cu:31, reduce.cu:32, reduce.cu:33 and 1 more")
        self.assertEqual(hazard_places(["a hazard without a place"]), "the line is not known")

    def test_a_share_of_the_points(self):
        by = {r.name: r for r in apply_hazards(results({"hazards": ["h"]}), GROUPS, 0.25)}
        self.assertEqual((by["datasets"].score, by["edge sizes"].score), (7.5, 11.25))
        self.assertIn("takes 25% of the points", by["datasets"].detail)

    def test_no_hazard_no_cost(self):
        for data, status in (({}, "pass"), ({}, "not run"), ({"hazards": []}, "FAIL")):
            with self.subTest(status=status):
                by = {r.name: r for r in apply_hazards(results(data, status), GROUPS, 1.0)}
                self.assertEqual([by[g].score for g in GROUPS], [10, 15, 0])
        by = {r.name: r for r in apply_hazards(results({"hazards": ["h"]}), GROUPS, 0.0)}
        self.assertEqual(by["datasets"].status, "pass")
        self.assertEqual(hazards_of(None), [])


class WritesPastTheEnd(unittest.TestCase):
    def test_a_passed_row_does_not_claim_no_out_of_bounds_access(self):
        rows = results({})
        rows[2].status, rows[2].summary = ("FAIL", "n=4095 random: wrote past the end of the output: "
                                                   "element 4095 was written")
        rows[-2].status, rows[-2].summary = "pass", "the simulator found no ... out-of-bounds accesses ..."
        note_writes_past_the_end(rows)
        self.assertRegex(rows[-2].summary, r"^a case wrote past the end of the output: see edge sizes ")
        self.assertEqual((rows[-2].status, rows[-2].score), ("pass", 0))

    def test_no_such_case_no_change(self):
        rows = results({})
        rows[-2].status = "pass"
        note_writes_past_the_end(rows)
        self.assertEqual(rows[-2].summary, "row")


class StudentPaths(unittest.TestCase):
    def test_a_progress_line_names_the_students_file(self):
        """The grader's progress lines on stderr (grade.py maps them per lab): a CUDA error the runner relays names
        the copy the grader compiled, relative to the kit."""
        mapped = student_path_mapper(KIT / "build" / "grade-sim" / "08-single-pass" / "scan.cu",
                                     KIT / "labs" / "08-single-pass" / "scan.cu", KIT)
        self.assertEqual(mapped("08-single-pass: edge sizes: CUDA error at build/grade-sim/08-single-pass/scan.cu:278: "
                                "cudaDeviceSynchronize() failed"),
                         "08-single-pass: edge sizes: CUDA error at labs/08-single-pass/scan.cu:278: "
                         "cudaDeviceSynchronize() failed")
        self.assertEqual(mapped("building labs/08-single-pass/scan.cu"), "building labs/08-single-pass/scan.cu")

    def test_the_copy_the_grader_compiled_is_never_named(self):
        copy = KIT / "build" / "grade-sim" / "01-global-strided" / "reduce.cu"
        student = KIT / "labs" / "01-global-strided" / "reduce.cu"
        r = TestResult("01", "g", 10, 0, "FAIL", "at 01-global-strided/reduce.cu:31 and grade-sim/01-global-strided/"
                       "reduce.cu:40", f"{copy}:3; build/grade-sim/01-global-strided/reduce.cu:9; "
                                        f"labs/01-global-strided/reduce.cu:5; reduce.cu:7")
        student_paths([r], copy, student, KIT)
        self.assertEqual(r.summary, "at labs/01-global-strided/reduce.cu:31 and labs/01-global-strided/reduce.cu:40")
        self.assertEqual(r.detail, "labs/01-global-strided/reduce.cu:3; labs/01-global-strided/reduce.cu:9; "
                                   "labs/01-global-strided/reduce.cu:5; reduce.cu:7")

    def test_a_submission_outside_the_kit_is_named_whole(self):
        copy = KIT / "build" / "grade" / "03-sequential" / "reduce.cu"
        r = TestResult("03", "g", 10, 0, "FAIL", "03-sequential/reduce.cu:12", "")
        student_paths([r], copy, "/home/ada/labs/03-sequential/reduce.cu", KIT)
        self.assertEqual(r.summary, "/home/ada/labs/03-sequential/reduce.cu:12")


def report(findings=(), errors=(), kernels=(), run=None, lines=1) -> sim_report.SimReport:
    r = sim_report.read_report(b"".join(
        (json.dumps({"ppl_sim_report": 1, "seq": 1, "event": "launch", "launches": 1, "errors": list(errors),
                     "kernels": list(kernels), "findings": list(findings)}) + "\n").encode() for _ in range(lines)))
    r.run = run or {}
    return r


RACE = {"kind": "shared-race-intra-warp", "kernel": "_Z1kPf", "where": "reduce.cu:29", "other_where": "reduce.cu:34",
        "file": "/b/02/reduce.cu", "line": 29, "count": 3, "message": "race"}
PASSED = {"status": "pass", "message": "3 cases passed", "args": ["--n", "1,33"]}
# the advice of each fix, as the simulator words them (sim/report.c's sim_fix_advice; these tests need no build)
ATOMIC_ADVICE = "make the update one atomic operation (atomicAdd(&x, v) for x += v or x++)"
BARRIER_ADVICE = "put a __syncthreads() between the two accesses"
SYNCWARP_ADVICE = "put a __syncwarp() between the two accesses"


class SimulatorRow(unittest.TestCase):
    def test_hazards_are_findings_and_faults_of_the_students_kernels(self):
        oob = {"kind": "kernel-fault", "status": "out-of-bounds", "what": "kernel _Z1kPf",
               "message": "out-of-bounds shared access: kernel _Z1kPf, 02/reduce.cu:38"}
        trap = {"kind": "kernel-fault", "status": "trap", "what": "kernel _Z1kPf", "message": "trap"}
        row = simulator.score_hazards("02", 0, "reduce.cu", [report([RACE], [oob, trap], run=PASSED)],
                                      source_text="__global__ void k(float *v) {}")
        self.assertEqual(row.status, "FAIL")
        self.assertEqual(len(row.data["hazards"]), 2)  # the race and the out-of-bounds access; not the trap
        self.assertIn("reduce.cu:29 and reduce.cu:34", row.data["hazards"][0])
        self.assertIn("out-of-bounds shared access", row.data["hazards"][1])

    def test_a_missing_barrier_is_advised_before_a_syncwarp(self):
        """One line racing within a warp and across warps (a tree step without its __syncthreads()): the first
        advice is the barrier that fixes both, whichever race the simulator met first, and the race within a warp
        takes the barrier's advice too (the simulator's words, "advice": sim/report.c decides it within one run,
        the grader across runs); a race within a warp alone keeps __syncwarp()."""
        within = dict(RACE, message=f"read after write race ... of the same warp: {SYNCWARP_ADVICE}", fix="__syncwarp",
                      advice=SYNCWARP_ADVICE)
        across = dict(RACE, kind="shared-race-inter-warp", fix="__syncthreads", advice=BARRIER_ADVICE,
                      message=f"read after write race ... of different warps: {BARRIER_ADVICE}")
        other = dict(RACE, where="reduce.cu:40", other_where="reduce.cu:41")
        row = simulator.score_hazards("02", 0, "reduce.cu", [report([within, other, across], run=PASSED)],
                                      source_text="__global__ void k(float *v) {}")
        self.assertIn("[shared-race-inter-warp]", row.summary)
        self.assertIn("put a __syncthreads()", row.summary)
        self.assertIn("[shared-race-intra-warp]", row.data["hazards"][1])
        self.assertTrue(row.data["hazards"][1].endswith(BARRIER_ADVICE), row.data["hazards"][1])
        self.assertIn("reduce.cu:40", row.data["hazards"][2])
        alone = simulator.score_hazards("02", 0, "reduce.cu", [report([within], run=PASSED)])
        self.assertNotIn("__syncthreads", alone.summary)  # a race within a warp alone: __syncwarp() is the fix
        self.assertIn("put a __syncwarp()", alone.summary)
        # the same across two runs of the lab: one run met the race within a warp, the other the race between warps
        apart = simulator.score_hazards("02", 0, "reduce.cu", [report([dict(within)], run=PASSED),
                                                               report([dict(across)], run=PASSED)])
        self.assertIn("[shared-race-inter-warp]", apart.data["hazards"][0])
        self.assertTrue(apart.data["hazards"][1].endswith(BARRIER_ADVICE), apart.data["hazards"][1])

    def test_a_read_modify_write_race_keeps_the_atomic_advice(self):
        """x[b]++ by two threads: the simulator's advice is an atomic, within a warp and between warps, and the
        grader does not trade it for a barrier."""
        rmw = dict(RACE, where="histogram.cu:66", other_where="histogram.cu:66", fix="atomic", advice=ATOMIC_ADVICE,
                   message=f"read-modify-write race ...: {ATOMIC_ADVICE}")
        row = simulator.score_hazards("09", 0, "histogram.cu", [report(
            [rmw, dict(rmw, kind="shared-race-inter-warp")], run=PASSED)])
        self.assertEqual(len(row.data["hazards"]), 2)
        self.assertTrue(all(h.endswith(ATOMIC_ADVICE) for h in row.data["hazards"]), row.data["hazards"])
        self.assertNotIn("__syncthreads()", row.detail)

    def test_one_hazard_per_kind_and_pair_of_lines_over_the_runs(self):
        """The same race met at other PTX instructions of its line, or first at other threads, in one run or in
        several, is one hazard with its counts summed; the places in either order are the same pair."""
        first = dict(RACE, ptx_line=140, message="race at byte 4")
        again = dict(RACE, ptx_line=150, count=5, message="race at byte 8")
        swapped = dict(RACE, where=RACE["other_where"], other_where=RACE["where"], count=2, message="race at byte 12")
        row = simulator.score_hazards("02", 0, "reduce.cu", [report([first, again], run=PASSED),
                                                             report([swapped], run=PASSED)])
        self.assertEqual(len(row.data["hazards"]), 1, row.data["hazards"])
        self.assertIn("(10 times)", row.data["hazards"][0])
        many = [dict(RACE, where=f"reduce.cu:{n}", other_where=f"reduce.cu:{n + 100}") for n in range(25)]
        capped = simulator.score_hazards("02", 0, "reduce.cu", [report(many, run=PASSED)])
        self.assertEqual(len(capped.data["hazards"]), 25)
        listed = [ln for ln in capped.detail.splitlines() if ln.startswith("[")]
        self.assertEqual(len(listed), simulator.MAX_HAZARDS_SHOWN)
        self.assertIn("... and 15 more hazards", capped.detail)

    def test_the_module_decides_whose_kernel_it_is(self):
        """The device names each module by the build: a #line naming the kit's harness does not make a kernel of
        the student's object the kit's, and a kit module's finding is a kit bug whatever its file: the row is then
        "not graded" (0 points, tell the instructors), never a free pass."""
        kit_path = dict(RACE, file=f"{KIT}/patterns/reduce/support.cu", where="patterns/reduce/support.cu:30")
        for module, status in (("student", "FAIL"), ("kit", simulator.NOT_GRADED)):
            with self.subTest(module=module):
                row = simulator.score_hazards("04", 0, "reduce.cu", [
                    report([kit_path], kernels=[{"name": "_Z1kPf", "module": module}], run=PASSED)], kit=KIT)
                self.assertEqual(row.status, status, row.summary)
                self.assertEqual(row.score, 0.0)
                self.assertEqual("kit bug" in row.detail, module == "kit")
                self.assertEqual("tell the instructors" in row.summary, module == "kit")

    def test_the_row_passes_only_when_every_run_went_to_its_end(self):
        ok = simulator.score_hazards("03", 0, "reduce.cu", [report(run=PASSED), report(run=dict(PASSED,
                                                                                              status="fail"))])
        self.assertEqual(ok.status, "pass")
        self.assertIn("each checked to its end", ok.summary)
        crashed = {"status": "crash", "message": "the runner died of SIGSEGV", "args": ["--n", "2^20+1"]}
        row = simulator.score_hazards("03", 0, "reduce.cu", [report(run=PASSED), report(run=crashed)])
        self.assertEqual((row.status, row.data), ("not run", {}))
        self.assertEqual(row.summary, "not run to the end: the lab crashed (--n 2^20+1; the runner died of SIGSEGV), "
                                      "before the simulator's checks could finish; the other run found nothing in "
                                      "reduce.cu")
        hung = simulator.score_hazards("03", 0, "reduce.cu", [report(run={"status": "timeout"})])
        self.assertTrue(hung.summary.startswith("not run to the end: the lab hung (TIMEOUT), before"), hung.summary)

    def test_nothing_ran(self):
        row = simulator.score_hazards("03", 0, "reduce.cu", [])
        self.assertEqual(row.status, "not run")
        self.assertIn("no run of 03 reached the simulator", row.summary)
        silent = simulator.score_hazards("03", 0, "reduce.cu", [report(lines=0, run={"status": "crash",
                                                                                     "message": "died"})])
        self.assertEqual((silent.status, silent.summary), ("not run", "not run: none of the 1 runs reached the "
                                                                      "simulator's checks: the lab crashed (died)"))

    def test_the_run_is_saved_with_the_report(self):
        r = report([RACE], run=PASSED)
        again = sim_report.SimReport.from_json(json.loads(json.dumps(r.to_json())))
        self.assertEqual(again.run, PASSED)


class Config(unittest.TestCase):
    def test_every_lab_says_its_hazard_cost(self):
        self.assertTrue(all(lab.sanitizers.hazard_cost == 1.0 for lab in load_config().labs))

    def test_a_share_outside_0_to_1_is_refused(self):
        text = kit_labs_text().replace("hazard_cost = 1.0", "hazard_cost = 1.5", 1)
        with tempfile.TemporaryDirectory() as tmp, self.assertRaisesRegex(ConfigError, "hazard_cost: expected a "
                                                                                     "share from 0 to 1"):
            parse_config(tomllib.loads(text), Path(tmp) / "labs.toml")


if __name__ == "__main__":
    unittest.main()
