"""make dist: the student release holds what students need, nothing of solutions/, and works unpacked on its own
(make -n grade, make check -n, the tools start, a lab builds with nvcc); what it lacks says so."""
import re
import tarfile
import tempfile
import unittest
from pathlib import Path

from tests.tools.instructor.support import (KIT, SM, have_nvcc, leaks_in, run, shared_harness_build, solution_secrets,
                                            tracked)
from tools.instructor.variants.wrong import mutated_text
from tools.instructor import dist


TOP = "parallel-patterns-lab"


class Rules(unittest.TestCase):
    """The decisions of tools/instructor/dist.py, without building an archive."""

    def test_every_tracked_file_is_in_or_out(self):
        kept, left = dist.classify(dist.tracked_files())
        self.assertIn("grader/labs.toml", kept)
        self.assertTrue(all(p.startswith(("solutions/", "tests/", "tools/", ".ci/", "course/")) for p in left), left)
        self.assertIn("sim/runtime.c", kept)  # the simulator ships; only its own tests stay behind

    def test_the_course_folder_goes_to_gradescope_never_to_students(self):
        kept, left = dist.classify({"README.md": False, "course/labs.toml": False, "course/datasets/r/x.raw": False})
        self.assertEqual(kept, ["README.md"])
        self.assertIn("hidden tests", left["course/labs.toml"])
        with tempfile.TemporaryDirectory() as tmp:
            kit = Path(tmp)
            (kit / "course" / "datasets" / "reduce" / "a").mkdir(parents=True)
            (kit / "course" / "labs.toml").write_text("[labs]\n")
            (kit / "course" / "datasets" / "reduce" / "a" / "input.raw").write_bytes(b"\0\1")
            (kit / "course" / "link").symlink_to("/etc/passwd")
            self.assertEqual(sorted(dist.course_files(kit)), ["course/datasets/reduce/a/input.raw",
                                                              "course/labs.toml"])  # links left out

    def test_a_new_file_is_a_decision(self):
        with self.assertRaisesRegex(dist.DistError, r"tools/new_tool\.py.*RELEASE or LEAVE_OUT"):
            dist.classify({"README.md": False, "tools/new_tool.py": False})

    def test_an_untracked_file_where_the_release_takes_files_stops_the_build(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            run(["git", "init", "-q"], repo)
            (repo / "grader").mkdir()
            (repo / "grader" / "grade.py").write_text("from grader import helper\n")
            (repo / "grader" / "helper.py").write_text("")
            (repo / "notes.txt").write_text("")
            run(["git", "add", "grader/grade.py"], repo)
            with self.assertRaisesRegex(dist.DistError, r"untracked files .*: grader/helper\.py\. .*git add"):
                dist.stray_files(dist.RELEASE, kit=repo)
            run(["git", "add", "grader/helper.py"], repo)
            dist.stray_files(dist.RELEASE, kit=repo)  # notes.txt is in no release folder

    def test_a_solution_file_is_refused(self):
        # Labs 01-04 are left out here: their answers' distinctive lines are all handed out elsewhere (the harness's
        # baseline is lab 01's kernel; later skeletons start from earlier answers), so only labs 05-08 can leak.
        texts = {rel: (KIT / rel).read_bytes()
                 for rel in ("solutions/05-coarsened/reduce.cu", "solutions/08-single-pass/scan.cu")}
        texts["the no-barrier wrong submission"] = mutated_text("no-barrier").encode()
        for rel, text in texts.items():
            with self.subTest(rel=rel), self.assertRaisesRegex(dist.DistError, "code of the reference solutions"):
                dist.check_leaks({"handouts/notes.md": text})

    def test_a_renamed_target_stops_the_build(self):
        text = (KIT / "Makefile").read_text().replace("\nskeletons:", "\nderive-labs:")
        with self.assertRaisesRegex(dist.DistError, "no rule for skeletons"):
            dist.release_makefile(text)

    def test_a_readme_naming_solutions_stops_the_build(self):
        stale = "Compare with solutions/03-sequential.\n\n## Instructors"
        text = (KIT / "README.md").read_text().replace("## Instructors", stale)
        with self.assertRaisesRegex(dist.DistError, "solutions/03-sequential"):
            dist.release_readme(text, "abc1234")

    def test_a_recipe_running_a_missing_file_is_found(self):
        makefile = "calibrate:\n\t$(PYTHON) -m tools.instructor.calibrate --out grader/labs.toml\n"
        self.assertEqual([m.split(" ")[0] for m in dist.missing_in_recipes(makefile, ["grader/labs.toml"])],
                         ["tools/instructor/calibrate.py"])


class Release(unittest.TestCase):
    """make dist, unpacked into a temporary folder."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="dist-")
        cls.tarball = Path(cls.tmp.name) / f"{TOP}.tar.gz"
        made = run(["make", "-s", "dist", f"DIST={cls.tarball}"], KIT)
        if made.returncode != 0:
            raise AssertionError(f"make dist failed:\n{made.stdout}{made.stderr}")
        with tarfile.open(cls.tarball) as tar:
            cls.names = tar.getnames()
            tar.extractall(cls.tmp.name, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        cls.root = Path(cls.tmp.name) / TOP
        cls.files = sorted(str(p.relative_to(cls.root)) for p in cls.root.rglob("*") if p.is_file())

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def make(self, *args, **env):
        return run(["make", "--no-print-directory", *args], self.root, env=env)

    def test_one_top_folder_of_tracked_files(self):
        self.assertTrue(all(n == TOP or n.startswith(TOP + "/") for n in self.names))
        from tools.student import classroom
        made = {classroom.MANIFEST, classroom.WORKFLOW}  # written by make dist (dist.classroom_files), not tracked
        self.assertLessEqual(set(self.files) - made, set(tracked()))
        self.assertFalse([f for f in self.files if "/build/" in f or "__pycache__" in f or f.endswith(".pyc")])

    def test_nothing_of_the_solutions(self):
        out = [f for f in self.files if f.startswith(("solutions/", "tools/instructor/variants/", "tests/grader/",
                                                      "tests/gpu/", "tests/tools/instructor/", ".ci/"))
               or f in ("tools/author/make_skeletons.py", "tools/instructor/dist.py")
               or f.startswith("tools/instructor/gradescope/")]
        self.assertEqual(out, [])

    def test_no_solution_code_in_any_file(self):
        secrets, given = solution_secrets()
        self.assertGreaterEqual(len([s for s in secrets if s not in given]), 20, "too few lines to test with")
        self.assertEqual(leaks_in(self.root, secrets, given), [])

    def test_what_students_need(self):
        for rel in tracked():
            if rel.startswith(("labs/", "harness/", "patterns/", "mk/", "grader/", "datasets/", "handouts/", "docs/",
                               "tests/harness/")):
                self.assertIn(rel, self.files)
        for rel in ("README.md", "Makefile", "tests/run.py", "tools/student/check.py", "tools/student/nsight.py",
                    "grader/patterns.py", "tools/author/figures.py", "tools/author/render_handouts.py",
                    "tools/author/gen_datasets.c", "tools/author/gen_datasets.h", "tools/author/Makefile", "mk/harness.mk",
                    "mk/checker.mk", "tools/student/bench.py", "tools/setup.sh",
                    "requirements.txt"):
            self.assertIn(rel, self.files)
        # the harness's five folders: the student's headers, the checker, the device program, the runner, the wire format
        skeletons = dist.skeletons()
        for rel in ("grader/labs.toml", "labs/03-sequential/reduce.cu", "patterns/reduce/include/reduce.h",
                    "patterns/reduce/check.c", "harness/device/main.cu", "harness/runner/main.cpp",
                    "harness/common/protocol.h"):
            want = skeletons[rel] if rel in skeletons else (KIT / rel).read_bytes()  # labs/: derived, not read
            self.assertEqual((self.root / rel).read_bytes(), want, rel)

    def test_reproducible(self):
        again = Path(self.tmp.name) / "again" / self.tarball.name
        run(["python3", "-m", "tools.instructor.dist", "release", "--out", str(again)], KIT)
        self.assertEqual(again.read_bytes(), self.tarball.read_bytes())

    def test_make_n_grade_and_check(self):
        grade = self.make("-n", "grade")
        self.assertEqual(grade.returncode, 0, grade.stderr)
        self.assertIn("-m grader --submission labs", grade.stdout)
        check = self.make("check", "-n", "LAB=03")
        self.assertEqual(check.returncode, 0, check.stderr)
        self.assertIn("-m tools.student.check --submission labs --lab 03", check.stdout)
        test = self.make("-n", "test")
        self.assertIn("tests/run.py --only harness,build", test.stdout)

    def test_every_command_in_help_runs(self):
        helped = self.make("help")
        self.assertEqual(helped.returncode, 0, helped.stderr)
        self.assertNotIn("solutions", helped.stdout)
        targets = re.findall(r"^make ([\w-]+)", helped.stdout, re.M)
        self.assertIn("grade", targets)
        for target in targets:
            with self.subTest(target=target):
                done = self.make("-n", target, "LAB=03")
                self.assertEqual(done.returncode, 0, done.stderr)

    def test_what_needs_the_solutions_says_so(self):
        for target in ("skeletons", "test-drift", "test-grader", "test-gpu", "dist", "gradescope"):
            with self.subTest(target=target):
                done = self.make("-n", target)
                self.assertNotEqual(done.returncode, 0)
                self.assertIn(f"make {target} is not in the student release", done.stderr)
        for args in (["grade", "SUBMISSION=solutions"], ["check", "LAB=03", "SUBMISSION=solutions"]):
            with self.subTest(args=args):
                done = self.make("-n", *args)
                self.assertNotEqual(done.returncode, 0)
                self.assertIn("student release of the kit, which has no reference solutions", done.stderr)
        figures = self.make("-n", "figures", "LADDER=build/bench/ladder.md")
        self.assertIn("student release does not have", figures.stderr)
        # make bench ships (a student's kernel on the ladder, make bench LAB=NN); the whole reference ladder does not
        ladder = run(["python3", "-m", "tools.student.bench"], self.root)
        self.assertEqual(ladder.returncode, 2, ladder.stderr)
        self.assertIn("make bench LAB=03", ladder.stderr)

    def test_readme_says_what_this_is(self):
        readme = (self.root / "README.md").read_text()
        self.assertIn("## This release", readme)
        self.assertNotIn("## Instructors", readme)
        for link in re.findall(r"\]\(([^)#]+)\)", readme):
            if not link.startswith("http"):
                self.assertTrue((self.root / link).exists(), link)

    def test_tools_start(self):
        for tool in (["-m", "grader"], ["-m", "tools.student.check"], ["-m", "tools.student.nsight"],
                     ["-m", "tools.author.figures"], ["-m", "tools.author.render_handouts"], ["tests/run.py"]):
            with self.subTest(tool=" ".join(tool)):
                done = run(["python3", *tool, "--help"], self.root)
                self.assertEqual(done.returncode, 0, done.stderr)

    @unittest.skipUnless(have_nvcc(), "nvcc not found: the release's labs are not compiled (install the CUDA toolkit)")
    def test_a_lab_builds_with_nvcc(self):
        built = self.make("-C", "labs/03-sequential", "-j2", f"SM={SM}", HARNESS_BUILD=str(shared_harness_build()))
        self.assertEqual(built.returncode, 0, built.stdout + built.stderr)
        self.assertTrue((self.root / "labs/03-sequential/build/reduce_lab").is_file())
        self.assertTrue((self.root / "labs/03-sequential/build/reduce_runner").is_file())
        self.assertTrue((self.root / "build/harness/checker/ppl_checker").is_file())


if __name__ == "__main__":
    unittest.main()
