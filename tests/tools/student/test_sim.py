"""tools/student/sim.py (make sim) without a build: the stderr relay (findings printed once, names demangled) and the
closing hazard line. The runs themselves are tests/sim/test_hazard_points.py's (they need nvcc)."""
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path

from grader.sim import simulator
from tools.student.sim import StderrRelay, hazard_summary, sizes_problem

LIVE = ["ppl-sim: kernel _Z13reduce_kernelPKfPfm: 1 new finding (hazards that did not stop it):\n",
        "ppl-sim:    [barrier-with-exited-threads] kernel _Z13reduce_kernelPKfPfm, reduce.cu:31 (1 times): x\n",
        "ppl-sim:       PTX line 71: bar.sync 0\n"]
CLOSING = ["== kernel _Z13reduce_kernelPKfPfm (student)\n", "== findings (1)\n",
           "   [barrier-with-exited-threads] kernel _Z13reduce_kernelPKfPfm, reduce.cu:31 (79 times): x\n"]


class Relay(unittest.TestCase):
    def relay(self, lines):
        out = io.StringIO()
        relay = StderrRelay(out)
        for line in lines:
            relay.line(line)
        relay.finish()
        return out.getvalue()

    def test_the_findings_after_each_launch_are_dropped_when_the_closing_section_has_them(self):
        text = self.relay([*LIVE, "CUDA error at reduce.cu:9\n", *CLOSING])
        self.assertEqual(text.count("[barrier-with-exited-threads]"), 1, text)
        self.assertIn("(79 times)", text)
        self.assertIn("CUDA error at reduce.cu:9", text)
        if shutil.which("c++filt"):
            self.assertNotIn("_Z13", text)
            self.assertIn("reduce_kernel(float const*, float*, unsigned long)", text)

    def test_without_a_closing_section_the_findings_after_each_launch_are_kept(self):
        text = self.relay(LIVE)
        self.assertEqual(text.count("[barrier-with-exited-threads]"), 1, text)
        self.assertIn("(1 times)", text)


class Summary(unittest.TestCase):
    def summary(self, findings):
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "sim-report.json"
            report.write_text(json.dumps({"ppl_sim_report": 1, "findings": findings}) + "\n", encoding="utf-8")
            source = Path(tmp) / "reduce.cu"
            source.write_text("__global__ void reduce_kernel(const float *src, float *dst, size_t count) {}\n")
            return hazard_summary(report, source)

    def test_the_students_findings_are_counted_with_their_lines(self):
        """One hazard per kind and pair of source lines, as make grade counts them: two PTX instructions of one line
        are one hazard (their counts summed), another line is another."""
        f = {"kind": "barrier-with-exited-threads", "kernel": "_Z13reduce_kernelPKfPfm", "where": "reduce.cu:31",
             "file": "/tmp/x/reduce.cu", "line": 31, "count": 79, "message": "m"}
        count, lines = self.summary([f, {**f, "ptx_line": 84}, {**f, "where": "reduce.cu:35", "line": 35}])
        self.assertEqual(count, 2)
        self.assertEqual(sum(ln.startswith("[barrier-with-exited-threads]") for ln in lines), 2, lines)
        self.assertIn("(158 times)", lines[1])
        self.assertRegex(lines[-1], r"^2 hazards found \(reduce\.cu:31, reduce\.cu:35: barrier-with-exited-threads; "
                                    r".*make grade takes the correctness points of the groups they touch")

    def test_the_list_is_capped_as_the_grades_row(self):
        f = {"kind": "uninitialized-shared-read", "kernel": "_Z13reduce_kernelPKfPfm", "file": "/tmp/x/reduce.cu",
             "count": 1, "message": "m"}
        count, lines = self.summary([{**f, "where": f"reduce.cu:{n}", "line": n} for n in range(10, 40)])
        self.assertEqual(count, 30)
        self.assertEqual(sum(ln.startswith("[") for ln in lines), simulator.MAX_HAZARDS_SHOWN, lines)
        self.assertIn("... and 20 more hazards", "\n".join(lines))
        self.assertRegex(lines[-1], r"^30 hazards found")

    def test_no_report_or_no_findings_says_nothing(self):
        self.assertEqual(self.summary([]), (0, []))
        self.assertEqual(hazard_summary(Path("/nonexistent/report.json"), Path("reduce.cu")), (0, None))


class Sizes(unittest.TestCase):
    RUN = ["--data", "integer", "--n", "N"]

    def test_too_large_for_the_simulator_is_said_in_the_students_words(self):
        problem, _ = sizes_problem("1,2^30", self.RUN)
        self.assertEqual(problem, "N=1,2^30: 1073741824 elements is too large for the simulator (at most 2097152 = "
                                  "2^21); larger sizes need a GPU (make check)")
        self.assertNotIn("--data", problem)

    def test_not_sizes(self):
        self.assertRegex(sizes_problem("abc", self.RUN)[0], r"^N=abc: not a list of sizes")

    def test_sizes_past_exact_integer_data_run_with_signs(self):
        self.assertEqual(sizes_problem("2^21", self.RUN), ("", ["--data", "signs", "--n", "N"]))
        self.assertEqual(sizes_problem("2^20", self.RUN), ("", self.RUN))
        self.assertEqual(sizes_problem("2^21", ["--n", "N"]), ("", ["--n", "N"]))


if __name__ == "__main__":
    unittest.main()
