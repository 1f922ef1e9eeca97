"""grader/run/gpuinfo.py: nvidia-smi's output parsed (recorded samples), the GPU the harness ran on found among several,
the other processes on it, the warnings; and the grader keeping it all in results.json and warning in the report."""
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.run import gpuinfo
from grader.compile.build import BuildResult
from grader.config import load_config
from grader.grade import Grader
from grader.report.report import format_table, gradescope_results
from grader.compile.static_check import Verdict
from tests.grader.fakes import SMALL_TOML, fake_program, make_submission, write_file

# `nvidia-smi --query-gpu=pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,
# pstate,name --format=csv,noheader,nounits` on an eight-GPU H200 host with one GPU busy, and on a T4 in a VM.
H200_GPUS = """\
00000000:18:00.0, 580.159, 1980, 1980, 3201, 36, 121.45, P0, NVIDIA H200
00000000:2A:00.0, 580.159, 1755, 1980, 3201, 71, 612.80, P0, NVIDIA H200
00000000:3A:00.0, 580.159, 345, 1980, 3201, 30, 76.12, P0, NVIDIA H200
00000000:5D:00.0, 580.159, 345, 1980, 3201, 29, 75.50, P0, NVIDIA H200
00000000:9A:00.0, 580.159, 345, 1980, 3201, 31, 77.01, P0, NVIDIA H200
00000000:AB:00.0, 580.159, 345, 1980, 3201, 30, 75.93, P0, NVIDIA H200
00000000:BA:00.0, 580.159, 345, 1980, 3201, 28, 74.20, P0, NVIDIA H200
00000000:DB:00.0, 580.159, 345, 1980, 3201, 30, 76.66, P0, NVIDIA H200
"""
T4_GPU = "00000000:00:1E.0, 535.104.05, 585, 1590, 5000, 41, [N/A], P8, Tesla T4\n"
# `nvidia-smi --query-compute-apps=gpu_bus_id,pid,used_memory,process_name --format=csv,noheader,nounits`: a
# training job on the busy GPU, one whose name a container hides, and a name with a comma.
H200_APPS = """\
00000000:2A:00.0, 412233, 81920, /usr/bin/python3
00000000:2A:00.0, 412290, 1024, [Not Found]
00000000:DB:00.0, 9001, 512, /opt/app/run,fast
"""

BENCH = {"kind": "bench", "device": "NVIDIA H200", "pci_bus_id": "0000:2a:00.0", "driver": 13000, "runtime": 13000,
         "sm_clock_mhz": 1752.0, "sm_clock_min_mhz": 1701.5, "sm_clock_max_mhz": 1980.0, "mem_clock_max_mhz": 3201.0,
         "throttled": 0, "clock_low": 0, "throttle_threshold": 0.75, "warmups": 2, "samples": 12}


def snap(gpus=H200_GPUS, apps=H200_APPS):
    return {"gpus": gpuinfo.parse_csv(gpus, gpuinfo.GPU_FIELDS), "apps": gpuinfo.parse_csv(apps, gpuinfo.APP_FIELDS)}


class Identity(unittest.TestCase):
    """The GPU the simulator's check shows the runner comes from nvidia-smi, a kit process (gpuinfo.identity)."""

    @staticmethod
    def smi(stdout: str, returncode: int = 0):
        return lambda argv, **kw: subprocess.CompletedProcess(argv, returncode, stdout, "")

    def test_the_name_memory_and_compute_capability_of_the_one_model(self):
        h100 = "81559, 9.0, NVIDIA H100 80GB HBM3\n"
        got = gpuinfo.identity(runner=self.smi(h100 + h100))
        self.assertEqual(got, {"name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559, "compute_cap": "9.0"})

    def test_nothing_where_it_cannot_tell(self):
        two = "81559, 9.0, NVIDIA H100 80GB HBM3\n40960, 8.0, NVIDIA A100-SXM4-40GB\n"
        self.assertEqual(gpuinfo.identity(runner=self.smi(two)), {})  # two models, no CUDA_VISIBLE_DEVICES
        self.assertEqual(gpuinfo.identity("1", "PCI_BUS_ID", runner=self.smi(two))["compute_cap"], "8.0")
        self.assertEqual(gpuinfo.identity(runner=self.smi("", 9)), {})


class Parsing(unittest.TestCase):
    def test_gpus(self):
        rows = gpuinfo.parse_csv(H200_GPUS, gpuinfo.GPU_FIELDS)
        self.assertEqual(len(rows), 8)
        self.assertEqual(rows[1], {"pci_bus_id": "00000000:2A:00.0", "driver_version": "580.159", "sm_clock_mhz": 1755,
                                   "sm_clock_max_mhz": 1980, "mem_clock_mhz": 3201, "temperature_c": 71,
                                   "power_w": 612.8, "pstate": "P0", "name": "NVIDIA H200"})

    def test_not_available_is_none(self):
        (t4,) = gpuinfo.parse_csv(T4_GPU, gpuinfo.GPU_FIELDS)
        self.assertEqual((t4["power_w"], t4["pstate"], t4["driver_version"]), (None, "P8", "535.104.05"))
        (row,) = gpuinfo.parse_csv("0, 1, [Not Supported], N/A, 12 MHz, x, , P0, GPU\n", gpuinfo.GPU_FIELDS)
        self.assertEqual((row["sm_clock_mhz"], row["sm_clock_max_mhz"], row["mem_clock_mhz"], row["temperature_c"],
                          row["power_w"]), (None, None, 12, None, None))

    def test_apps(self):
        apps = gpuinfo.parse_csv(H200_APPS, gpuinfo.APP_FIELDS)
        self.assertEqual(apps[0], {"pci_bus_id": "00000000:2A:00.0", "pid": 412233, "used_memory_mib": 81920,
                                   "process_name": "/usr/bin/python3"})
        self.assertIsNone(apps[1]["process_name"])
        self.assertEqual(apps[2]["process_name"], "/opt/app/run,fast")  # the last field keeps its commas
        self.assertEqual(gpuinfo.parse_csv("\n\ngarbage\n", gpuinfo.APP_FIELDS), [])

    def test_bus_ids(self):
        self.assertEqual(gpuinfo.bus_key("00000000:2A:00.0"), gpuinfo.bus_key("0000:2a:00.0"))
        self.assertEqual(gpuinfo.bus_key("2A:00.0"), gpuinfo.bus_key("0000:2a:00.0"))
        self.assertNotEqual(gpuinfo.bus_key("00000000:2A:00.0"), gpuinfo.bus_key("00000000:3A:00.0"))
        self.assertIsNone(gpuinfo.bus_key(""))


class Snapshot(unittest.TestCase):
    def runner(self, gpus=H200_GPUS, apps=H200_APPS, fail=None):
        calls = []

        def run(argv, **kw):
            calls.append(argv)
            self.assertEqual(argv[0], "nvidia-smi")
            self.assertIn("--format=csv,noheader,nounits", argv)
            if fail:
                return fail(argv)
            out = gpus if argv[1].startswith("--query-gpu=") else apps
            return subprocess.CompletedProcess(argv, 0, out, "")
        return run, calls

    def test_both_queries(self):
        run, calls = self.runner()
        s = gpuinfo.snapshot(run)
        self.assertEqual((len(s["gpus"]), len(s["apps"]), "error" in s), (8, 3, False))
        asked = sorted(argv[1] for argv in calls)  # the two run at once, in either order
        self.assertEqual(asked, ["--query-compute-apps=gpu_bus_id,pid,used_memory,process_name",
                                 "--query-gpu=pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,"
                                 "temperature.gpu,power.draw,pstate,name"])

    def test_the_two_queries_run_at_once(self):
        """Neither query waits for the other: each call of this runner returns only once both have been made (a
        barrier of two; asked one after the other, the first would wait for the second forever, here 10 s)."""
        import threading
        both = threading.Barrier(2, timeout=10)

        def at_once(argv):
            both.wait()
            out = H200_GPUS if argv[1].startswith("--query-gpu=") else H200_APPS
            return subprocess.CompletedProcess(argv, 0, out, "")
        s = gpuinfo.snapshot(self.runner(fail=at_once)[0])
        self.assertEqual((len(s["gpus"]), len(s["apps"]), "error" in s), (8, 3, False))

    def test_no_nvidia_smi(self):
        def missing(argv):
            raise FileNotFoundError(argv[0])
        self.assertEqual(gpuinfo.snapshot(self.runner(fail=missing)[0]), {"error": "nvidia-smi not found"})

    def test_failures_are_said_not_raised(self):
        def broken(argv):
            return subprocess.CompletedProcess(argv, 9, "NVIDIA-SMI has failed because it couldn't communicate "
                                                        "with the NVIDIA driver.\n", "")

        def slow(argv):
            raise subprocess.TimeoutExpired(argv, 15)
        self.assertEqual(gpuinfo.snapshot(self.runner(fail=broken)[0])["error"],
                         "nvidia-smi exited with status 9: NVIDIA-SMI has failed because it couldn't communicate with "
                         "the NVIDIA driver.")
        self.assertEqual(gpuinfo.snapshot(self.runner(fail=slow)[0], timeout=15)["error"],
                         "nvidia-smi took longer than 15 s")

    def test_the_real_one_never_raises(self):
        s = gpuinfo.snapshot(timeout=30)  # this machine's, whatever it has
        self.assertTrue("error" in s or isinstance(s.get("gpus"), list), s)


class Environment(unittest.TestCase):
    def test_our_gpu_among_eight(self):
        env = gpuinfo.environment(snap(), snap(), BENCH)
        self.assertEqual(env["nvidia_smi"]["before"]["pci_bus_id"], "00000000:2A:00.0")  # by bus id, not the first
        self.assertEqual((env["gpu"], env["driver_version"], env["cuda_runtime"], env["sm_clock_mhz"],
                          env["sm_clock_max_mhz"]), ("NVIDIA H200", "580.159", 13000, 1752.0, 1980.0))
        self.assertEqual([a["pid"] for a in env["other_processes"]], [412233, 412290])  # not pid 9001 on DB:00.0
        (warning,) = env["warnings"]
        self.assertEqual(warning, "another process was using the GPU around the benchmark (pid 412233 "
                                  "/usr/bin/python3 (81920 MiB), pid 412290 ? (1024 MiB)): its timing may be off; "
                                  "grade again on an idle GPU")

    def test_an_idle_gpu_has_no_warning(self):
        bench = {**BENCH, "pci_bus_id": "0000:18:00.0"}
        env = gpuinfo.environment(snap(), snap(apps=""), bench)
        self.assertEqual((env["other_processes"], env["warnings"]), ([], []))
        self.assertEqual(env["nvidia_smi"]["after"]["temperature_c"], 36)

    def test_a_process_seen_after_only_counts(self):
        bench = {**BENCH, "pci_bus_id": "0000:db:00.0"}
        env = gpuinfo.environment(snap(apps=""), snap(), bench)
        self.assertEqual([a["pid"] for a in env["other_processes"]], [9001])

    def test_without_a_bus_id_the_only_gpu(self):
        env = gpuinfo.environment(snap(T4_GPU, ""), snap(T4_GPU, ""), {"device": "Tesla T4"})
        self.assertEqual(env["nvidia_smi"]["before"]["name"], "Tesla T4")
        self.assertEqual(env["sm_clock_max_mhz"], 1590)  # nvidia-smi's, when the harness did not say

    def test_throttling(self):
        env = gpuinfo.environment(snap(apps=""), snap(apps=""), {**BENCH, "throttled": 3})
        self.assertEqual(env["warnings"], ["3 samples were discarded because the SM clock fell under 75% of its "
                                           "maximum (throttling) and taken again"])
        env = gpuinfo.environment(snap(apps=""), snap(apps=""),
                                  {**BENCH, "throttled": 9, "clock_low": 1, "sm_clock_mhz": 990.0})
        self.assertEqual(env["warnings"], ["the SM clock stayed under 75% of its maximum through the benchmark (990 of "
                                           "1980 MHz): the GPU is throttled (heat, power) or its clocks are locked "
                                           "low; speedups are ratios within one run, but compare them with care"])

    def test_no_nvidia_smi(self):
        env = gpuinfo.environment({"error": "nvidia-smi not found"}, {"error": "nvidia-smi not found"}, BENCH)
        self.assertEqual((env["nvidia_smi_error"], env["other_processes"], env["warnings"]),
                         ("nvidia-smi not found", [], []))
        self.assertEqual(env["sm_clock_mhz"], 1752.0)  # what the harness measured is still there


class DeviceName(unittest.TestCase):
    def test_one_kind_of_gpu(self):
        self.assertEqual(gpuinfo.device_name(snap()), "NVIDIA H200")

    def test_the_visible_one(self):
        mixed = snap(gpus=H200_GPUS.replace("NVIDIA H200", "NVIDIA H100 80GB HBM3", 1))
        self.assertIsNone(gpuinfo.device_name(mixed))
        self.assertIsNone(gpuinfo.device_name(mixed, "0"))  # CUDA numbers the fastest first unless told otherwise
        self.assertEqual(gpuinfo.device_name(mixed, "0", "PCI_BUS_ID"), "NVIDIA H100 80GB HBM3")
        self.assertEqual(gpuinfo.device_name(mixed, "3,4", "PCI_BUS_ID"), "NVIDIA H200")
        self.assertIsNone(gpuinfo.device_name(mixed, "GPU-8d2f", "PCI_BUS_ID"))  # a UUID: which one is not said
        self.assertIsNone(gpuinfo.device_name(mixed, "9", "PCI_BUS_ID"))
        self.assertEqual(gpuinfo.device_name(snap(), "5"), "NVIDIA H200")

    def test_no_nvidia_smi(self):
        self.assertIsNone(gpuinfo.device_name({"error": "nvidia-smi not found"}))


class Grading(unittest.TestCase):
    """The grader takes a snapshot before and after each benchmark, keeps the record in results.json's extra_data
    and puts the warnings under the table and in the test's output."""

    def grade(self, body: str, snapshot, apps=None):
        """The report of lab 01 of SMALL_TOML graded with a fake harness running body, nvidia-smi's view of the GPUs
        given by snapshot (and apps, for the compute processes, when given)."""
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        tmp = Path(tmp.name)
        config = load_config(write_file(tmp, "labs.toml", SMALL_TOML))
        program = fake_program(tmp, body)
        submission = make_submission(tmp / "sub", ["01-first"])
        grader = Grader(config, submission, kit=tmp, build_dir=tmp / "build", seed=1,
                        build=lambda kit, pattern, source, folder, **kw: BuildResult(True, program, "",
                                                                                     Path(folder) / "student.o"),
                        build_harness=lambda *a, **kw: BuildResult(True),
                        check=lambda obj, pattern: Verdict())
        grader.gpu_snapshot = snapshot
        if apps is not None:
            grader.gpu_apps = apps
        return grader.grade(config.select("01"))

    def test_warnings_reach_the_reports(self):
        line = {k: v for k, v in BENCH.items() if k != "kind"}
        line.update(student_ms=0.5, baseline_ms=1.5, speedup=3.0, spread=0.01, throttled=2)
        snaps = iter([snap(), snap(apps="")])
        report = self.grade(f"if '--bench' in ARGS: emit(CASES[0], 'pass', 'bench', **{line!r}); sys.exit(0)\n"
                            f"all_pass()", lambda: next(snaps))
        perf = report.results[-1]
        self.assertEqual((perf.name, perf.score), ("performance", 30))
        self.assertIn("warning: another process was using the GPU around the benchmark (pid 412233", perf.detail)
        self.assertIn("warning: 2 samples were discarded", perf.detail)
        table = format_table(report)
        self.assertIn("01-first: warning: another process was using the GPU", table)
        results = gradescope_results(report)
        env = results["extra_data"]["performance_environment"]["01-first"]
        self.assertEqual((env["gpu"], env["throttled"], len(env["other_processes"])), ("NVIDIA H200", 2, 2))
        self.assertEqual(env["nvidia_smi"]["before"]["power_w"], 612.8)
        self.assertIn("01-first: warning: 2 samples were discarded", results["output"])

    def test_a_grading_without_a_benchmark_still_names_the_gpu(self):
        """A class report counts the students graded on each GPU: one whose labs all failed ran no benchmark, so the
        name comes from nvidia-smi."""
        report = self.grade("emit(CASES[0], 'fail', message='wrong sum')\nsys.exit(1)", lambda: snap(apps=""),
                            apps=lambda: snap(apps=""))
        self.assertNotEqual(report.results[-1].status, "pass")
        self.assertEqual(gradescope_results(report)["extra_data"]["device"], "NVIDIA H200")


if __name__ == "__main__":
    unittest.main()
