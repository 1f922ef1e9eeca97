"""tools/student/nsight.py (`make profile`): reading ncu's CSV (recorded samples), the figures of one call and the
side-by-side table, and main() with a fake harness program and a fake ncu: no GPU, no ncu, an ncu without permission to
read the counters, an ncu that does not know a metric."""
import io
import json
import math
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from unittest import mock

from grader.compile.build import BuildResult
from tests.grader.fakes import fake_program, make_submission
from tests.tools.student import samples
from grader.patterns import KIT
from tools.student import nsight as profile

KERNEL_SOURCE = "/* a student's file */\n#include \"reduce.h\"\n__global__ void reduce_kernel(const float *src)\n{\n}\n"


class Units(unittest.TestCase):
    def test_base_units(self):
        self.assertEqual(profile.to_base_units(1.5, "Gbyte/second"), 1.5e9)
        self.assertAlmostEqual(profile.to_base_units(55.0, "usecond"), 55e-6)
        self.assertEqual(profile.to_base_units(2.0, "Ksector"), 2000.0)
        self.assertEqual(profile.to_base_units(50.0, "%"), 50.0)
        self.assertEqual(profile.to_base_units(3.0, "byte"), 3.0)
        self.assertEqual(profile.to_base_units(5.0, "inst"), 5.0)
        self.assertEqual(profile.to_base_units(7.0, ""), 7.0)
        self.assertAlmostEqual(profile.to_base_units(1.0, "msecond"), 1e-3)
        self.assertAlmostEqual(profile.to_base_units(2.0, "byte/nsecond") / 2e9, 1.0)

    def test_values(self):
        self.assertEqual(profile.parse_value("1,234,567"), 1234567.0)
        self.assertEqual(profile.parse_value(" 12.5 "), 12.5)
        self.assertIsNone(profile.parse_value("n/a"))
        self.assertIsNone(profile.parse_value(""))

    def test_kernel_names(self):
        self.assertEqual(profile.kernel_base_name(samples.K), "reduce_kernel")
        self.assertEqual(profile.kernel_base_name("void reduce_kernel<256>(const float *)"), "reduce_kernel")
        self.assertEqual(profile.kernel_base_name(samples.CUB), "DeviceScanKernel")
        self.assertEqual(profile.kernel_base_name("scan_tiles_kernel"), "scan_tiles_kernel")


class ParseCsv(unittest.TestCase):
    def test_launches_in_order_with_noise_around(self):
        launches = profile.parse_ncu_csv(samples.LAB02_CSV)
        self.assertEqual([ln.id for ln in launches], ["0", "1", "2"])
        self.assertEqual({ln.kernel for ln in launches}, {"reduce_kernel"})
        first = launches[0].metrics
        self.assertEqual(first[profile.DRAM_BYTES], 67108864.0)
        self.assertAlmostEqual(first[profile.TIME], 50e-6)
        self.assertEqual(first[profile.GLOBAL_SECTORS], 2097152.0)
        self.assertLessEqual(set(profile.METRICS), set(first))
        self.assertIsNone(launches[2].metrics["smsp__sass_average_branch_targets_threads_uniform.pct"])  # n/a

    def test_scaled_units(self):
        launches = profile.parse_ncu_csv(samples.SCALED_CSV)
        self.assertEqual([ln.kernel for ln in launches], ["scatter_kernel", "DeviceScanKernel"])
        m = launches[0].metrics
        self.assertAlmostEqual(m[profile.TIME], 55e-6)
        self.assertAlmostEqual(m[profile.DRAM_BYTES], 67.11e6)
        self.assertAlmostEqual(m[profile.DRAM_RATE], 1.22e12)
        self.assertAlmostEqual(m[profile.GLOBAL_SECTORS], 2097150.0)

    def test_no_csv(self):
        self.assertEqual(profile.parse_ncu_csv("==PROF== Connected\n==WARNING== No kernels were profiled.\n"), [])


class Summaries(unittest.TestCase):
    def test_one_call_over_its_launches(self):
        s = profile.summarize(profile.parse_ncu_csv(samples.LAB02_CSV))
        self.assertAlmostEqual(s["time"], 55e-6)
        self.assertEqual(s["dram_bytes"], 67174400.0)
        self.assertAlmostEqual(s["bandwidth"] / (67174400.0 / 55e-6), 1.0)
        self.assertEqual((s["bank_ld"], s["bank_st"]), (7007000.0, 3500000.0))
        self.assertAlmostEqual(s["threads_per_inst"], 300 / 11)  # weighted by instructions
        self.assertAlmostEqual(s["sectors_per_request"], 4.0)

    def test_missing_metrics_stay_missing(self):
        s = profile.summarize(profile.parse_ncu_csv(samples.SCALED_CSV)[:1])
        self.assertIsNone(s["bank_ld"])
        self.assertAlmostEqual(s["bandwidth"] / (67.11e6 / 55e-6), 1.0)
        self.assertAlmostEqual(s["sectors_per_request"], 4.0, places=3)

    def test_kernel_counts(self):
        launches = profile.parse_ncu_csv(samples.LAB02_CSV) + profile.parse_ncu_csv(samples.SCALED_CSV)
        self.assertEqual(profile.kernel_counts(launches), "reduce_kernel x3, scatter_kernel x1, DeviceScanKernel x1")


class Table(unittest.TestCase):
    def test_side_by_side(self):
        lab02 = profile.summarize(profile.parse_ncu_csv(samples.LAB02_CSV))
        lab03 = dict(lab02, bank_ld=0.0, bank_st=0.0, wavefronts_per_ld=1.0, threads_per_inst=31.5,
                     branch_uniform=99.0, time=20e-6, warp_insts=4e6)
        text = profile.side_by_side([("yours", lab03), ("lab 02 ref", lab02)], input_bytes=4.0 * 2 ** 24)
        lines = text.splitlines()
        self.assertTrue(lines[0].rstrip().endswith("yours      lab 02 ref"), lines[0])
        self.assertRegex(text, r"bank conflicts, shared loads\s+0\s+7,007,000\n")
        words = " ".join(text.split())  # the explanations are wrapped
        self.assertIn("asking one of the 32 banks for different words", words)
        self.assertIn("compare the columns rather than read one alone", words)
        self.assertRegex(text, r"working threads per warp inst\.\s+31\.5 of 32\s+27\.3 of 32\n")
        self.assertRegex(text, r"warp instructions issued\s+4,000,000\s+11,000,000\n")  # summed over 3 launches
        self.assertRegex(text, r"GPU time, all launches\s+0\.020 ms\s+0\.055 ms\n")
        self.assertRegex(text, r"DRAM read bandwidth\s+1,221 GB/s\s+1,221 GB/s\n")
        self.assertRegex(text, r"sectors per global load\s+4\.00\s+4\.00\n")
        self.assertIn("4 is ideal for 4-byte loads", words)
        self.assertIn("(67.1 MB here)", words)
        # every metric row is followed by its explanation
        rows = [k for k, ln in enumerate(lines) if ln and not ln.startswith(" ")]
        for k in rows:
            self.assertTrue(lines[k + 1].startswith("    "), lines[k])

    def test_missing_and_empty_cells(self):
        text = profile.side_by_side([("yours", {"sectors_per_request": math.nan, "time": 1e-3}),
                                     ("ref", {"sectors_per_request": 2.0})])
        self.assertRegex(text, r"sectors per global load\s+none\s+2\.00\n")
        self.assertRegex(text, r"GPU time, all launches\s+1\.000 ms\s+-\n")
        self.assertNotIn("bank conflicts", text)  # no column has them: the row is left out


class Labs(unittest.TestCase):
    def test_kernels_of_the_solutions(self):
        def kernels(lab, name):
            return profile.kernels_in((KIT / "solutions" / lab / name).read_text())
        self.assertEqual(kernels("03-sequential", "reduce.cu"), ["reduce_kernel"])
        self.assertEqual(kernels("06-scan", "scan.cu"), ["scan_tiles_kernel", "add_offsets_kernel"])
        self.assertEqual(kernels("07-compact", "compact.cu"), ["count_kernel", "scatter_kernel"])
        self.assertEqual(kernels("08-single-pass", "scan.cu"), ["single_pass_scan_kernel"])
        self.assertEqual(profile.kernels_in("// __global__ void old_kernel(int *x)\n" + KERNEL_SOURCE),
                         ["reduce_kernel"])

    def test_reference_is_the_previous_stage_of_the_same_pattern(self):
        def ref(lab):
            folder, why = profile.reference_lab(lab, KIT)
            return folder.name, why
        self.assertEqual(ref("03-sequential")[0], "02-shared-strided")
        self.assertEqual(ref("05-coarsened")[0], "04-unrolled")
        self.assertEqual(ref("08-single-pass")[0], "06-scan")
        self.assertEqual(ref("01-global-strided")[0], "01-global-strided")
        self.assertIn("baseline", ref("01-global-strided")[1])
        self.assertEqual(ref("06-scan")[0], "06-scan")
        self.assertEqual(ref("07-compact")[0], "07-compact")



class FindNcu(unittest.TestCase):
    def test_missing(self):
        self.assertIsNone(profile.find_ncu(env={}, which=lambda name: None, globber=lambda pattern: []))

    def test_path_first(self):
        self.assertEqual(profile.find_ncu(env={}, which=lambda name: "/usr/bin/ncu", globber=lambda p: []),
                         "/usr/bin/ncu")

    def test_newest_under_opt(self):
        found = ["/opt/nvidia/nsight-compute/2023.3.1/ncu", "/opt/nvidia/nsight-compute/2025.1.0/ncu",
                 "/opt/nvidia/nsight-compute/2024.2.0/ncu"]
        with mock.patch("os.access", return_value=True):
            got = profile.find_ncu(env={}, which=lambda name: None,
                                   globber=lambda p: found if p.startswith("/opt/") else [])
        self.assertEqual(got, "/opt/nvidia/nsight-compute/2025.1.0/ncu")

    def test_env_names_a_missing_file(self):
        self.assertIsNone(profile.find_ncu(env={"NCU": "/nowhere/ncu"}, which=lambda n: "/usr/bin/ncu"))


class Main(unittest.TestCase):
    """main() with fake builds (fake harness programs) and a fake ncu (a script printing a recorded sample)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)
        self.submission = make_submission(self.dir / "sub", ["03-sequential"], KERNEL_SOURCE)
        (self.dir / "lab02.csv").write_text(samples.LAB02_CSV)
        (self.dir / "query.txt").write_text(samples.QUERY_METRICS)
        self.calls = self.dir / "ncu_calls.jsonl"

    def fake_ncu(self, body: str) -> str:
        """An ncu that records its arguments (ARGV, METRICS) and runs body."""
        path = self.dir / "ncu"
        path.write_text(f"#!{sys.executable} -S\nimport json, sys\nARGV = sys.argv[1:]\n"
                        f"with open({str(self.calls)!r}, 'a') as f:\n    f.write(json.dumps(ARGV) + '\\n')\n"
                        f"METRICS = ARGV[ARGV.index('--metrics') + 1].split(',') if '--metrics' in ARGV else []\n"
                        f"DIR = {str(self.dir)!r}\n" + textwrap.dedent(body).strip() + "\n")
        path.chmod(0o755)
        return str(path)

    def ncu_calls(self) -> list:
        return [json.loads(ln) for ln in self.calls.read_text().splitlines()] if self.calls.exists() else []

    def main(self, program_body="all_pass()", ncu=None, lab="03"):
        programs = {}

        def build(kit, pattern, source, folder):
            key = Path(folder).parent.name  # "yours" or "reference"
            (self.dir / key).mkdir(exist_ok=True)
            programs[key] = fake_program(self.dir / key, program_body, name=f"{pattern}_lab")
            return BuildResult(True, program=programs[key])

        out = io.StringIO()
        status = profile.main(["--lab", lab, "--submission", str(self.submission), "--build-dir",
                               str(self.dir / "build")], out=out, build=build,
                              build_harness=lambda kit, pattern: BuildResult(True), ncu_finder=lambda: ncu)
        return status, out.getvalue()

    def test_side_by_side(self):
        ncu = self.fake_ncu("print(open(DIR + '/lab02.csv').read())")
        status, text = self.main(ncu=ncu)
        self.assertEqual(status, profile.EXIT_OK, text)
        self.assertIn("lab 03-sequential: one reduce() call, n = 2^24 (uniform floats)", text)
        self.assertIn("lab 02 ref: the previous stage's reference (solutions/02-shared-strided): reduce_kernel x3",
                      text)
        self.assertRegex(text, r"bank conflicts, shared loads\s+7,007,000\s+7,007,000")
        calls = self.ncu_calls()
        self.assertEqual(len(calls), 2)  # yours, then the reference
        argv = calls[0]
        for flag in (["--csv"], ["--clock-control", "none"], ["--target-processes", "all"],
                     ["--print-units", "base"], ["-k", "regex:^(reduce_kernel)$"]):
            self.assertTrue(any(argv[k:k + len(flag)] == flag for k in range(len(argv))), (flag, argv))
        self.assertEqual(argv[argv.index("--metrics") + 1].split(","), profile.METRICS)
        self.assertTrue(argv[argv.index("-k") + 2].endswith("yours/reduce_lab"), argv)
        self.assertEqual(argv[-7:], ["--n", "2^24", "--data", "uniform", "--seed", "1", "--quiet"])
        self.assertTrue(calls[1][calls[1].index("-k") + 2].endswith("reference/reduce_lab"), calls[1])

    def test_no_device(self):
        status, text = self.main("sys.exit(77)", ncu=self.fake_ncu("sys.exit(0)"))
        self.assertEqual(status, profile.EXIT_NO_DEVICE, text)
        self.assertIn("make profile measures your kernel with Nsight Compute beside the previous stage's "
                      "reference, on a GPU; there is none", " ".join(text.split()))
        self.assertIn("\n  make sim LAB=03", text)  # the simulator's counts come nearest (grader/run/no_gpu.py)
        self.assertEqual(self.ncu_calls(), [])

    def test_ncu_missing(self):
        status, text = self.main(ncu=None)
        self.assertEqual(status, profile.EXIT_TOOL, text)
        self.assertIn("make profile needs Nsight Compute (ncu)", text)
        self.assertIn("/opt/nvidia/nsight-compute", text)

    def test_a_hang_is_not_profiled(self):
        with mock.patch.object(profile, "RUN_TIMEOUT", 1.0):
            status, text = self.main("time.sleep(30)", ncu=self.fake_ncu("sys.exit(0)"))
        self.assertEqual(status, profile.EXIT_FAIL, text)
        self.assertIn("timed out", text)
        self.assertIn("make check LAB=03", text)
        self.assertEqual(self.ncu_calls(), [])

    def test_wrong_results_are_still_profiled(self):
        body = """
            emit(CASES[0], "fail", got=1.0, expected=2.0, tolerance=0.0, message="wrong sum: got 1, expected 2")
            sys.exit(1)"""
        status, text = self.main(body, ncu=self.fake_ncu("print(open(DIR + '/lab02.csv').read())"))
        self.assertEqual(status, profile.EXIT_OK, text)
        self.assertIn("note: your reduce() gives a wrong result", text)

    def test_no_permission(self):
        ncu = self.fake_ncu("""
            print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
                  "Counters on the target device 0.")
            sys.exit(1)""")
        status, text = self.main(ncu=ncu)
        self.assertEqual(status, profile.EXIT_TOOL, text)
        self.assertIn("NVreg_RestrictProfilingToAdminUsers", text)

    def test_an_unknown_metric_is_dropped(self):
        ncu = self.fake_ncu("""
            if "smsp__inst_executed.sum" in METRICS:
                print("==ERROR== Failed to find metric smsp__inst_executed.sum")
                sys.exit(1)
            print(open(DIR + '/lab02.csv').read())""")
        status, text = self.main(ncu=ncu)
        self.assertEqual(status, profile.EXIT_OK, text)
        self.assertIn("note: this ncu does not know smsp__inst_executed.sum: left out", text)
        self.assertEqual(len(self.ncu_calls()), 3)  # yours twice, the reference once with the shorter list

    def test_query_metrics_when_the_error_names_none(self):
        ncu = self.fake_ncu("""
            if "--query-metrics" in ARGV:
                print(open(DIR + '/query.txt').read())
                sys.exit(0)
            if "smsp__inst_executed.sum" in METRICS:
                print("==ERROR== An error was reported by the driver")
                sys.exit(1)
            print(open(DIR + '/lab02.csv').read())""")
        status, text = self.main(ncu=ncu)
        self.assertEqual(status, profile.EXIT_OK, text)
        self.assertIn("does not know smsp__inst_executed.sum", text)
        self.assertNotIn("does not know dram", text)

    def test_no_kernel_matched(self):
        ncu = self.fake_ncu("""
            if "-k" in ARGV:
                print("==WARNING== No kernels were profiled.")
                sys.exit(0)
            print(open(DIR + '/lab02.csv').read())""")
        status, text = self.main(ncu=ncu)
        self.assertEqual(status, profile.EXIT_OK, text)
        self.assertIn("every kernel was profiled instead", text)

    def test_ncu_fails(self):
        status, text = self.main(ncu=self.fake_ncu("print('==ERROR== something broke'); sys.exit(3)"))
        self.assertEqual(status, profile.EXIT_FAIL, text)
        self.assertIn("ncu gave no measurements (exit status 3)", text)
        self.assertIn("something broke", text)

    def test_lab_must_be_one(self):
        with mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            self.assertEqual(profile.main(["--lab", "03,04"], out=io.StringIO()), profile.EXIT_TOOL)
            self.assertIn("several labs", err.getvalue())
            self.assertEqual(profile.main([], out=io.StringIO()), profile.EXIT_TOOL)
            self.assertIn("make profile LAB=03", err.getvalue())


if __name__ == "__main__":
    unittest.main()
