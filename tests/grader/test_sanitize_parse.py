"""grader/sanitize/parse.py and findings.py without a GPU: compute-sanitizer's output read into findings (from the
outputs in sanitizer_samples/, CONSTRUCTED from the documented layout until real recordings replace them; and the
recorded ones), the log's prefix, and findings traced to the student's file or to the kit."""
import unittest

from grader.sanitize import findings, parse
from grader.sanitize.findings import classify, explain, origin_of, shown_path
from grader.sanitize.parse import PREFIX, parse_output
from tests.grader.fakes import KIT
from tests.grader.sanitize_support import STUDENT, SAMPLES, parsed, sample


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


class TheLogsPrefix(unittest.TestCase):
    """Each run gives the tool its own --prefix: lines without it are not the tool's, wherever they come from."""

    PREFIX = "=ppl-0123456789abcdef="

    def test_only_lines_with_the_runs_prefix_count(self):
        real = sample("memcheck-shared-write.txt").replace(PREFIX, self.PREFIX)
        forged = ("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
                  "=========     at kit_kernel()+0x10 in /elsewhere/harness/device/check_i32.cu:1\n")
        result = parse_output(forged + real + forged, "memcheck", self.PREFIX)
        self.assertEqual([(f.locations[0].file, f.locations[0].line) for f in result.findings], [(STUDENT, 40)])
        self.assertEqual((result.banner, result.reported), (True, 4))
        self.assertEqual(parse_output(real, "memcheck").findings, [])  # the default prefix is not this run's

    def test_text_written_before_a_line_does_not_hide_it(self):
        real = sample("memcheck-shared-write.txt").replace(PREFIX, self.PREFIX).splitlines()
        glued = [("half a line from the program" + line) if k % 2 else line for k, line in enumerate(real)]
        result = parse_output("\n".join(glued), "memcheck", self.PREFIX)
        self.assertEqual(len(result.findings), 1)
        self.assertEqual(result.findings[0].count, 3)

    def test_summaries(self):
        self.assertEqual(parse_output(sample("racecheck-no-barrier.txt"), "racecheck").reported, 2)
        self.assertEqual(parse_output(sample("two-processes.txt"), "memcheck").reported, 2)
        self.assertIsNone(parse_output("========= COMPUTE-SANITIZER\n", "memcheck").reported)
        self.assertEqual(parse_output(sample("clean.txt"), "memcheck").reported, 0)

    def test_a_flood_of_findings_is_bounded(self):
        parser = parse.OutputParser("memcheck", self.PREFIX)
        for k in range(parse.MAX_FINDINGS + 50):
            for line in (f"{self.PREFIX} Invalid __global__ read of size 4 bytes",
                         f"{self.PREFIX}     at k()+0x10 in {STUDENT}:{k + 1}", f"{self.PREFIX} "):
                parser.feed(line)
        result = parser.close()
        self.assertEqual((len(result.findings), result.dropped), (parse.MAX_FINDINGS, 50))


class WhoseLine(unittest.TestCase):
    def test_origins(self):
        self.assertEqual(origin_of(STUDENT, "reduce.cu", KIT), "student")
        self.assertEqual(origin_of("reduce.cu", "reduce.cu", KIT), "student")
        self.assertEqual(origin_of(f"{KIT}/harness/device/check_i32.cu", "scan.cu", KIT), "harness")
        self.assertEqual(origin_of(f"{KIT}/harness/include/common.h", "scan.cu", KIT), "harness")
        # recorded where the kit lay elsewhere: harness/FOLDER/FILE of a file this kit has
        self.assertEqual(origin_of("/elsewhere/kit/patterns/reduce/serve.cu", "reduce.cu", KIT), "harness")
        self.assertEqual(origin_of("/elsewhere/kit/harness/device/made_up.cu", "reduce.cu", KIT), "other")
        # relative paths are never the kit's (its builds name absolute ones): what a #line could claim
        self.assertEqual(origin_of("harness/reduce_support.cu", "reduce.cu", KIT), "other")
        self.assertEqual(origin_of("patterns/reduce/support.cu", "reduce.cu", KIT), "other")
        self.assertEqual(origin_of("check_i32.cu", "scan.cu", KIT), "other")
        self.assertEqual(origin_of("/usr/local/cuda/include/cub/block/block_scan.cuh", "scan.cu", KIT), "library")
        self.assertEqual(origin_of("/usr/local/cuda/include/cccl/cub/agent/agent_scan.cuh", "scan.cu", KIT),
                         "library")
        self.assertEqual(origin_of("/usr/local/cuda/include/cuda/std/__atomic/api.h", "scan.cu", KIT), "header")
        self.assertEqual(origin_of("/home/me/harness-course/04-unrolled/reduce.cu", "reduce.cu", KIT), "student")

    def test_owners(self):
        student = "__global__ void reduce_kernel(const float *in, float *out, size_t n)\n{\n}\n"
        owner = findings.owner_of
        self.assertEqual(owner(f"{KIT}/harness/device/check_i32.cu", "checksum_kernel(const unsigned int *)",
                               "scan.cu", KIT, student), "kit")
        self.assertEqual(owner("/usr/include/cub/agent/agent_scan.cuh", "void cub::X::DeviceScanKernel<int>(int)",
                               "scan.cu", KIT, student), "kit")
        self.assertEqual(owner("harness/reduce_support.cu", "reduce_kernel(const float *, float *)", "reduce.cu",
                               KIT, student), "student")  # a path made up (#line): neither the student's nor the kit's
        # the kit's own absolute path on a kernel only the student's file defines: made up too
        self.assertEqual(owner(f"{KIT}/patterns/reduce/support.cu", "reduce_kernel(const float *, float *)",
                               "reduce.cu", KIT, student), "student")
        # a CUDA header line goes with its function: the kit's checksum_kernel, or anyone else's
        self.assertEqual(owner("/usr/local/cuda/include/crt/sm_60_atomic_functions.hpp",
                               "checksum_kernel(const unsigned int *, unsigned long)", "scan.cu", KIT, student), "kit")
        self.assertEqual(owner("/usr/local/cuda/include/crt/sm_60_atomic_functions.hpp",
                               "reduce_kernel(const float *, float *)", "reduce.cu", KIT, student), "student")
        self.assertEqual(owner("/usr/local/cuda/include/crt/sm_60_atomic_functions.hpp", "unknown_kernel()",
                               "reduce.cu", KIT, student), "student")

    def test_function_names(self):
        self.assertTrue(findings.defines_function("__global__ void __launch_bounds__(256) k(int *x) {}", "k(int *)"))
        self.assertTrue(findings.defines_function("static __device__ float warp_sum(float v)\n{", "warp_sum(float)"))
        self.assertFalse(findings.defines_function("// unlike k(x) here\nvoid k(int *x) {}", "k(int *)"))
        self.assertTrue(findings.kit_defines_function(str(KIT), "void cub::CUB_300000_NS::checksum_kernel<int>(int)"))
        self.assertFalse(findings.kit_defines_function(str(KIT), "reduce_kernel(const float *, float *)"))

    def test_findings_in_the_kit_are_kit_bugs(self):
        findings = parsed("initcheck-kit.txt", "initcheck", "scan.cu").findings
        self.assertEqual([f.origin for f in findings], ["kit", "kit"])
        self.assertEqual(shown_path(findings[0].locations[0].file, "scan.cu", KIT), "harness/device/check_i32.cu")
        self.assertEqual(shown_path(findings[1].locations[0].file, "scan.cu", KIT), "cub/agent/agent_scan.cuh")
        self.assertEqual(shown_path("/elsewhere/kit/patterns/reduce/serve.cu", "reduce.cu", KIT),
                         "patterns/reduce/serve.cu")

    def test_a_line_the_source_made_up_is_the_students(self):
        """`#line 30 "harness/reduce_support.cu"` before a racy kernel: its race names the kit's file, but the kit's
        builds never name a relative path, and no kit file defines the kernel."""
        text = sample("racecheck-volatile-last-warp.txt", "harness/reduce_support.cu")
        result = parse_output(text, "racecheck")
        classify(result.findings, "reduce.cu", KIT, "__global__ void reduce_kernel(const float *in) {}\n")
        self.assertTrue(result.findings)
        self.assertEqual({f.origin for f in result.findings}, {"student"})
        text = sample("racecheck-volatile-last-warp.txt", f"{KIT}/patterns/reduce/support.cu")
        result = parse_output(text, "racecheck")
        classify(result.findings, "reduce.cu", KIT, "__global__ void reduce_kernel(const float *in) {}\n")
        self.assertEqual({f.origin for f in result.findings}, {"student"})

    def test_a_finding_without_a_line_is_the_students(self):
        """The kit's code carries line information (-lineinfo), so a finding without a line is in code the submission
        brought, whether its file defines the function or not (attack 48: a kernel from a fatbinary it registered
        itself, racecheck's 'hidden_reduce+0x350' with no line)."""
        text = "========= Invalid __global__ read of size 4 bytes\n=========     at my_kernel(float *)+0x70\n" \
               "=========     by thread (1,0,0) in block (0,0,0)\n"
        result = parse_output(text, "memcheck")
        classify(result.findings, "reduce.cu", KIT, "__global__ void my_kernel(float *x)\n{\n}\n")
        self.assertEqual(result.findings[0].origin, "student")
        classify(result.findings, "reduce.cu", KIT, "__global__ void other(float *x) {}\n")
        self.assertEqual(result.findings[0].origin, "student")
        classify(result.findings, "reduce.cu", KIT, "")
        self.assertEqual(result.findings[0].origin, "student")


RECORDED = SAMPLES / "recorded"


class Recorded(unittest.TestCase):
    """Real compute-sanitizer 2025.3.1 outputs, recorded on an NVIDIA H200 (driver 580.159.04) by grader/sanitize/
    on the known-wrong submissions of tools/instructor/variants (sanitizer_samples/recorded/README.md): the parser must find the
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

    def test_through_the_pipe_with_the_runs_prefix(self):
        """Recorded through the grader's pipe: only lines with the run's prefix (its first line's word) are read."""
        for name, tool, source, lines in (("pipe-racecheck-volatile-last-warp.txt", "racecheck", "reduce.cu",
                                           set(range(50, 56))),
                                          ("pipe-racecheck-no-barrier.txt", "racecheck", "scan.cu", {35, 38}),
                                          ("pipe-memcheck-small-shared-array.txt", "memcheck", "reduce.cu", {38})):
            with self.subTest(sample=name):
                text = (RECORDED / name).read_text()
                prefix = text.split()[0]
                self.assertRegex(prefix, r"^=ppl-[0-9a-f]{16}=$")
                result = parse_output(text, tool, prefix)
                classify(result.findings, source, KIT)
                self.assertTrue(result.banner)
                self.assertTrue(result.findings and all(f.origin == "student" for f in result.findings))
                self.assertEqual(self.lines(result.findings), lines)
                self.assertEqual(parse_output(text, tool).findings, [])  # not with the default prefix
        self.assertIsNone(parse_output((RECORDED / "pipe-memcheck-small-shared-array.txt").read_text(), "memcheck",
                                       "=ppl-6b7da83a9bab70d0=").reported)  # cut before its summary

    def test_clean_solution(self):
        for name, tool in (("racecheck-clean.txt", "racecheck"), ("memcheck-clean.txt", "memcheck")):
            with self.subTest(sample=name):
                self.assertEqual(self.findings(name, tool, "reduce.cu"), [])
