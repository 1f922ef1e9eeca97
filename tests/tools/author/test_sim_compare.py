"""tools/author/sim_compare.py (`make sim-compare`): kernel names from either side, matching the simulator's kernels to
ncu's launches, the sums and the table (from recorded and constructed ncu CSV), ncu that does not know a metric, and
main() on a real simulator run of lab 03's solution: without a GPU (the Nsight Compute column stays empty, saying
why) and with a fake GPU and a fake ncu (constructed CSV, no GPU needed). The last two need nvcc."""
import io
import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from grader.run.process import Process, run_process
from tests.tools.student import samples
from grader.patterns import KIT
from tools.author import sim_compare as sc
from tools.author import sim_table as st

HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None


K = "reduce_kernel(const float *, float *, unsigned long)"


def constructed_csv(kernel=K, launches=((1024, 1024), (1, 1024)), missing=(), per_launch=None):
    """CONSTRUCTED (not recorded from a GPU): ncu's --csv details page for launches of kernel, each (grid, block),
    with every metric of sim_compare.METRICS but those in missing, each worth per_launch[metric] (default 1000,
    2000, ... in METRICS order), plus one launch of a CUB kernel that is not the lab's."""
    per_launch = per_launch or {m: 1000 * (k + 1) for k, m in enumerate(st.METRICS)}
    rows = []
    for launch, (grid, block) in enumerate(launches):
        for metric in st.METRICS:
            if metric not in missing:
                rows.append(samples.row(launch, kernel, metric, "", f"{per_launch[metric]:,}",
                                        grid=f"({grid}, 1, 1)", block=f"({block}, 1, 1)"))
    cub = len(launches)
    rows += [samples.row(cub, samples.CUB, m, "", "7", grid="(4, 1, 1)", block="(128, 1, 1)") for m in st.METRICS]
    return "\n".join(["==PROF== Connected to process 4242 (constructed)", samples.HEADER, *rows]) + "\n"


class Names(unittest.TestCase):
    def test_mangled_and_demangled(self):
        self.assertEqual(sc.kernel_base_name("_Z13reduce_kernelPfS_m"), "reduce_kernel")  # what the simulator reports
        self.assertEqual(sc.kernel_base_name("_Z17scan_tiles_kernelPKiPimi14scan_algorithmPi"), "scan_tiles_kernel")
        self.assertEqual(sc.kernel_base_name("_ZN2ns6kernelILi8EEEvPi"), "kernel")
        self.assertEqual(sc.kernel_base_name("_ZN12_GLOBAL__N_17helpersE"), "helpers")
        self.assertEqual(sc.kernel_base_name("_ZL9my_kernelPi"), "my_kernel")
        self.assertEqual(sc.kernel_base_name(K), "reduce_kernel")  # what ncu reports
        self.assertEqual(sc.kernel_base_name("void scan_tiles_kernel<256>(const int *, int *)"), "scan_tiles_kernel")
        self.assertEqual(sc.kernel_base_name("count_kernel"), "count_kernel")
        self.assertEqual(sc.kernel_base_name(samples.CUB), "DeviceScanKernel")

    def test_matching(self):
        matched = sc.match_kernels(["_Z17scan_tiles_kernelPKiPimi14scan_algorithmPi", "_Z18add_offsets_kernelPimPKi"],
                                   ["add_offsets_kernel(int *, unsigned long, const int *)", "scan_tiles_kernel",
                                    samples.CUB])
        self.assertEqual([m[0] for m in matched], ["scan_tiles_kernel", "add_offsets_kernel", "DeviceScanKernel"])
        self.assertEqual(matched[1][2], ["add_offsets_kernel(int *, unsigned long, const int *)"])
        self.assertEqual(matched[2][1], [])  # ncu's only


class NcuSide(unittest.TestCase):
    def test_shapes_from_recorded_csv(self):
        shapes = sc.launch_shapes(samples.LAB02_CSV)
        self.assertEqual(shapes, {"0": (16384, 16384 * 1024), "1": (16, 16 * 1024), "2": (1, 1024)})

    def test_sums_over_the_labs_launches_only(self):
        text = constructed_csv()
        launches = sc.nsight.parse_ncu_csv(text)
        counts = sc.ncu_kernel_counts(launches, sc.launch_shapes(text), {"reduce_kernel"}, st.METRICS)
        self.assertEqual(list(counts), ["reduce_kernel"])  # the CUB launch is not the lab's
        k = counts["reduce_kernel"]
        self.assertEqual((k[st.LAUNCHES], k[st.BLOCKS], k[st.THREADS]), (2, 1025, 1025 * 1024))
        self.assertEqual(k[st.INST], 2 * 1000)
        self.assertEqual(k[st.SECTORS_ST], 2 * 12000)

    def test_a_launch_without_a_value_leaves_no_partial_sum(self):
        text = constructed_csv().replace(f'"{st.BANK_ST}","","8,000"', f'"{st.BANK_ST}","","n/a"', 1)
        counts = sc.ncu_kernel_counts(sc.nsight.parse_ncu_csv(text), {}, {"reduce_kernel"}, st.METRICS)
        self.assertIsNone(counts["reduce_kernel"][st.BANK_ST])
        self.assertIsNone(counts["reduce_kernel"][st.BLOCKS])  # no shapes given
        rows = {r["key"]: r for r in st.table_rows({"shared_extra_wavefronts": 5}, st.totals(counts))}
        self.assertIsNone(rows["bank_conflicts"]["ncu"])
        self.assertEqual(st.fmt_ratio(rows["bank_conflicts"]), "-")

    def test_unknown_metric_is_left_out_with_a_note(self):
        """An ncu that does not know one metric: profile.profile_program drops it and runs again; its row is "-"."""
        bad = st.BRANCH_DIVERGENT
        calls = []

        def fake_run(argv, **kwargs):
            calls.append(argv)
            if bad in argv[argv.index("--metrics") + 1]:
                return Process(1, f"==ERROR== Failed to find metric {bad.split('.')[0]}\n", 0.1)
            return Process(0, constructed_csv(missing=(bad,)), 0.1)

        lab = sc.Lab("03-sequential", "reduce", KIT / "solutions/03-sequential/reduce.cu", ["reduce_kernel"])
        lab.gpu_program = Path("/nonexistent/reduce_lab")
        metrics = sc.measure_ncu(KIT, lab, "2^20", "/fake/ncu", list(st.METRICS), run=fake_run)
        self.assertEqual(len(calls), 2)
        self.assertNotIn(bad, metrics)
        self.assertTrue(any(bad in note for note in lab.notes), lab.notes)
        rows = {r["key"]: r for r in st.table_rows({"divergent_branches": 10, "warp_instructions": 100},
                                                   st.totals(lab.ncu))}
        self.assertIsNone(rows["divergent_branches"]["ncu"])
        self.assertEqual(rows["warp_instructions"]["ncu"], 2000)


class Table(unittest.TestCase):
    SIM = {"warp_instructions": 1000, "active_lanes": 16000, "branches": 10, "divergent_branches": 0,
           "shared_requests": 40, "shared_extra_wavefronts": 0, "global_load_requests": 8,
           "global_store_requests": 2, "global_sectors": 40, "launches": 2, "blocks": 5}
    NCU = {st.INST: 1500, st.THREAD_INST: 36000, st.BRANCH_TARGETS: 12, st.BRANCH_DIVERGENT: 3, st.SHARED_LD: 30,
           st.SHARED_ST: 10, st.BANK_LD: 0, st.BANK_ST: 0, st.REQUESTS_LD: 8, st.REQUESTS_ST: 2, st.SECTORS_LD: 32,
           st.SECTORS_ST: 8, st.LAUNCHES: 2, st.BLOCKS: 5}

    def test_rows(self):
        rows = {r["key"]: r for r in st.table_rows(self.SIM, self.NCU)}
        self.assertEqual(list(rows), st.ROW_KEYS)
        self.assertEqual(rows["warp_instructions"]["ratio"], 1.5)
        self.assertEqual(rows["simt_efficiency"]["simulator"], 0.5)
        self.assertEqual(rows["simt_efficiency"]["ncu"], 0.75)
        self.assertEqual(rows["shared_requests"]["ncu"], 40)  # loads + stores
        self.assertEqual(rows["global_sectors"]["ratio"], 1.0)
        self.assertEqual(rows["bank_conflicts"]["ratio"], 1.0)  # 0 and 0 agree
        self.assertIsNone(rows["divergent_branches"]["ratio"])  # 0 on the simulator, 3 on the GPU
        self.assertEqual(st.fmt_ratio(rows["divergent_branches"]), "n/a")
        self.assertTrue(all(r["note"] for r in rows.values()))

    def test_simulator_only(self):
        rows = st.table_rows(self.SIM, None)
        self.assertTrue(all(r["ncu"] is None and r["ratio"] is None for r in rows))
        text = st.text_table(rows)
        self.assertRegex(text, r"warp instructions\s+1,000\s+-\s+-")
        self.assertIn("50.0 %", text)
        md = st.markdown_table(rows)
        self.assertIn("| warp instructions | 1,000 | - | - |", md)

    def test_totals_over_kernels(self):
        both = st.totals({"a": {"x": 1, "y": None}, "b": {"x": 2, "y": 3}})
        self.assertEqual(both, {"x": 3, "y": None})
        self.assertIsNone(st.totals(None))

    def test_simulator_report(self):
        report = {"kernels": [{"name": "_Z13reduce_kernelPKfPfm", "launches": 2, "warp_instructions": 10,
                               "simt_efficiency": 0.5, "lines": []},
                              {"name": "_Z17kit_scan_harnessPi", "launches": 1, "warp_instructions": 99}]}
        counts, names = sc.sim_kernel_counts(report, {"reduce_kernel"})
        self.assertEqual(counts, {"reduce_kernel": {"launches": 2, "warp_instructions": 10}})
        self.assertEqual(names, {"reduce_kernel": ["_Z13reduce_kernelPKfPfm"]})


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the labs for the simulator")
class RealSimulatorRun(unittest.TestCase):
    """Lab 03's solution at n = 65537, run on the simulator for real (a few seconds once the harness is built)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ppl-sim-compare-test-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_main(self, tag, **hooks):
        folder = Path(self.tmp.name) / tag
        out = io.StringIO()
        status = sc.main(["--labs", "03", "--n", "65537", "--build-dir", str(folder / "build"), "--json",
                          str(folder / "r.json"), "--markdown", str(folder / "r.md"), "--ncu-csv-dir",
                          str(folder / "csv")], out=out, **hooks)
        return status, out.getvalue(), json.loads((folder / "r.json").read_text()), (folder / "r.md").read_text()

    def test_without_a_gpu(self):
        status, text, report, md = self.run_main("nogpu", gpu_probe=lambda: None)
        self.assertEqual(status, 0, text)
        self.assertIn(sc.NO_GPU, text)
        self.assertIn(sc.NO_GPU, md)
        lab = report["labs"][0]
        self.assertEqual([k["kernel"] for k in lab["kernels"]], ["reduce_kernel"])
        self.assertTrue(lab["kernels"][0]["simulator_names"][0].startswith("_Z"))  # mangled, matched by base name
        rows = {r["key"]: r for r in lab["rows"]}
        self.assertTrue(all(r["ncu"] is None for r in rows.values()))
        self.assertGreater(rows["warp_instructions"]["simulator"], 0)
        self.assertEqual(rows["bank_conflicts"]["simulator"], 0)  # sequential addressing: conflict-free
        self.assertGreaterEqual(rows["global_sectors"]["simulator"], rows["global_load_requests"]["simulator"])
        self.assertGreaterEqual(rows["launches"]["simulator"], 1)
        self.assertIn("| warp instructions |", md)

    def test_with_a_fake_gpu_and_ncu(self):
        """CONSTRUCTED ncu output: checks the plumbing from a real simulator run to the ratio, not the GPU."""
        ncu_calls = []

        def run(argv, **kwargs):
            if argv[0] != "/fake/ncu":
                return run_process(argv, **kwargs)
            ncu_calls.append(argv)
            if "--version" in argv:
                return Process(0, "NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.0.0 (fake)\n", 0.1)
            return Process(0, constructed_csv(launches=((33, 1024), (1, 1024))), 0.1)

        status, text, report, md = self.run_main("fakegpu", gpu_probe=lambda: "NVIDIA H200 (fake)",
                                                 ncu_finder=lambda: "/fake/ncu", run=run)
        self.assertEqual(status, 0, text)
        self.assertNotIn(sc.NO_GPU, text)
        profiled = [a for a in ncu_calls if "--metrics" in a]
        self.assertEqual(len(profiled), 1)
        self.assertIn("regex:^(reduce_kernel)$", profiled[0])  # only the lab's kernels
        self.assertIn("--seed", profiled[0])
        lab = report["labs"][0]
        rows = {r["key"]: r for r in lab["rows"]}
        self.assertEqual(rows["warp_instructions"]["ncu"], 2000)
        self.assertAlmostEqual(rows["warp_instructions"]["ratio"], 2000 / rows["warp_instructions"]["simulator"])
        self.assertEqual(rows["blocks"]["ncu"], 34)
        self.assertEqual(report["gpu"]["ncu_version"], "Version 2025.3.0.0 (fake)")
        self.assertIn("NVIDIA H200 (fake)", md)
        self.assertTrue((Path(self.tmp.name) / "fakegpu" / "csv" / "03-sequential.csv").is_file())


if __name__ == "__main__":
    unittest.main()
