"""The two tools under test, loaded from their files (tools/ is not a package, and a module named `profile` must
not hide the standard library's)."""
import importlib.util
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = _load("selfstudy_check", KIT / "tools" / "check.py")
profile = _load("selfstudy_profile", KIT / "tools" / "profile.py")
