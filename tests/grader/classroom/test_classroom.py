"""grader/classroom/: a whole class graded with fake builds and harness programs (tests/grader/classroom/fakes.py), real
uploads (folders, zips, tars, broken ones, hostile names and archives), the gradebook (formulas kept as text), reruns
that skip what has not changed, and Ctrl-C."""
import contextlib
import csv
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from grader.classroom import cli, gradebook, intake, pool, records
from grader.patterns import KIT
from tests.grader.classroom import fakes
from tests.grader.fakes import SMALL_TOML, write_file
from tests.grader.classroom.test_intake import disk_bytes, make_tar, make_zip, nested_bomb

HOOKS = records.Hooks(build=fakes.build, build_harness=fakes.harness_ok, check=fakes.check)
LABS = ["01-first", "02-second"]  # SMALL_TOML: 10 + 20 points of groups and 30 of performance each


def read_gradebook(path) -> dict:
    with open(path, newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


class ClassRun(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.up, self.out = self.dir / "uploads", self.dir / "out"
        self.up.mkdir()
        self.config = write_file(self.dir, "cfg/labs.toml", SMALL_TOML)

    def student(self, name, texts: dict, shape="folder"):
        """An upload with a file per lab: {lab: text}."""
        files = {f"{lab}/reduce.cu": text for lab, text in texts.items()}
        if shape == "folder":
            for rel, text in files.items():
                write_file(self.up / name, f"labs/{rel}", text)
        elif shape == "zip":
            make_zip(self.up / f"{name}.zip", {f"{name}-main/{rel}": text for rel, text in files.items()})
        else:
            make_tar(self.up / f"{name}.tar.gz", files)

    def options(self, **kw):
        # the fake lab files are no CUDA: the simulator's check (grader/sim/sim_check.py) could not judge them, the
        # kit's fault, which the gradebook's notes name; SimulatorCheckApart and the check's own tests turn it on
        base = dict(out=str(self.out), config=str(self.config), hooks=HOOKS, timeout=20.0, seed=7,
                    simulator_check=False)
        return records.Options(**{**base, **kw})

    def grade(self, gpu_ids=("0", "1"), jobs=2, **kw) -> tuple:
        """(exit status, progress text, gradebook rows) of a class graded by grade_class: with gpu_ids the builds
        run in a process pool and the run-time tests on one worker per (pretend) GPU."""
        options = self.options(mode="gpu" if gpu_ids else "no-gpu", **kw)
        entries = records.list_students(self.up, self.out, "", lambda m: None)
        records.write_class_file(options, entries, self.up)
        stream = io.StringIO()
        with contextlib.redirect_stderr(io.StringIO()):
            status = pool.grade_class(entries, options, jobs, list(gpu_ids), log=lambda m: None, stream=stream)
        return status, stream.getvalue(), read_gradebook(self.out / records.GRADEBOOK)

    def folder(self, student: str) -> Path:
        """Where a student's outputs are: OUT/students/ID, apart from the gradebook and the grader's files."""
        return self.out / "students" / student

    def main(self, *argv, hooks=HOOKS) -> tuple:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = cli.main([*argv], hooks=hooks)
        return status, err.getvalue()

    def builds(self) -> list:
        log = self.out / "builds.log"
        return sorted(log.read_text().split()) if log.exists() else []


class WholeClass(ClassRun):
    def test_every_kind_of_student(self):
        os.environ["CLASS_TEST_GPU_LOG"] = str(self.dir / "gpus.log")
        self.addCleanup(os.environ.pop, "CLASS_TEST_GPU_LOG")
        self.student("alice", {"01-first": "GPU LOG", "02-second": "ok"})
        self.student("bob", {"01-first": "ok", "02-second": "SLOW GPU LOG"}, shape="zip")
        self.student("carol", {"01-first": "ok", "02-second": "WRONG"}, shape="tar")
        self.student("dave", {"01-first": "NO BUILD", "02-second": "FORBIDDEN"})
        (self.up / "erin.zip").write_text("this is not a zip")
        self.student("frank", {"01-first": "ok"})
        make_zip(self.up / "gina.zip", {"readme.txt": "nothing here"})
        status, progress, book = self.grade()
        self.assertEqual(status, records.EXIT_OK, progress)
        self.assertEqual(sorted(book), ["alice", "bob", "carol", "dave", "erin", "frank", "gina"])
        summary = {s: (r["total"], r["01-first"], r["02-second"], r["status"]) for s, r in book.items()}
        self.assertEqual(summary, {
            "alice": ("120", "60", "60", "graded"),
            "bob": ("105", "60", "45", "graded"),
            "carol": ("60", "60", "0", "graded"),
            "dave": ("0", "0", "0", "graded"),
            "erin": ("0", "0", "0", "unreadable"),
            "frank": ("60", "60", "0", "graded"),
            "gina": ("0", "0", "0", "no files")})
        self.assertEqual({r["max_score"] for r in book.values()}, {"120"})
        self.assertEqual(book["carol"]["notes"], "02-second: FAIL small, FAIL exact")
        self.assertEqual(book["dave"]["notes"], "01-first: NO BUILD; 02-second: FORBIDDEN")
        self.assertEqual(book["frank"]["notes"], "02-second: no file")
        self.assertIn("erin.zip is not a zip or tar archive", book["erin"]["notes"])
        self.assertEqual(book["bob"]["upload"], "bob.zip")
        pinned = (self.dir / "gpus.log").read_text().split()
        self.assertTrue(pinned and set(pinned) <= {"0", "1"}, pinned)  # each run saw its worker's one GPU
        self.assertRegex(progress, r"\[7/7\] \S+ +\d+/120")
        for student in book:
            results = json.loads((self.folder(student) / "results.json").read_text())
            self.assertEqual(results["score"], float(book[student]["total"]))
            self.assertTrue(all({"name", "score", "max_score"} <= t.keys() for t in results["tests"]))
        feedback = (self.folder("alice") / "feedback.txt").read_text()
        self.assertIn("Student: alice, upload alice", feedback)
        self.assertIn("01-first/reduce.cu <- labs/01-first/reduce.cu", feedback)
        self.assertIn("Grading alice  (seed 7", feedback)
        self.assertIn("Total 120 / 120", feedback)
        self.assertIn("could not be graded: erin.zip is not a zip", (self.folder("erin") / "feedback.txt").read_text())
        self.assertEqual(json.loads((self.folder("erin") / "results.json").read_text())["score"], 0)
        self.assertEqual(list((self.folder("alice") / "build" / "01-first").glob("*_lab")), [])  # programs removed
        self.assertEqual((self.folder("alice") / "submission" / "01-first" / "reduce.cu").read_text(), "GPU LOG")

    def test_students_share_a_gpu(self):
        """GRADERS_PER_GPU=2: two workers on the one GPU, under its lock (grader/run/gpu_lock.py); the same rows."""
        for name in ("ann", "ben", "cal"):
            self.student(name, {"01-first": "ok", "02-second": "ok"})
        status, progress, book = self.grade(gpu_ids=("0",), graders_per_gpu=2)
        self.assertEqual(status, records.EXIT_OK, progress)
        self.assertEqual({s: r["total"] for s, r in book.items()}, {"ann": "120", "ben": "120", "cal": "120"})
        self.assertTrue((self.out / "_locks" / "gpu-0.lock").is_file())

    def test_the_cpu_sides_stages_are_in_results_json(self):
        """The builds and static checks made on the CPU side are timed there: results.json's stage_seconds holds
        their seconds (make bench-grader's and the class's figures), not the GPU side's hooks' nothing."""
        self.student("ann", {"01-first": "ok", "02-second": "ok"})
        hooks = records.Hooks(build=fakes.slow_build, build_harness=fakes.harness_ok, check=fakes.check)
        status, progress, _ = self.grade(hooks=hooks, jobs=1)
        self.assertEqual(status, records.EXIT_OK, progress)
        stages = json.loads((self.folder("ann") / "results.json").read_text())["extra_data"]["stage_seconds"]
        for lab in ("01-first", "02-second"):
            self.assertGreaterEqual(stages[lab]["build"], 0.2, stages)
            self.assertIn("static checks", stages[lab])

    def test_hangs_and_crashes_get_a_row_and_the_class_goes_on(self):
        self.student("hangs", {"01-first": "HANG", "02-second": "ok"})
        self.student("crashes", {"01-first": "ok", "02-second": "CRASH"})
        self.student("fine", {"01-first": "ok", "02-second": "ok"})
        start = time.monotonic()
        status, _, book = self.grade(timeout=1.0)
        self.assertLess(time.monotonic() - start, 60)
        self.assertEqual(status, records.EXIT_OK)
        self.assertEqual(book["hangs"]["notes"], "01-first: TIMEOUT small")
        self.assertEqual(book["hangs"]["total"], "60")
        self.assertEqual(book["crashes"]["notes"], "02-second: CRASH small, CRASH exact")
        self.assertEqual(book["fine"]["total"], "120")
        table = (self.folder("hangs") / "feedback.txt").read_text()
        self.assertIn("timed out after 1 s", table)

    def test_without_gpus_one_pool_does_everything(self):
        self.student("alice", {"01-first": "ok", "02-second": "ok"})
        self.student("bob", {"01-first": "WRONG"}, shape="zip")
        status, _, book = self.grade(gpu_ids=())
        self.assertEqual(status, records.EXIT_OK)
        self.assertEqual((book["alice"]["total"], book["bob"]["total"]), ("120", "0"))

    def test_no_cuda_device_means_not_run_and_exit_77(self):
        self.student("alice", {"01-first": "ok", "02-second": "ok"})
        hooks = records.Hooks(build=fakes.build, build_harness=fakes.harness_ok, check=fakes.check,
                                run=fakes.no_device_run)
        status, _, book = self.grade(gpu_ids=(), hooks=hooks)
        self.assertEqual((status, book["alice"]["status"], book["alice"]["total"]),
                         (records.EXIT_NO_DEVICE, "no GPU", ""))  # not a grade: no 0 in any export
        self.assertIn("no CUDA device", (self.folder("alice") / "feedback.txt").read_text())
        # graded again where the run-time tests can run: a no-GPU grading is not final
        status, _, book = self.grade()
        self.assertEqual((status, book["alice"]["status"], book["alice"]["total"]), (0, "graded", "120"))

    def test_a_static_check_tool_error_is_a_kit_error_row(self):
        self.student("alice", {"01-first": "NO TOOLS", "02-second": "ok"})
        self.student("bob", {"01-first": "ok", "02-second": "ok"})
        status, _, book = self.grade()
        self.assertEqual(status, records.EXIT_UNGRADED)
        self.assertEqual(book["alice"]["status"], "kit error")
        self.assertIn("nm is not installed", book["alice"]["notes"])
        self.assertEqual(book["bob"]["status"], "graded")

    def test_a_dead_worker_is_replaced_and_its_student_tried_again(self):
        self.student("alice", {"01-first": "DIE", "02-second": "ok"})
        self.student("bob", {"01-first": "ok", "02-second": "ok"})
        hooks = records.Hooks(build=fakes.kill_worker_build, build_harness=fakes.harness_ok, check=fakes.check)
        status, _, book = self.grade(hooks=hooks, jobs=1)
        self.assertEqual(status, records.EXIT_OK)
        self.assertEqual((book["alice"]["total"], book["bob"]["total"]), ("120", "120"))

    def test_a_stopped_worker_goes_on(self):
        """A worker stopped with SIGSTOP is sent SIGCONT: the class finishes."""
        self.student("alice", {"01-first": "STOP", "02-second": "ok"})
        self.student("bob", {"01-first": "ok", "02-second": "ok"})
        hooks = records.Hooks(build=fakes.stopping_build, build_harness=fakes.harness_ok, check=fakes.check)
        start = time.monotonic()
        status, _, book = self.grade(hooks=hooks, jobs=1)
        self.assertLess(time.monotonic() - start, 60)
        self.assertEqual(status, records.EXIT_OK)
        self.assertEqual((book["alice"]["total"], book["bob"]["total"]), ("120", "120"))

    def test_a_grader_bug_on_one_student_is_an_error_row(self):
        self.student("alice", {"01-first": "ok", "02-second": "ok"})
        self.student("bob", {"01-first": "ok", "02-second": "ok"})
        hooks = records.Hooks(build=fakes.build_raising_for_bob, build_harness=fakes.harness_ok, check=fakes.check)
        with contextlib.redirect_stderr(io.StringIO()):
            status, _, book = self.grade(hooks=hooks)
        self.assertEqual(status, records.EXIT_UNGRADED)
        self.assertEqual(book["bob"]["status"], "error")
        self.assertIn("RuntimeError: a bug in the grader", book["bob"]["notes"])
        self.assertEqual(book["alice"]["status"], "graded")
        self.assertFalse((self.folder("bob") / records.RECORD).exists())


class Resume(ClassRun):
    def test_a_rerun_grades_only_what_changed(self):
        self.student("alice", {"01-first": "ok", "02-second": "ok"})
        self.student("bob", {"01-first": "ok", "02-second": "WRONG"}, shape="zip")
        self.student("carol", {"01-first": "ok"}, shape="tar")
        (self.up / "dave.zip").write_text("broken")
        self.grade()
        first = self.builds()
        self.assertEqual(first, ["alice/01-first", "alice/02-second", "bob/01-first", "bob/02-second",
                                 "carol/01-first"])
        status, progress, book = self.grade()
        self.assertEqual(status, records.EXIT_OK)
        self.assertEqual(self.builds(), first)  # nothing rebuilt
        self.assertEqual(progress.count("unchanged, not regraded"), 4, progress)
        self.assertEqual(book["bob"]["total"], "60")
        # bob hands in a fix (a new zip, same files but one): only bob is graded again
        (self.up / "bob.zip").unlink()
        self.student("bob", {"01-first": "ok", "02-second": "ok"}, shape="zip")
        status, progress, book = self.grade()
        self.assertEqual(self.builds(), sorted(first + ["bob/01-first", "bob/02-second"]))
        self.assertEqual(book["bob"]["total"], "120")
        self.assertEqual(progress.count("unchanged, not regraded"), 3)
        # the same zip made again (other timestamps, same files) is not a change
        (self.up / "bob.zip").unlink()
        time.sleep(1)
        self.student("bob", {"01-first": "ok", "02-second": "ok"}, shape="zip")
        self.grade()
        self.assertEqual(len(self.builds()), 7)

    def test_a_change_to_the_kit_or_the_options_grades_everyone_again(self):
        self.student("alice", {"01-first": "ok", "02-second": "ok"})
        self.grade()
        self.config.write_text(SMALL_TOML.replace("points = 10", "points = 11"))
        _, _, book = self.grade()
        self.assertEqual(len(self.builds()), 4)
        self.assertEqual(book["alice"]["total"], "122")
        self.grade(timeout=30.0)
        self.assertEqual(len(self.builds()), 6)

    def test_an_unfinished_student_is_graded_on_the_rerun(self):
        self.student("alice", {"01-first": "ok", "02-second": "ok"})
        self.student("bob", {"01-first": "ok", "02-second": "ok"})
        self.grade()
        (self.folder("bob") / records.RECORD).unlink()  # as if interrupted before bob's record was written
        self.grade()
        self.assertEqual(self.builds(), sorted(["alice/01-first", "alice/02-second"]
                                               + ["bob/01-first", "bob/02-second"] * 2))

    def interrupt(self, *signals) -> None:
        """Grades alice and bob (whose lab hangs) in a process of its own, sends signals to its process group while
        bob's harness runs, checks what was kept, then fixes bob and checks that a rerun skips alice."""
        self.student("alice", {"01-first": "ok", "02-second": "ok"})
        self.student("bob", {"01-first": "HANG"})
        script = ("import sys\n"
                  "from grader.classroom import cli, records\n"
                  "from tests.grader.classroom import fakes\n"
                  "hooks = records.Hooks(build=fakes.build, build_harness=fakes.harness_ok, check=fakes.check)\n"
                  "sys.exit(cli.main(sys.argv[1:], hooks=hooks))\n")
        argv = [sys.executable, "-c", script, "grade", str(self.up), "--out", str(self.out), "--config",
                str(self.config), "--jobs", "2", "--timeout", "600"]
        proc = subprocess.Popen(argv, cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not ((self.folder("bob") / "build" / "01-first" / "runs").is_dir()
                                                   and (self.folder("alice") / records.RECORD).is_file()):
            time.sleep(0.2)
        time.sleep(0.5)  # bob's harness runs (and hangs)
        for sig in signals:
            os.killpg(proc.pid, sig)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        self.assertEqual(proc.returncode, records.EXIT_INTERRUPTED, err)
        self.assertIn("interrupted", err)
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual((book["alice"]["status"], book["bob"]["status"]), ("graded", "not graded"))
        (self.up / "bob" / "labs" / "01-first" / "reduce.cu").write_text("fixed")
        again = subprocess.run(argv, cwd=KIT, capture_output=True, text=True, timeout=120)
        self.assertEqual(again.returncode, records.EXIT_OK, again.stderr)
        self.assertRegex(again.stderr, r"\] alice .*unchanged, not regraded")
        self.assertEqual(read_gradebook(self.out / records.GRADEBOOK)["bob"]["status"], "graded")

    def test_ctrl_c_stops_the_class_and_the_rerun_goes_on(self):
        self.interrupt(signal.SIGINT)  # Ctrl-C in a terminal reaches the whole process group

    def test_sigterm_twice_as_timeout_sends_it(self):
        self.interrupt(signal.SIGTERM, signal.SIGTERM)  # timeout(1): to the command, then to its group


class CommandLine(ClassRun):

    def test_static_only(self):
        self.student("alice", {"01-first": "ok", "02-second": "FORBIDDEN"})
        status, err = self.main("grade", str(self.up), "--out", str(self.out), "--config", str(self.config),
                                "--static-only", "--jobs", "1")
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertIn("static checks only", err)
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual((book["alice"]["status"], book["alice"]["notes"]), ("static only", "02-second: FORBIDDEN"))
        feedback = (self.folder("alice") / "feedback.txt").read_text()
        self.assertIn("this grading ran the static checks only (--static-only)", feedback)
        self.assertNotIn("no CUDA device", feedback)

    def test_a_broken_kit_stops_before_any_student(self):
        self.student("alice", {"01-first": "ok"})
        hooks = records.Hooks(build=fakes.build, build_harness=fakes.harness_broken, check=fakes.check)
        status, err = self.main("grade", str(self.up), "--out", str(self.out), "--config", str(self.config),
                                hooks=hooks)
        self.assertEqual(status, records.EXIT_BROKEN)
        self.assertIn("the reduce harness does not build", err)
        self.assertEqual(self.builds(), [])

    def test_bad_usage(self):
        status, err = self.main("grade", str(self.dir / "nowhere"), "--out", str(self.out))
        self.assertEqual(status, records.EXIT_BROKEN)
        self.assertIn("no such folder or archive", err)
        status, err = self.main("grade", str(self.up), "--out", str(self.out))
        self.assertEqual(status, records.EXIT_BROKEN)
        self.assertIn("no student uploads", err)
        self.student("alice", {"01-first": "ok"})
        status, err = self.main("grade", str(self.up), "--out", str(self.out), "--config", str(self.config),
                                "--lab", "09")
        self.assertEqual(status, records.EXIT_BROKEN)
        self.assertIn("--lab 09: no lab matches", err)

    def test_a_whole_export_archive_and_metadata(self):
        make_zip(self.dir / "export.zip", {
            "assignment_1_export/submission_metadata.yml":
                "submission_1:\n  :submitters:\n  - :name: Ada, Countess\n    :sid: '1'\n    :email: ada@x.edu\n",
            "assignment_1_export/submission_1/01-first/reduce.cu": "ok",
            "assignment_1_export/submission_2/02-second.cu": "ok"})
        status, err = self.main("grade", str(self.dir / "export.zip"), "--out", str(self.out), "--config",
                                str(self.config), "--jobs", "1")
        self.assertEqual(status, records.EXIT_OK, err)
        with open(self.out / records.GRADEBOOK, newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0], ["student", "name", "sid", "email", "total", "max_score", *LABS, "status", "notes",
                                   "upload", "01-first speedup", "01-first ms", "02-second speedup",
                                   "02-second ms"])
        self.assertEqual(rows[1][:6], ["submission_1", "Ada, Countess", "1", "ada@x.edu", "60", "120"])
        self.assertEqual(rows[1][-4:], ["100", "0.01", "", ""])  # measured where the benchmark ran (fakes: 100x)
        self.assertEqual(rows[2][:7], ["submission_2", "", "", "", "60", "120", "0"])

    def test_merge_reports_who_is_missing(self):
        self.student("alice", {"01-first": "ok", "02-second": "ok"})
        self.student("bob", {"01-first": "ok", "02-second": "ok"})
        self.grade()
        (self.folder("bob") / records.RECORD).unlink()
        (self.out / records.GRADEBOOK).unlink()
        status, err = self.main("merge", "--out", str(self.out))
        self.assertEqual(status, records.EXIT_UNGRADED)
        self.assertIn("1 graded, 1 not graded", err)
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual((book["alice"]["total"], book["bob"]["status"]), ("120", "not graded"))

    def test_slurm_task_grades_its_batch(self):
        for name in ("a", "b", "c"):
            self.student(name, {"01-first": "ok", "02-second": "ok"})
        status, err = self.main("slurm", str(self.up), "--out", str(self.out), "--config", str(self.config),
                                "--batch", "2", "--static-only", "--partition", "debug", "--sbatch=--qos=short")
        self.assertEqual(status, records.EXIT_OK, err)
        self.assertIn("3 students in 2 array tasks of 2", err)
        grade_script = (self.out / "_slurm" / "grade.sbatch").read_text()
        self.assertIn("#SBATCH --array=0-1\n", grade_script)
        self.assertIn("#SBATCH --partition=debug\n", grade_script)
        self.assertIn("#SBATCH --qos=short\n", grade_script)
        self.assertNotIn("--gres", grade_script)
        self.assertIn(f'task --out {self.out} --task "$SLURM_ARRAY_TASK_ID"', grade_script)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(self.main("task", "--out", str(self.out), "--task", "1")[0], records.EXIT_OK)
        self.assertEqual(self.builds(), ["c/01-first", "c/02-second"])
        self.assertIn("[1/1] c", out.getvalue())
        self.assertEqual(self.main("task", "--out", str(self.out), "--task", "2")[0], records.EXIT_BROKEN)
        self.assertEqual(self.main("merge", "--out", str(self.out))[0], records.EXIT_UNGRADED)
        with contextlib.redirect_stdout(io.StringIO()):
            self.main("task", "--out", str(self.out), "--task", "0")
        self.assertEqual(self.main("merge", "--out", str(self.out))[0], records.EXIT_OK)
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual({r["status"] for r in book.values()}, {"static only"})


class HostileUploads(ClassRun):
    """Upload names and contents chosen to break the class run: each is a student like any other, in a folder of
    its own under OUT/students/, and the class goes on."""

    NAMES = ["_slurm", "_slurm-student", "gradebook.csv.tmp", "gradebook.csv", "class.json", "students", "-rf",
             "x" * 200, "Zoë", "Zoe", "李雷", "alice"]

    def test_names_that_were_the_graders_own(self):
        for name in self.NAMES:
            self.student(name, {"01-first": "ok"})
        self.student("alice", {"01-first": "ok", "02-second": "ok"}, shape="zip")
        os.mkdir(os.fsencode(self.up) + b"/caf\xe9")  # a name that is not UTF-8
        write_file(self.up, os.fsdecode(b"caf\xe9/01-first.cu"), "ok")
        status, _, book = self.grade(gpu_ids=())
        self.assertEqual(status, records.EXIT_OK)
        self.assertEqual(len(book), len(self.NAMES) + 2)
        self.assertEqual(sorted(p.name for p in self.out.iterdir()),
                         ["builds.log", "canvas.csv", "class.json", "gradebook.csv", "gradescope.csv", "report.html",
                          "similarity.csv", "similarity.html", "students"])
        self.assertEqual(sorted(p.name for p in (self.out / "students").iterdir()), sorted(book))
        for student, row in book.items():
            self.assertRegex(student, r"^[A-Za-z0-9_][A-Za-z0-9._@+-]*$")
            self.assertEqual((row["status"], row["01-first"]), ("graded", "60"), student)
            self.assertTrue((self.folder(student) / "results.json").is_file(), student)
        self.assertEqual(book["alice-2"]["total"], "120")  # alice.zip: a student of its own, not merged into alice
        self.assertEqual(book["alice"]["total"], "60")
        self.assertTrue(book["alice-2"]["notes"].startswith("uploads alice, alice.zip would share the id alice: this "
                                                            "one (alice.zip) is alice-2"), book["alice-2"]["notes"])
        self.assertIn("this one (Zoë) is Zoe-2", book["Zoe-2"]["notes"])
        # a byte that is not UTF-8 is shown as its escape (grader/report/text.py), never written as it came
        self.assertEqual((book["rf"]["upload"], book["caf_"]["upload"]), ("'-rf", "caf\\xe9"))
        for reserved in ("_slurm", "gradebook.csv", "class.json", "students", "student", "x" * intake.MAX_ID):
            self.assertIn(reserved, book)

    def test_slurm_with_uploads_named_like_its_files(self):
        for name in ("_slurm", "_harness", "class.json", "gradebook.csv.tmp"):
            self.student(name, {"01-first": "ok", "02-second": "ok"})
        status, err = self.main("slurm", str(self.up), "--out", str(self.out), "--config", str(self.config),
                                "--static-only")
        self.assertEqual(status, records.EXIT_OK, err)
        with contextlib.redirect_stdout(io.StringIO()):
            for task in range(4):
                self.assertEqual(self.main("task", "--out", str(self.out), "--task", str(task))[0], records.EXIT_OK)
        self.assertEqual(self.main("merge", "--out", str(self.out))[0], records.EXIT_OK)
        book = read_gradebook(self.out / records.GRADEBOOK)
        self.assertEqual(sorted(book), ["_harness", "_slurm", "class.json", "gradebook.csv.tmp"])
        self.assertEqual({r["status"] for r in book.values()}, {"static only"})
        self.assertTrue((self.out / "_slurm" / "grade.sbatch").is_file())
        self.assertEqual(records.read_class_file(self.out)[1][0].student, "_harness")
        self.assertTrue((self.folder("_slurm") / "record.json").is_file())

    def test_formulas_in_names_stay_text(self):
        """Names, sids and emails from submission_metadata.yml that a spreadsheet would run as formulas are written
        with a leading '; the grader's own numbers stay numbers."""
        people = {"submission_1": ('=HYPERLINK("http://x","y")', "-1", "a@x.edu"),
                  "submission_2": ("+1+1", "2", "@SUM(A1)"), "submission_3": ("@SUM(A1)", "=1", "=cmd|' /C calc'!A0")}
        quoted = lambda text: "'" + text.replace("'", "''") + "'"  # noqa: E731 - YAML: @ cannot start a plain value
        yml = "".join(f"{k}:\n  :submitters:\n  - :name: {quoted(n)}\n    :sid: {quoted(i)}\n"
                      f"    :email: {quoted(e)}\n" for k, (n, i, e) in people.items())
        write_file(self.up, "submission_metadata.yml", yml)
        for k in people:
            self.student(k, {"01-first": "ok"})
        self.student("+x", {"01-first": "ok"}, shape="zip")
        self.grade(gpu_ids=())
        with open(self.out / records.GRADEBOOK, newline="") as f:
            rows = {r[0]: r for r in list(csv.reader(f))[1:]}
        self.assertEqual(rows["submission_1"][1:8], ["""'=HYPERLINK("http://x","y")""", "'-1", "a@x.edu", "60",
                                                     "120", "60", "0"])
        self.assertEqual(rows["submission_2"][1:4], ["'+1+1", "2", "'@SUM(A1)"])
        self.assertEqual(rows["submission_3"][1:4], ["'@SUM(A1)", "'=1", "'=cmd|' /C calc'!A0"])
        self.assertEqual((rows["x"][0], rows["x"][10]), ("x", "'+x.zip"))  # the upload column
        # controls stripped first (grader/report/text.py)
        for k, expected in {"=1": "'=1", "+": "'+", "-2": "'-2", "@": "'@", "\tx": " x", "\rx": "x",
                            "a=1": "a=1", "": "", " =1": " =1"}.items():
            self.assertEqual(gradebook.text_cell(k), expected)

    def test_a_nested_zip_bomb_stops_at_the_cap_and_the_class_goes_on(self):
        outer, _ = nested_bomb()
        (self.up / "bomber.zip").write_bytes(outer)
        self.student("alice", {"01-first": "ok", "02-second": "ok"})
        status, _, book = self.grade(gpu_ids=())
        self.assertEqual(status, records.EXIT_OK)
        self.assertEqual((book["alice"]["total"], book["bomber"]["01-first"]), ("120", "60"))
        self.assertIn("could not unpack inner.zip: the upload unpacks to more than 200 MiB", book["bomber"]["notes"])
        self.assertLess(disk_bytes(self.out), 5 << 20)


class Units(unittest.TestCase):
    def test_lab_notes_and_points(self):
        self.assertEqual(gradebook.points_cell(59.999999), "60.00")
        self.assertEqual(gradebook.points_cell(60), "60")

    def test_visible_gpus_honours_cuda_visible_devices(self):
        ids, _ = pool.visible_gpus()
        if not ids:
            self.skipTest("no GPU listed by nvidia-smi here")
        self.assertTrue(all(isinstance(x, str) for x in ids))

    def test_options_survive_the_class_file(self):
        options = records.Options(out="/x", lab="03", seed=3, limits=intake.Limits(max_members=5))
        again = records.Options.from_json(json.loads(json.dumps(options.to_json())))
        self.assertEqual(again, options)


if __name__ == "__main__":
    unittest.main()


class SimulatorCheckApart(ClassRun):
    """With GPUs, a student's labs are checked on the simulator by a CPU job of its own (student.simulate), beside
    the student's GPU turn (student.turn), which neither waits for it nor writes the student's folder: complete()
    lays the verdicts over the turn's rows, then writes results.json and the record."""

    def test_the_turn_leaves_the_verdicts_to_complete(self):
        from unittest import mock
        from grader.sim import sim_check
        from grader.classroom import student
        from grader.score.score import TestResult
        self.student("ann", {"01-first": "ok", "02-second": "NO BUILD"})
        options = self.options(mode="gpu", simulator_check=True)
        labs = student.labs_of(options)
        entry = records.list_students(self.up, self.out, "", lambda m: None)[0]
        asked = []

        def check_ahead(grader, grader_class, wanted, **kw):
            asked.append(([lab.name for lab in wanted], grader.seed))
            small = TestResult("01-first", "small", 10, 0.0, "FAIL", "n=1 uniform: wrong sum: got 4")
            return {lab.name: sim_check.Verdict("ran", [small]) for lab in wanted}

        with mock.patch.object(sim_check, "check_ahead", check_ahead):
            prepared = student.prepare(options, entry, records.context_key(options, labs), sim_apart=True)
            self.assertEqual((asked, prepared.seed, prepared.sim_apart), ([], 7, True))  # the check is not here
            verdicts = student.simulate(options, entry, prepared)
            self.assertEqual(asked, [(["01-first"], 7)])  # the lab that built, with the class's seed
            with mock.patch.object(sim_check.SimCheck, "start", side_effect=AssertionError("checked again")):
                done = student.turn(options, entry, prepared)
        self.assertFalse((self.folder("ann") / "results.json").exists())  # the turn writes nothing
        small = next(r for r in done.report.results if r.lab == "01-first" and r.name == "small")
        self.assertEqual(small.score, 10)  # the GPU's row, the simulator's verdict not laid over yet
        self.assertEqual(done.apart[0], ["01-first"])  # submitted to the check; 02-second, which scored 0, dropped
        self.assertIn("cannot lower", done.apart[1]["02-second"])
        row = student.complete(options, entry, prepared, done, verdicts)
        results = json.loads((self.folder("ann") / "results.json").read_text())
        small = next(t for t in results["tests"] if t["name"].startswith("01-first") and "small" in t["name"])
        self.assertEqual(small["score"], 0, small)
        self.assertIn("the simulator: n=1 uniform: wrong sum", small["output"])
        self.assertEqual(results["extra_data"]["simulator_check"]["labs"]["01-first"]["status"], "ran")
        # the exact group's 20: small lost on the simulator, so no performance
        self.assertEqual(row["labs"]["01-first"], 20)
        self.assertTrue((self.folder("ann") / records.RECORD).exists())

    def test_without_gpus_the_check_stays_beside_the_gpu_work(self):
        from unittest import mock
        from grader.sim import sim_check
        from grader.classroom import student
        self.student("ann", {"01-first": "ok"})
        options = self.options(mode="gpu", simulator_check=True)
        entry = records.list_students(self.up, self.out, "", lambda m: None)[0]
        with mock.patch.object(sim_check, "check_ahead", side_effect=AssertionError("not here")):
            prepared = student.prepare(options, entry, records.context_key(options, student.labs_of(options)))
        self.assertFalse(prepared.sim_apart)  # the GPU side's Grader checks them beside its work
