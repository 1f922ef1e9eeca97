"""Every path to a grade works on a fresh machine: each person's first commands, exactly as README.md gives them, in a
minimal Debian 12 root with the host's CUDA toolkit and no GPU (tests/fresh/machine.py), on a clone of the kit's
committed HEAD. The kit's own set-up (tools/setup.sh, Gradescope's setup.sh) installs everything else from the
network, as on a new machine.

- a student: `make sim` in labs/03-sequential as the first command (the blank lab builds and runs on the simulator,
  its wrong answers reported), then, with the reference solutions copied into labs/, `make grade SIM=1` at the top:
  the simulator's full correctness (exit status 0), no kit error, every sandbox layer in force (the grader's nested
  bubblewrap works); on a root without libzstd-dev and on one with it;
- Gradescope without a GPU: `make gradescope LAB=03`'s zip unpacked into a Gradescope-shaped /autograder, its
  setup.sh (the toolkit already there, so NVIDIA's repository is skipped), then run_autograder on the reference
  solution (every point the simulator can give), the blank skeleton and a known-wrong lab (fewer, with the failed
  rows), none of them told its file does not compile;
- GitHub Classroom without a GPU: the student release's workflow, its checks and its grade step run as written;
- an instructor: `make setup-test` (make test's set-up step) and one suite, `make test-harness`.

Each test prints the person's commands and wall times (the issue's closing note quotes them). Slow: on 2 shared
cores here a student took 194-216 s, Gradescope 62 s, the instructor 42 s, apt-get, pip and the first builds
included; the root tarballs are cached in build/fresh/roots/ (about 30 s each to make), each machine's output is
kept in build/fresh/NAME.log. Skipped, saying why, where mmdebstrap,
bubblewrap, root or user namespaces are missing (tests/fresh/machine.py unavailable()).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

from grader.patterns import KIT
from tests.fresh.machine import FreshMachine, unavailable
from tools.instructor.variants.wrong import mutated_text

WHY_NOT = unavailable()
BASE = ["ca-certificates", "git", "make"]  # a machine on which someone cloned the kit: git, and GNU make for README
COPY_SOLUTIONS = 'for d in solutions/[0-9][0-9]-*/; do cp "$d"*.cu "labs/${d#solutions/}"; done'
WRONG = "drop-one"  # tools/instructor/variants/mutations.toml: lab 03's load bound off by one


def tail(output: str, lines: int = 60) -> str:
    return "\n".join(output.splitlines()[-lines:])


@unittest.skipIf(WHY_NOT, WHY_NOT)
class FreshMachines(unittest.TestCase):
    def machine(self, name: str, packages: list) -> FreshMachine:
        made = FreshMachine(name, packages)
        self.addCleanup(made.remove)
        return made

    def timed(self, machine, person: str, steps: list) -> list:
        """Runs each (cwd, command) of steps in machine; prints and returns [(command, status, output, seconds)]."""
        done = []
        for cwd, command in steps:
            status, output, seconds = machine.run(command, cwd=cwd)
            done.append((command, status, output, seconds))
            print(f"fresh: {person}: cd {cwd} && {command}: exit {status}, {seconds:.0f} s", flush=True)
        total = sum(d[3] for d in done)
        print(f"fresh: {person}: {total:.0f} s in all (log: {machine.log.relative_to(KIT)})", flush=True)
        return done

    def student(self, name: str, packages: list, person: str):
        machine = self.machine(name, packages)
        kit = machine.clone_kit()
        (_, sim_status, sim, _), (_, grade_status, grade, _) = self.timed(machine, person, [
            (f"{kit}/labs/03-sequential", "make sim"),
            (kit, f"{COPY_SOLUTIONS} && make grade SIM=1"),
        ])
        # the blank lab ran on the simulator and gave wrong answers: sim.py's status 1, which make turns into 2
        self.assertRegex(sim, r"simulated in [\d.]+ s \(exit status 1\)", tail(sim))
        self.assertEqual(sim_status, 2, tail(sim))
        self.assertEqual(grade_status, 0, tail(grade))  # the simulator's full marks
        data = json.loads(machine.path(f"{kit}/build/grade/results.json").read_text())
        self.assertEqual(data["extra_data"]["kit_error"], "")
        self.assertEqual({lab: v["missing"] for lab, v in data["extra_data"]["sandbox"].items() if v["missing"]}, {})
        self.assertFalse([t["name"] for t in data["tests"] if "not inspected" in t.get("output", "")])

    def test_student_without_libzstd(self):
        self.student("student", BASE, "student, no GPU, no libzstd-dev")

    def test_student_with_libzstd(self):
        self.student("student-zstd", [*BASE, "libzstd-dev"], "student, no GPU, libzstd-dev")

    def test_gradescope_without_a_gpu(self):
        person = "Gradescope, no GPU"
        machine = self.machine("gradescope", BASE)
        source = machine.path("/autograder/source")
        with tempfile.TemporaryDirectory(prefix="ppl-fresh-zip-") as tmp:
            clone = Path(tmp) / "kit"
            subprocess.run(["git", "clone", "--quiet", str(KIT), str(clone)], check=True, timeout=600)
            made = subprocess.run(["make", "-s", "gradescope", "LAB=03", f"PYTHON={sys.executable}"], cwd=clone,
                                  capture_output=True, text=True, timeout=600)
            self.assertEqual(made.returncode, 0, made.stdout + made.stderr)
            with zipfile.ZipFile(clone / "build" / "gradescope" / "autograder.zip") as zip_file:
                zip_file.extractall(source)
                for info in zip_file.infolist():  # zipfile keeps no modes: setup.sh and run_autograder run
                    if info.external_attr >> 16:
                        (source / info.filename).chmod((info.external_attr >> 16) & 0o777)
            texts = {"reference": (clone / "solutions" / "03-sequential" / "reduce.cu").read_text(),
                     "blank": (clone / "labs" / "03-sequential" / "reduce.cu").read_text(),
                     WRONG: mutated_text(WRONG, clone / "solutions")}
        for folder in ("submission", "results"):
            machine.path(f"/autograder/{folder}").mkdir()
        shutil.copy2(source / "run_autograder", machine.path("/autograder/run_autograder"))
        (_, setup_status, setup, _), = self.timed(machine, person, [("/autograder/source", "bash ./setup.sh")])
        self.assertEqual(setup_status, 0, tail(setup))
        self.assertNotIn("installing CUDA", setup)  # the toolkit was there
        results = {}
        for name, text in texts.items():
            submission = machine.path("/autograder/submission")
            shutil.rmtree(submission)
            submission.mkdir()
            (submission / "reduce.cu").write_text(text)
            self.timed(machine, f"{person}, {name}", [("/autograder", "/autograder/run_autograder")])
            results[name] = json.loads(machine.path("/autograder/results/results.json").read_text())
        self.assert_gradescope(results)

    def assert_gradescope(self, results: dict):
        reference = results["reference"]
        self.assertGreater(reference["score"], 0, reference["output"])
        for test in reference["tests"]:
            self.assertEqual(test["score"], test["max_score"], f"{test['name']}: {test.get('output', '')}")
            self.assertNotIn("not inspected", test.get("output", ""), test["name"])
        for name, data in results.items():
            with self.subTest(submission=name):
                text = data["output"] + "".join(t.get("output", "") for t in data["tests"])
                self.assertNotIn("does not compile", text)
                self.assertNotIn("kit is broken", text)
                if name != "reference":
                    self.assertLess(data["score"], reference["score"])
                    self.assertTrue([t for t in data["tests"] if t["score"] < t["max_score"]], data["output"])

    def test_github_classroom(self):
        """The student release's GitHub Classroom workflow, its two grading steps' shell lines run as written (the
        pin's checks, then the pinned copy graded with python3 -I) in a root with what GitHub's runner has (python3,
        git, make, the toolkit): lab 03 holds the reference solution, the other labs their blanks. The reporter's
        result: lab 03's tests all pass, the maximum counts every lab's simulator tests."""
        import base64
        import yaml
        from tools.student import classroom
        person = "GitHub Classroom, no GPU"
        machine = self.machine("classroom", [*BASE, "python3"])
        repo = machine.path("/home/runner/work/lab/lab")
        with tempfile.TemporaryDirectory(prefix="ppl-fresh-release-") as tmp:
            clone = Path(tmp) / "kit"
            subprocess.run(["git", "clone", "--quiet", str(KIT), str(clone)], check=True, timeout=600)
            made = subprocess.run(["make", "-s", "dist", f"PYTHON={sys.executable}"], cwd=clone, capture_output=True,
                                  text=True, timeout=600)
            self.assertEqual(made.returncode, 0, made.stdout + made.stderr)
            repo.mkdir(parents=True)
            subprocess.run(["tar", "-xzf", str(clone / "build" / "dist" / "parallel-patterns-lab.tar.gz"),
                            "--strip-components=1", "-C", str(repo)], check=True)
            shutil.copy2(clone / "solutions" / "03-sequential" / "reduce.cu", repo / "labs" / "03-sequential")
        flow = yaml.safe_load((repo / classroom.WORKFLOW).read_text())
        steps = flow["jobs"]["run-autograding-tests"]["steps"]
        check = next(s["run"] for s in steps if "sha256sum" in s.get("run", "") and s.get("id") != classroom.RUNNER)
        grade = next(s["run"] for s in steps if s.get("id") == classroom.RUNNER)
        env = (f"export PPL_GRADER_SHA256={flow['env']['PPL_GRADER_SHA256']} RUNNER_TEMP=/tmp/runner "
               f"GITHUB_WORKSPACE=/home/runner/work/lab/lab GITHUB_OUTPUT=/tmp/github-output; mkdir -p /tmp/runner; ")
        (_, check_status, checked, _), (_, grade_status, graded, _) = self.timed(
            machine, person, [("/home/runner/work/lab/lab", env + check), ("/home/runner/work/lab/lab", env + grade)])
        self.assertEqual(check_status, 0, tail(checked))
        self.assertEqual(grade_status, 0, tail(graded))
        line = next(ln for ln in machine.path("/tmp/github-output").read_text().splitlines()
                    if ln.startswith("result="))
        result = json.loads(base64.b64decode(line.split("=", 1)[1]))
        mine = [t for t in result["tests"] if t["name"].startswith("03-sequential")]
        self.assertTrue(mine, result)
        self.assertEqual([t["name"] for t in mine if t["status"] != "pass"], [], graded[-3000:])
        self.assertEqual(result["status"], "fail")  # the blank labs
        self.assertGreater(result["max_score"], sum(t["score"] for t in result["tests"]))

    def test_instructor(self):
        machine = self.machine("instructor", BASE)
        kit = machine.clone_kit()
        (_, setup_status, setup, _), (_, suite_status, suite, _) = self.timed(machine, "instructor", [
            (kit, "make setup-test"),
            (kit, "make test-harness"),
        ])
        self.assertEqual(setup_status, 0, tail(setup))
        self.assertEqual(suite_status, 0, tail(suite))
        self.assertRegex(suite, r"tests: [1-9]\d* passed, 0 failed")


if __name__ == "__main__":
    unittest.main()
