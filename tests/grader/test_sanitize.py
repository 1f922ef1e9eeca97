"""grader/sanitize.py without a GPU: compute-sanitizer's output read into findings (from the outputs in
sanitizer_samples/, CONSTRUCTED from the documented layout until real recordings replace them), findings traced to
the student's file or to the kit, the sanitizers row's score, a fake compute-sanitizer run through the grader
(options, timeouts, a missing tool), and the sanitizers tables of labs.toml."""
import io
import os
import stat
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from unittest import mock

from grader import sanitize
from grader.config import ConfigError, Sanitizers, load_config
from grader.grade import Grader
from grader.report import format_table, gradescope_results
from grader.sanitize import (EXIT_FOUND, SanitizerResult, classify, explain, find_sanitizer, origin_of,
                             parse_output, run_sanitizers, score_sanitizers, shown_path, with_sizes)
from tests.grader.fakes import KIT, PASS, SMALL_TOML, fake_program, make_submission, write_file

SAMPLES = Path(__file__).resolve().parent / "sanitizer_samples"
STUDENT = "/home/grader/build/grade/04-unrolled/reduce.cu"  # an absolute path, as the kit's builds record it
SPEC = Sanitizers(points=10, tools=("memcheck", "racecheck"), runs=(("--n", "1,33"),), timeout=60)
# What the student's copy holds at the sample's lines 47-50 (the volatile last warp): quoted in the report.
VOLATILE_SOURCE = "\n" * 46 + "        v[t] += v[t + 32];\n        v[t] += v[t + 16];\n        v[t] += v[t + 8];\n"


def sample(name: str, student: str = STUDENT, kit=KIT) -> str:
    return (SAMPLES / name).read_text().replace("{STUDENT}", student).replace("{KIT}", str(kit))


def parsed(name: str, tool: str, source: str = "reduce.cu", student: str = STUDENT):
    result = parse_output(sample(name, student), tool)
    classify(result.findings, source, KIT)
    return result


def outcome_of(*samples, sanitizer="/opt/cuda/bin/compute-sanitizer", status=None):
    """A sanitize.Outcome whose runs read the given (sample, tool) pairs."""
    outcome = sanitize.Outcome(sanitizer)
    for name, tool in samples:
        p = parsed(name, tool)
        run = sanitize.ToolRun(tool, ["--n", "1,33"], status or ("findings" if p.findings else "clean"), p)
        outcome.runs.append(run)
    return outcome


class ReadingOutputs(unittest.TestCase):
    def test_volatile_last_warp_is_warnings_between_lanes_with_both_lines(self):
        result = parsed("racecheck-volatile-last-warp.txt", "racecheck")
        self.assertEqual(len(result.findings), 3)
        first = result.findings[0]
        self.assertEqual((first.tool, first.severity, first.origin, first.count), ("racecheck", "warning", "student",
                                                                                   3968))
        self.assertEqual(first.kind, "Race reported between Write access and Read access")
        self.assertEqual([(loc.file, loc.line, loc.access) for loc in first.locations],
                         [(STUDENT, 47, "write"), (STUDENT, 48, "read")])
        self.assertEqual(first.function, "reduce_kernel(const float *, float *, unsigned long)")
        self.assertEqual(result.summaries, ["RACECHECK SUMMARY: 3 hazards displayed (0 errors, 3 warnings)"])

    def test_missing_barrier_is_an_error_with_every_line_and_hazards_added(self):
        error, warning = parsed("racecheck-no-barrier.txt", "racecheck", "scan.cu",
                                STUDENT.replace("04-unrolled/reduce", "06-scan/scan")).findings
        self.assertEqual((error.severity, error.count), ("error", 14336 + 2048))
        self.assertEqual([(loc.line, loc.access) for loc in error.locations], [(49, "read"), (51, "write"),
                                                                               (51, "write")])
        self.assertEqual(error.kind, "Race reported between Read access and Write access and Write access")
        self.assertEqual((warning.severity, warning.count), ("warning", 7936))

    def test_older_layout_and_hazard_report(self):
        race, hazard = parsed("racecheck-older.txt", "racecheck", "scan.cu",
                              STUDENT.replace("reduce.cu", "scan.cu")).findings
        self.assertEqual(race.severity, "error")
        self.assertEqual([(loc.line, loc.function) for loc in race.locations],
                         [(49, "block_scan_kogge_stone(int*)"), (51, "block_scan_kogge_stone(int*)")])
        self.assertEqual((hazard.kind, hazard.severity, hazard.thread, hazard.block),
                         ("Potential RAW hazard on shared memory", "warning", "24,0,0", "0,0,0"))
        self.assertEqual([(loc.line, loc.access) for loc in hazard.locations], [(47, "write"), (48, "read")])
        self.assertEqual(hazard.origin, "student")

    def test_one_line_hit_by_many_threads_is_one_finding(self):
        result = parsed("memcheck-shared-write.txt", "memcheck")
        (finding,) = result.findings
        self.assertEqual((finding.kind, finding.count, finding.thread, finding.block),
                         ("Invalid __shared__ write of size 4 bytes", 3, "512,0,0", "0,0,0"))
        self.assertEqual([(loc.file, loc.line) for loc in finding.locations], [(STUDENT, 40)])
        self.assertEqual(finding.details, ["Address 0x800 is out of bounds"])
        self.assertEqual(result.api_errors, ["cudaDeviceSynchronize returned cudaErrorLaunchFailure (unspecified "
                                             "launch failure)"])

    def test_host_backtrace_is_not_a_location(self):
        (finding,) = parsed("memcheck-global-host-backtrace.txt", "memcheck").findings
        self.assertEqual([(loc.file, loc.line) for loc in finding.locations], [(STUDENT, 32)])
        self.assertEqual(finding.details, ["Address 0x7f2a4e000088 is out of bounds",
                                           "and is 4 bytes after the nearest allocation at 0x7f2a4e000000 of size "
                                           "132 bytes"])
        self.assertEqual(finding.origin, "student")

    def test_findings_of_two_processes_are_merged(self):
        scan = STUDENT.replace("reduce.cu", "scan.cu")
        (finding,) = parsed("two-processes.txt", "memcheck", "scan.cu", scan).findings
        self.assertEqual((finding.count, finding.locations[0].line), (2, 120))

    def test_synccheck(self):
        divergent, mask = parsed("synccheck-divergent.txt", "synccheck").findings
        self.assertEqual(divergent.kind, "Barrier error detected. Divergent thread(s) in block")
        self.assertIn("__syncthreads()", explain(divergent))
        self.assertEqual((mask.locations[0].line, mask.function), (29, "warp_reduce(float)"))
        self.assertIn("mask", explain(mask))

    def test_clean_and_tool_error(self):
        self.assertEqual(parsed("clean.txt", "memcheck").findings, [])
        result = parsed("tool-error.txt", "racecheck")
        self.assertEqual(result.findings, [])
        self.assertTrue(result.tool_errors[0].startswith("Error: Device not supported"))

    def test_program_output_and_unknown_messages_are_not_findings(self):
        text = "hello from the program\n========= COMPUTE-SANITIZER\n========= Some note of the tool\n" \
               "========= ERROR SUMMARY: 0 errors\nbye\n"
        result = parse_output(text, "memcheck")
        self.assertEqual((result.findings, result.other), ([], ["Some note of the tool"]))


class WhoseLine(unittest.TestCase):
    def test_origins(self):
        self.assertEqual(origin_of(STUDENT, "reduce.cu", KIT), "student")
        self.assertEqual(origin_of("reduce.cu", "reduce.cu", KIT), "student")
        self.assertEqual(origin_of(f"{KIT}/harness/check_i32.cu", "scan.cu", KIT), "harness")
        self.assertEqual(origin_of("/elsewhere/kit/harness/reduce_main.cu", "reduce.cu", KIT), "harness")
        self.assertEqual(origin_of("check_i32.cu", "scan.cu", KIT), "harness")  # a line table without folders
        self.assertEqual(origin_of("/usr/local/cuda/include/cub/block/block_scan.cuh", "scan.cu", KIT), "library")
        self.assertEqual(origin_of("/home/me/harness-course/04-unrolled/reduce.cu", "reduce.cu", KIT), "student")

    def test_findings_in_the_kit_are_kit_bugs(self):
        findings = parsed("initcheck-kit.txt", "initcheck", "scan.cu").findings
        self.assertEqual([f.origin for f in findings], ["kit", "kit"])
        self.assertEqual(shown_path(findings[0].locations[0].file, "scan.cu", KIT), "harness/check_i32.cu")
        self.assertEqual(shown_path(findings[1].locations[0].file, "scan.cu", KIT), "cub/agent/agent_scan.cuh")

    def test_a_finding_without_a_line_is_the_students_if_the_file_defines_its_function(self):
        text = "========= Invalid __global__ read of size 4 bytes\n=========     at my_kernel(float *)+0x70\n" \
               "=========     by thread (1,0,0) in block (0,0,0)\n"
        result = parse_output(text, "memcheck")
        classify(result.findings, "reduce.cu", KIT, "__global__ void my_kernel(float *x)\n{\n}\n")
        self.assertEqual(result.findings[0].origin, "student")
        classify(result.findings, "reduce.cu", KIT, "__global__ void other(float *x) {}\n")
        self.assertEqual(result.findings[0].origin, "unknown")


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
        self.assertIn("harness/check_i32.cu:71", result.detail)
        self.assertEqual(len(result.data["kit_findings"]), 2)
        self.assertEqual(result.data["sanitizer_findings"], [])

    def test_clean(self):
        outcome = outcome_of(("clean.txt", "memcheck"), ("clean.txt", "racecheck"))
        result = score_sanitizers("04-unrolled", SPEC, outcome, "reduce.cu", KIT)
        self.assertEqual((result.status, result.score, result.summary),
                         ("pass", 10, "nothing found in reduce.cu by memcheck, racecheck"))

    def test_missing_tool_costs_nothing(self):
        result = score_sanitizers("04-unrolled", SPEC, sanitize.Outcome(None), "reduce.cu", KIT)
        self.assertIsInstance(result, SanitizerResult)
        self.assertEqual((result.status, result.score, result.full), ("not run", 10, True))
        self.assertIn("compute-sanitizer is not installed here", result.summary)
        zero = score_sanitizers("04-unrolled", Sanitizers(0, ("memcheck",), (("--n", "1"),), None),
                                sanitize.Outcome(None), "reduce.cu", KIT)
        self.assertTrue(zero.full)  # a row of 0 points that was not run still counts as full: exit status 0

    def test_timeouts_and_tool_errors_cost_nothing(self):
        outcome = outcome_of(("clean.txt", "memcheck"))
        outcome.runs.append(sanitize.ToolRun("racecheck", ["--n", "1"], "timeout",
                                             message="did not finish within 60 s"))
        result = score_sanitizers("04-unrolled", SPEC, outcome, "reduce.cu", KIT)
        self.assertEqual((result.status, result.score, result.full), ("pass", 10, True))
        self.assertIn("racecheck not conclusive (not held against you)", result.summary)
        self.assertIn("racecheck did not finish within 60 s", result.detail)
        only = sanitize.Outcome("cs", [sanitize.ToolRun("memcheck", [], "error",
                                                         message="Error: Device not supported")])
        result = score_sanitizers("04-unrolled", SPEC, only, "reduce.cu", KIT)
        self.assertEqual((result.status, result.score, result.full), ("not run", 10, True))
        self.assertIn("memcheck Error: Device not supported", result.summary)

    def test_a_failing_program_without_findings_is_noted(self):
        outcome = outcome_of(("clean.txt", "memcheck"))
        outcome.runs[0].message = "found nothing, but the program exited with status 1 under it"
        result = score_sanitizers("08-single-pass", SPEC, outcome, "scan.cu", KIT)
        self.assertEqual((result.status, result.score), ("pass", 10))
        self.assertIn("note: memcheck found nothing, but the program exited with status 1 under it", result.detail)

    def test_no_device(self):
        outcome = sanitize.Outcome("cs", [sanitize.ToolRun("memcheck", [], "no-device")])
        result = score_sanitizers("04-unrolled", SPEC, outcome, "reduce.cu", KIT)
        self.assertEqual((result.status, result.score, result.full), ("not run", 0, False))


FAKE_SANITIZER = f"""#!{sys.executable} -S
import os, sys, time
args = sys.argv[1:]
with open(os.environ["FAKE_SANITIZER_LOG"], "a") as f:
    f.write(" ".join(args) + "\\n")
tool = args[args.index("--tool") + 1]
if tool in os.environ.get("FAKE_SANITIZER_SLOW", "").split(","):
    time.sleep(30)
text = open(os.path.join(os.environ["FAKE_SANITIZER_SAMPLES"], tool + ".txt")).read()
sys.stdout.write("the program says hello\\n" + text)
sys.exit({EXIT_FOUND} if "Race" in text or "Invalid" in text else 0)
"""


class FakeSanitizer(unittest.TestCase):
    """A fake compute-sanitizer (a script that prints a sample for each tool) run by run_sanitizers and the grader."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.samples = self.dir / "samples"
        self.samples.mkdir()
        self.tool = self.dir / "compute-sanitizer"
        self.tool.write_text(FAKE_SANITIZER)
        self.tool.chmod(self.tool.stat().st_mode | stat.S_IXUSR)
        self.log = self.dir / "argv.log"
        self.env = {"FAKE_SANITIZER_LOG": str(self.log), "FAKE_SANITIZER_SAMPLES": str(self.samples),
                    "FAKE_SANITIZER_SLOW": ""}

    def give(self, tool: str, name: str, student: str):
        (self.samples / f"{tool}.txt").write_text(sample(name, student))

    def test_options_and_findings(self):
        program = fake_program(self.dir, PASS)
        self.give("memcheck", "clean.txt", STUDENT)
        self.give("racecheck", "racecheck-volatile-last-warp.txt", STUDENT)
        with mock.patch.dict(os.environ, self.env):
            outcome = run_sanitizers(program, [["--n", "1,33", "--seed", "5"]], tools=("memcheck", "racecheck"),
                                     timeout=20, workdir=self.dir / "runs", source="reduce.cu", kit=KIT,
                                     sanitizer=str(self.tool))
        self.assertEqual([(r.tool, r.status, r.returncode) for r in outcome.runs],
                         [("memcheck", "clean", 0), ("racecheck", "findings", EXIT_FOUND)])
        self.assertEqual(len(outcome.findings("student")), 3)
        memcheck, racecheck = self.log.read_text().splitlines()
        self.assertIn(f"--tool memcheck --error-exitcode {EXIT_FOUND} --print-limit ", memcheck)
        self.assertIn("--check-exit-code no --show-backtrace device --target-processes all --padding 1024", memcheck)
        self.assertIn("--racecheck-report analysis --racecheck-detect-level warn", racecheck)
        self.assertIn(f"{program} --n 1,33 --seed 5 --result ", racecheck)
        self.assertTrue(racecheck.endswith("--quiet"))
        self.assertTrue(Path(outcome.runs[1].log).is_file())

    def test_a_slow_tool_times_out_and_is_not_run_again(self):
        program = fake_program(self.dir, PASS)
        self.give("memcheck", "clean.txt", STUDENT)
        self.give("racecheck", "clean.txt", STUDENT)
        with mock.patch.dict(os.environ, {**self.env, "FAKE_SANITIZER_SLOW": "racecheck"}):
            outcome = run_sanitizers(program, [["--n", "1"], ["--n", "2"]], tools=("racecheck", "memcheck"),
                                     timeout=1, workdir=self.dir / "runs", source="reduce.cu", kit=KIT,
                                     sanitizer=str(self.tool))
        self.assertEqual([(r.tool, r.status) for r in outcome.runs],
                         [("racecheck", "timeout"), ("memcheck", "clean"), ("memcheck", "clean")])
        self.assertEqual(outcome.runs[0].message, "did not finish within 1 s")

    def test_find_sanitizer(self):
        self.assertEqual(find_sanitizer({"COMPUTE_SANITIZER": str(self.tool)}), str(self.tool))
        self.assertIsNone(find_sanitizer({"COMPUTE_SANITIZER": str(self.dir / "nothing")}))
        self.assertEqual(find_sanitizer({"PATH": str(self.dir)}), str(self.tool))
        toolkit = self.dir / "cuda"
        (toolkit / "compute-sanitizer").mkdir(parents=True)
        inside = toolkit / "compute-sanitizer" / "compute-sanitizer"
        inside.write_text(FAKE_SANITIZER)
        inside.chmod(0o755)
        self.assertEqual(find_sanitizer({"PATH": str(self.dir / "empty"), "CUDA_HOME": str(toolkit)}), str(inside))

    def grade(self, *, slow="", missing=False, timeout=20.0):
        """Grades lab 01 of SMALL_TOML plus a sanitizers table, with the fake program and the fake sanitizer."""
        config = load_config(write_file(self.dir, "labs.toml", SMALL_TOML + textwrap.dedent("""
            [suites.s.sanitizers]
            points = 0
            tools = ["memcheck", "racecheck"]
            runs = [["--data", "integer", "--n", "1,33"]]
            """)))
        lab = config.select("01")
        submission = make_submission(self.dir / "sub", ["01-first"], VOLATILE_SOURCE)
        program = fake_program(self.dir, PASS)

        def build(kit, pattern, source, folder, timeout=None, harness_build=None):
            Path(folder).mkdir(parents=True, exist_ok=True)
            copy = Path(folder) / "reduce.cu"
            copy.write_text(Path(source).read_text())
            built = Path(folder) / "reduce_lab"
            built.write_text(program.read_text())
            built.chmod(0o755)
            return sanitize_build_result(built)

        grader = Grader(config, submission, kit=self.dir, build_dir=self.dir / "build", seed=7, build=build,
                        timeout=timeout,
                        build_harness=lambda *a, **k: sanitize_build_result(None),
                        check=lambda obj, pattern: static_verdict())
        env = {**self.env, "FAKE_SANITIZER_SLOW": slow,
               "COMPUTE_SANITIZER": str(self.dir / "nothing" if missing else self.tool)}
        with mock.patch.dict(os.environ, env):
            return grader.grade(lab)

    def test_the_grader_fails_the_row_and_does_not_time_the_lab(self):
        self.give("memcheck", "clean.txt", str(self.dir / "build" / "01-first" / "reduce.cu"))
        self.give("racecheck", "racecheck-volatile-last-warp.txt", str(self.dir / "build" / "01-first" / "reduce.cu"))
        report = self.grade()
        rows = {r.name: r for r in report.results}
        self.assertEqual(list(rows), ["static checks", "small", "exact", "sanitizers", "performance"])
        self.assertEqual((rows["small"].status, rows["exact"].status), ("pass", "pass"))  # the sums were right
        self.assertEqual(rows["sanitizers"].status, "FAIL")
        self.assertIn("`v[t] += v[t + 32];`", rows["sanitizers"].summary)  # quoted from the build's copy
        self.assertEqual((rows["performance"].status, rows["performance"].score), ("not run", 0))
        self.assertFalse(report.full_marks)
        table = format_table(report)
        self.assertRegex(table, r"  sanitizers +0 / 0 +FAIL +racecheck: reduce\.cu:47 and reduce\.cu:48: ")
        self.assertIn("Add __syncwarp() between the steps", table)
        tests = {t["name"]: t for t in gradescope_results(report)["tests"]}
        self.assertEqual(tests["01-first: sanitizers"]["status"], "failed")
        self.assertEqual(gradescope_results(report)["extra_data"]["static_check_findings"], {})
        args = self.log.read_text().splitlines()[0]
        self.assertIn("--data integer --n 1,33 --seed 7 --result ", args)

    def test_the_grader_without_compute_sanitizer_loses_nothing(self):
        report = self.grade(missing=True)
        rows = {r.name: r for r in report.results}
        self.assertEqual((rows["sanitizers"].status, rows["sanitizers"].full), ("not run", True))
        self.assertEqual(rows["performance"].status, "pass")
        self.assertTrue(report.full_marks)
        self.assertRegex(format_table(report), r"  sanitizers +0 / 0 +not run +compute-sanitizer is not installed")

    def test_the_grader_excuses_a_slow_tool(self):
        self.give("memcheck", "clean.txt", STUDENT)
        self.give("racecheck", "clean.txt", STUDENT)
        report = self.grade(slow="racecheck", timeout=2.0)
        rows = {r.name: r for r in report.results}
        self.assertEqual((rows["sanitizers"].status, rows["sanitizers"].full), ("pass", True))
        self.assertIn("racecheck not conclusive (not held against you)", rows["sanitizers"].summary)
        self.assertEqual(rows["performance"].status, "pass")


def sanitize_build_result(program):
    from grader.build import BuildResult
    return BuildResult(True, program=program, object=program.parent / "student.o" if program else None)


def static_verdict():
    from grader.static_check import Verdict
    return Verdict()


class Config(unittest.TestCase):
    def load(self, extra: str):
        with tempfile.TemporaryDirectory() as tmp:
            return load_config(write_file(tmp, "labs.toml", SMALL_TOML + textwrap.dedent(extra)))

    TABLE = """
        [suites.s.sanitizers]
        points = 5
        tools = ["memcheck", "racecheck"]
        runs = [["--n", "1,33"]]
        timeout = 100
        """

    def test_suite_table_and_a_labs_override(self):
        config = self.load(self.TABLE.replace("[suites.s.sanitizers]", "[labs.02-second.sanitizers]\n"
                                              "tools = [\"initcheck\"]\n\n[suites.s.sanitizers]"))
        first, second = config.labs
        self.assertEqual(first.sanitizers, Sanitizers(5, ("memcheck", "racecheck"), (("--n", "1,33"),), 100))
        self.assertEqual(second.sanitizers, Sanitizers(5, ("initcheck",), (("--n", "1,33"),), 100))
        self.assertEqual(first.max_score, 10 + 20 + 30 + 5)

    def test_bad_tables(self):
        cases = {
            'tools = ["memcheck", "leakcheck"]': r"unknown tool 'leakcheck'",
            'tools = ["memcheck", "memcheck"]': r"a tool appears twice",
            'tools = []': r"tools: expected a non-empty list",
            'runs = [["--n", "1", "--seed", "3"]]': r"--seed is set by the grader",
            'runs = ["--n"]': r"runs: expected a non-empty list of non-empty lists",
            'timeout = 0': r"timeout: expected a positive number",
            'points = -1': r"points: expected a number >= 0",
            'colour = "red"': r"unknown key colour",
        }
        for line, message in cases.items():
            with self.subTest(line):
                key = line.split(" =")[0]
                table = "\n".join(ln for ln in textwrap.dedent(self.TABLE).splitlines()
                                  if not ln.startswith(key + " ")) + "\n" + line + "\n"
                with self.assertRaisesRegex(ConfigError, message):
                    self.load(table)

    def test_missing_key_and_group_name(self):
        with self.assertRaisesRegex(ConfigError, r"suites\.s\.sanitizers: missing runs"):
            self.load(self.TABLE.replace('runs = [["--n", "1,33"]]', ""))
        clash = SMALL_TOML.replace('name = "small"', 'name = "sanitizers"')
        with tempfile.TemporaryDirectory() as tmp, self.assertRaisesRegex(ConfigError, r"may not be called "
                                                                                       r"'sanitizers'"):
            load_config(write_file(tmp, "labs.toml", clash))

    def test_real_labs_toml(self):
        for lab in load_config().labs:
            with self.subTest(lab.name):
                self.assertEqual(lab.sanitizers.tools, ("memcheck", "racecheck", "synccheck", "initcheck"))
                self.assertEqual(lab.sanitizers.points, 0)
                (run,) = lab.sanitizers.runs
                self.assertEqual(run[run.index("--n") + 1], "1,33,1025,4097")
                self.assertEqual(run[:2] == ("--data", "integer"), lab.pattern == "reduce")


class MakeSanitize(unittest.TestCase):
    def test_with_sizes(self):
        self.assertEqual(with_sizes(("--data", "integer", "--n", "1,33"), "5"), ["--data", "integer", "--n", "5"])
        self.assertEqual(with_sizes(("--data", "integer"), "5"), ["--data", "integer", "--n", "5"])
        self.assertEqual(with_sizes(("--n", "1"), None), ["--n", "1"])

    def test_usage_errors(self):
        with mock.patch("sys.stderr", new=io.StringIO()) as err:
            self.assertEqual(sanitize.main([]), sanitize.EXIT_USAGE)
            self.assertIn("make sanitize needs a lab: make sanitize LAB=04", err.getvalue())
            self.assertEqual(sanitize.main(["--lab", "99"]), sanitize.EXIT_USAGE)
            self.assertEqual(sanitize.main(["--lab", "04", "--tools", "leakcheck"]), sanitize.EXIT_USAGE)
        with mock.patch.dict(os.environ, {"COMPUTE_SANITIZER": "/nonexistent/compute-sanitizer"}), \
                mock.patch("sys.stderr", new=io.StringIO()) as err:
            self.assertEqual(sanitize.main(["--lab", "04"]), sanitize.EXIT_NO_TOOL)
            self.assertIn("compute-sanitizer is not installed here", err.getvalue())

    def test_print_outcome(self):
        out = io.StringIO()
        outcome = outcome_of(("memcheck-shared-write.txt", "memcheck"), ("initcheck-kit.txt", "initcheck"))
        found = sanitize.print_outcome(outcome, "reduce.cu", out, KIT)
        self.assertEqual(found, 1)
        text = out.getvalue()
        self.assertIn("memcheck   --n 1,33: 1 finding in reduce.cu", text)
        self.assertIn("memcheck: reduce.cu:40: Invalid __shared__ write of size 4 bytes", text)
        self.assertIn("in the kit (a kit bug, not yours): initcheck: harness/check_i32.cu:71", text)


if __name__ == "__main__":
    unittest.main()


RECORDED = SAMPLES / "recorded"


class Recorded(unittest.TestCase):
    """Real compute-sanitizer 2025.3.1 outputs, recorded on an NVIDIA H200 (driver 580.159.04) by grader/sanitize.py
    on the known-wrong submissions of tests/wrong (sanitizer_samples/recorded/README.md): the parser must find the
    student's lines in them as the GPU tests do."""

    def findings(self, name: str, tool: str, source: str) -> list:
        result = parse_output((RECORDED / name).read_text(), tool)
        classify(result.findings, source, KIT)
        self.assertEqual(result.tool_errors, [], name)
        return result.findings

    def lines(self, findings) -> set:
        return {loc.line for f in findings for loc in f.locations}

    def test_volatile_last_warp(self):
        found = self.findings("racecheck-volatile-last-warp.txt", "racecheck", "reduce.cu")
        self.assertTrue(found)
        self.assertTrue(all(f.origin == "student" and f.severity == "warning" for f in found))
        self.assertEqual(self.lines(found), set(range(50, 56)))  # the six unrolled steps of the last warp
        self.assertEqual({f.function for f in found}, {"reduce_kernel(const float *, float *, unsigned long)"})

    def test_no_barrier(self):
        found = self.findings("racecheck-no-barrier.txt", "racecheck", "scan.cu")
        self.assertTrue(any(f.severity == "error" for f in found))  # between warps: errors
        self.assertTrue(all(f.origin == "student" for f in found))
        self.assertEqual(self.lines(found), {35, 38})  # the read of s[t - stride] and the write of s[t]

    def test_small_shared_array(self):
        found = self.findings("memcheck-small-shared-array.txt", "memcheck", "reduce.cu")
        self.assertEqual(len(found), 1, [f.kind for f in found])  # one finding, merged over the threads
        self.assertEqual(found[0].kind, "Invalid __shared__ write of size 4 bytes")
        self.assertEqual((found[0].origin, self.lines(found)), ("student", {38}))
        self.assertGreater(found[0].count, 1)

    def test_clean_solution(self):
        for name, tool in (("racecheck-clean.txt", "racecheck"), ("memcheck-clean.txt", "memcheck")):
            with self.subTest(sample=name):
                self.assertEqual(self.findings(name, tool, "reduce.cu"), [])
