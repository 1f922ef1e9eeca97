"""Performance thresholds calibrated by `make calibrate` (tools/calibrate.py): one file per GPU model in
grader/thresholds.d/ beside labs.toml, laid over labs.toml's tables when the grader loads it (grader/config.py).

A file holds a [calibration] table (`gpu`, the model's name as the device reports it, and `calibrated_on`) and, for
each lab it calibrated, the same table labs.toml has for a GPU model:

    [labs.03-sequential.performance.gpus."NVIDIA A100-SXM4-80GB"]
    measured = 2.6
    lower = 1.12
    full = 2.34

It takes the place of labs.toml's own table for that lab and model, if there is one (recalibrating an H200 needs no
edit of labs.toml); two files may not calibrate the same lab and model. The numbers themselves are checked with the
rest of labs.toml.
"""
import tomllib
from pathlib import Path

from grader.config import ConfigError

FOLDER = "thresholds.d"


def _number(table: dict, key: str, where: str) -> None:
    value = table.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{where}.{key}: expected a positive number, got {value!r}")


def read(path: Path) -> dict:
    """One thresholds file, checked for its shape: ConfigError naming the file and the key at fault."""
    where = f"{path.parent.name}/{path.name}"
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {where}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: not valid TOML: {e}") from None
    unknown = data.keys() - {"calibration", "labs"}
    if unknown or not isinstance(data.get("calibration"), dict) or not isinstance(data.get("labs"), dict):
        raise ConfigError(f"{where}: expected a [calibration] table and [labs.NN-stage.performance.gpus.\"GPU\"] "
                          f"tables only" + (f" (unknown: {', '.join(sorted(unknown))})" if unknown else ""))
    calibration = data["calibration"]
    for key in ("gpu", "calibrated_on"):
        if not isinstance(calibration.get(key), str) or not calibration[key]:
            raise ConfigError(f"{where}: calibration.{key}: expected a non-empty string")
    for lab, table in data["labs"].items():
        at = f"{where}: labs.{lab}"
        if not isinstance(table, dict) or table.keys() != {"performance"} or not isinstance(
                table["performance"], dict) or table["performance"].keys() != {"gpus"} or not isinstance(
                table["performance"]["gpus"], dict):
            raise ConfigError(f"{at}: expected only performance.gpus.\"GPU\" tables")
        for gpu, t in table["performance"]["gpus"].items():
            w = f"{at}.performance.gpus.{gpu!r}"
            if not isinstance(t, dict) or not {"lower", "full"} <= t.keys() <= {"lower", "full", "measured"}:
                raise ConfigError(f"{w}: expected lower, full and measured")
            for key in t:
                _number(t, key, w)
    return data


def merge(data: dict, folder: Path) -> dict:
    """data (labs.toml as parsed) with every folder/*.toml file laid over it, in name order; data itself when the
    folder does not exist. ConfigError when a file is malformed, names a lab labs.toml lacks (or one without a
    performance test), or calibrates what another file does."""
    folder = Path(folder)
    if not folder.is_dir():
        return data
    labs = data.get("labs") if isinstance(data.get("labs"), dict) else {}
    seen = {}  # (lab, gpu) -> the file that calibrated it
    models = []
    for path in sorted(folder.glob("*.toml")):
        extra = read(path)
        where = f"{folder.name}/{path.name}"
        for lab, table in extra["labs"].items():
            perf = labs.get(lab, {}).get("performance") if isinstance(labs.get(lab), dict) else None
            if not isinstance(perf, dict):
                raise ConfigError(f"{where}: labs.{lab}: " + ("no such lab in labs.toml" if lab not in labs
                                                              else "this lab has no performance test in labs.toml"))
            for gpu, t in table["performance"]["gpus"].items():
                if (lab, gpu) in seen:
                    raise ConfigError(f"{where}: labs.{lab}: {gpu} is calibrated in {seen[lab, gpu]} too: keep one")
                seen[lab, gpu] = where
                gpus = perf.setdefault("gpus", {})
                if isinstance(gpus, dict):
                    gpus[gpu] = t
        models.append((extra["calibration"]["gpu"], extra["calibration"]["calibrated_on"], where))
    calibration = data.get("calibration")
    if models and isinstance(calibration, dict) and isinstance(calibration.get("gpu"), str):
        calibration["gpu"] += "".join(f" and {gpu}" for gpu, _, _ in models)
        if isinstance(calibration.get("calibrated_on"), str):
            calibration["calibrated_on"] += "".join(f"; {gpu}: {when} ({where})" for gpu, when, where in models)
    return data
