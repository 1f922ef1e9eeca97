"""The course GPU's results back to Gradescope (grader/classroom/roundtrip.py, issue 21 item 5), end to end on
Gradescope's export format: a synthetic "Export Submissions" folder (submission_NNN folders, one a group, and
submission_metadata.yml) graded by grade-class (the fake builds and harness programs of fakes.py standing for the
GPU), bundled as `make gradescope CLASS=OUT` bundles it, then each submission run through the autograder's own
entry point (python3 -m grader.gradescope, from a copy of the kit's grader/ as the zip ships it) as Gradescope's
"Regrade All Submissions" runs it: the class's results come back, performance points and feedback included; a
submission the export did not hold is not answered from them. Also: course/ is made unreadable to other users."""
import json
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

from grader.classroom import records, roundtrip
from grader.patterns import KIT
from tests.grader.classroom.test_classroom import ClassRun
from tests.grader.classroom.test_exports import export_metadata
from tests.grader.fakes import write_file

LAB = "03-sequential"


class RoundTrip(ClassRun):
    def graded_export(self):
        write_file(self.up, "submission_metadata.yml", export_metadata({
            "submission_1001": [("Ada Lovelace", "101", "ada@x.edu")],
            "submission_1002": [("Ben B", "102", "ben@x.edu"), ("Cy D", "103", "cy@x.edu")]}))
        write_file(self.up, f"submission_1001/{LAB}.cu", "ok")
        write_file(self.up, f"submission_1002/labs/{LAB}/reduce.cu", "SLOW")
        status, _, _ = self.grade(gpu_ids=("0",), jobs=1, lab="03", config=str(KIT / "grader" / "labs.toml"),
                                  similarity=False)  # the fake programs stand for the course's GPU
        return status

    def autograder(self, bundle: dict) -> Path:
        """A Gradescope-shaped autograder source: the kit's grader/ and patterns/ (as the zip ships them) and the
        bundle."""
        source = self.dir / "autograder" / "source"
        for folder in ("grader", "patterns"):
            shutil.copytree(KIT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
        for path, data in bundle.items():
            write_file(source, path, data.decode())
        return source

    def submit(self, source: Path, number: int, files: dict) -> dict:
        """Runs the autograder on one submission as Gradescope does; its results.json."""
        root = self.dir / f"run{number}"
        shutil.rmtree(root, ignore_errors=True)
        for rel, text in files.items():
            write_file(root / "submission", rel, text)
        write_file(root, "submission_metadata.json", json.dumps({"id": number, "created_at":
                                                                 "2026-11-20T10:00:00-05:00", "users": []}))
        env = {**os.environ, "PYTHONPATH": str(source), "AUTOGRADE_SIMULATOR": "1"}
        proc = subprocess.run([sys.executable, "-m", "grader.gradescope", "--root", str(root), "--lab", "03"],
                              cwd=source, env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        return json.loads((root / "results" / "results.json").read_text())

    def test_the_course_gpu_results_reach_gradescope(self):
        self.assertEqual(self.graded_export(), records.EXIT_OK)
        bundle = roundtrip.bundle(self.out)
        self.assertEqual(sorted(bundle), [f"{roundtrip.FOLDER}/1001.json", f"{roundtrip.FOLDER}/1002.json"])
        source = self.autograder(bundle)
        class_results = json.loads((self.folder("submission_1002") / "results.json").read_text())
        got = self.submit(source, 1002, {f"labs/{LAB}/reduce.cu": "SLOW"})
        self.assertEqual(got["score"], class_results["score"])
        perf = next(t for t in got["tests"] if t["name"].endswith(": performance"))
        self.assertGreater(perf["score"], 0)  # the points the simulator could only promise
        self.assertIn("Graded on the course's GPU", got["output"])
        first = self.submit(source, 1001, {f"{LAB}.cu": "ok"})
        self.assertEqual(first["score"], json.loads((self.folder("submission_1001") / "results.json").read_text())[
            "score"])
        later = self.submit(source, 1003, {f"{LAB}.cu": "NO BUILD"})  # after the export: not answered from it
        self.assertNotIn("Graded on the course's GPU", later["output"])
        self.assertEqual(oct((source / "course").stat().st_mode & 0o777), oct(0o700))
        self.assertEqual(oct((source / roundtrip.FOLDER / "1002.json").stat().st_mode & 0o777), oct(0o600))


class Unit(ClassRun):
    def test_only_the_graded_files_are_answered(self):
        from grader.config import load_config
        labs = load_config().select("03")
        submission = write_file(self.dir, f"sub/{LAB}/reduce.cu", "ok").parent.parent
        from grader.classroom.intake import files_hash
        source = self.dir / "source"
        write_file(source, f"{roundtrip.FOLDER}/5.json", json.dumps(
            {"files": files_hash(submission, labs), "results": {"score": 77, "output": "x", "tests": []}}))
        root = write_file(self.dir, "root/submission_metadata.json", json.dumps({"id": 5})).parent
        config = load_config()
        self.assertEqual(roundtrip.recorded(source, root, submission, labs, config)["score"], 77)
        (submission / LAB / "reduce.cu").write_text("changed after the export")
        self.assertIsNone(roundtrip.recorded(source, root, submission, labs, config))
        (root / "submission_metadata.json").write_text(json.dumps({"id": 6}))
        self.assertIsNone(roundtrip.recorded(source, root, submission, labs, config))

    def test_a_class_without_gradescope_ids_cannot_be_bundled(self):
        with self.assertRaisesRegex(roundtrip.RoundTripError, "no class graded here"):
            roundtrip.bundle(self.out)

    @unittest.skipUnless(os.geteuid() == 0, "needs root, to read as the user nobody as the student's code runs")
    def test_protected_course_data_is_unreadable_to_nobody(self):
        secret = write_file(self.dir, "course/datasets/reduce/hidden/input.raw", "hidden")
        os.chmod(self.dir, 0o755)
        roundtrip.protect(self.dir / "course")
        probe = ("import os, sys; os.setgid(65534); os.setuid(65534)\n"
                 "try:\n    open(sys.argv[1]).read(); print('read')\nexcept PermissionError:\n    print('denied')\n")
        out = subprocess.run([sys.executable, "-c", probe, str(secret)], capture_output=True, text=True).stdout
        self.assertEqual(out.strip(), "denied")


if __name__ == "__main__":
    unittest.main()
