"""What the tests of make dist and make gradescope share: the kit's paths, a make runner, an independent scan for
solution code, a check of Gradescope's results.json format, and one harness build shared by every test that
compiles (HARNESS_BUILD, which mk/lab.mk takes from the environment)."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from grader.patterns import KIT
from tools.author.make_skeletons import lab_files

SM = "75"  # what every test builds for: the same objects whether or not this machine has a GPU

_harness = None


def shared_harness_build() -> Path:
    """A folder for the harness objects, made once per test run and removed when it ends."""
    global _harness
    if _harness is None:
        _harness = tempfile.TemporaryDirectory(prefix="dist-harness-")
    return Path(_harness.name)


def have_nvcc() -> bool:
    return shutil.which(os.environ.get("NVCC", "nvcc")) is not None


def have_gpu() -> bool:
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0 if shutil.which(
        "nvidia-smi") else False


def run(argv, cwd, env=None, timeout=600) -> subprocess.CompletedProcess:
    """argv run in cwd, stdout and stderr captured as text; env adds to (or, with None values, removes from) the
    environment."""
    full = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    return subprocess.run(argv, cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout)


def tracked(kit=KIT) -> list:
    return subprocess.run(["git", "ls-files"], cwd=kit, capture_output=True, text=True, check=True).stdout.split()


def solution_secrets(kit=KIT) -> tuple:
    """({stripped line: origin}, given): every line of a solution region 25 characters or longer (stripped) that its
    lab's blank file does not hold, and the set of lines the kit hands to students anyway (any skeleton or file of
    harness/: later skeletons start from earlier answers, and the harness's baseline is lab 01's kernel). The blank
    files are the skeletons derived from solutions/, not labs/, which may hold a student's answers."""
    skeletons = {f"labs/{rel.as_posix()}": text for rel, text in lab_files(kit / "solutions")}
    secrets = {}
    for path in sorted(p for p in (kit / "solutions").glob("[0-9][0-9]-*/*") if p.is_file()):  # not a lab's build/
        blank = skeletons.get(f"labs/{path.relative_to(kit / 'solutions').as_posix()}", "")
        blank_lines = {ln.strip() for ln in blank.splitlines()}
        inside = False
        for line in path.read_text().splitlines():
            if "@@ BEGIN SOLUTION" in line:
                inside = True
            elif "@@ END SOLUTION" in line:
                inside = False
            elif inside and len(line.strip()) >= 25 and line.strip() not in blank_lines:
                secrets.setdefault(line.strip(), str(path.relative_to(kit)))
    given = set()
    for rel in tracked(kit):
        if rel.startswith(("labs/", "harness/", "patterns/")):
            text = skeletons[rel] if rel in skeletons else (kit / rel).read_text()
            given.update(ln.strip() for ln in text.splitlines())
    return secrets, given


def leaks_in(folder: Path, secrets: dict, given: set) -> list:
    """'file:line: code (from solutions/...)' for each line under folder that holds a secret line not given."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for secret, origin in secrets.items():
                if secret in line and secret not in given:
                    found.append(f"{path.relative_to(folder)}:{number}: {secret} (from {origin})")
    return found


VISIBILITY = {"visible", "hidden", "after_due_date", "after_published"}


class GradescopeFormat(unittest.TestCase):
    """assert_results: a results.json Gradescope accepts."""

    def assert_results(self, path: Path) -> dict:
        self.assertTrue(path.is_file(), f"{path} was not written")
        data = json.loads(path.read_text())
        self.assertIsInstance(data, dict)
        self.assertIsInstance(data.get("score"), (int, float))
        self.assertIsInstance(data.get("output", ""), str)
        self.assertIn(data.get("visibility", "visible"), VISIBILITY)
        self.assertIsInstance(data.get("tests"), list)
        self.assertTrue(data["tests"], "results.json lists no tests")
        for test in data["tests"]:
            with self.subTest(test=test.get("name")):
                self.assertIsInstance(test.get("name"), str)
                self.assertTrue(re.search(r"\S", test["name"]))
                self.assertIsInstance(test.get("score"), (int, float))
                self.assertIsInstance(test.get("max_score"), (int, float))
                self.assertLessEqual(test["score"], test["max_score"])
                self.assertIsInstance(test.get("output"), str)
                self.assertIn(test.get("visibility"), VISIBILITY)
                self.assertIn(test.get("status", "passed"), {"passed", "failed"})
        return data
