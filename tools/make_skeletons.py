#!/usr/bin/env python3
"""Derive the blank lab files in labs/ from the filled ones in solutions/.

Every region

    // @@ BEGIN SOLUTION (about N lines): what belongs here
    ...
    // @@ END SOLUTION

becomes the single line `// @@ TODO (about N lines): what belongs here`, at the same indentation; every other line
is copied as it is, and so are the files that hold no region (Makefiles). `--check` writes nothing and exits 1,
listing the files, when labs/ differs from what it would write: the drift test of `make test`.
"""
import argparse
import difflib
import re
import sys
from pathlib import Path

BEGIN = re.compile(r"^(?P<indent>\s*)// @@ BEGIN SOLUTION(?P<rest>.*)$")
END = re.compile(r"^\s*// @@ END SOLUTION\s*$")
KIT = Path(__file__).resolve().parent.parent


class MarkerError(ValueError):
    """A solution file whose markers do not pair up."""


def blank_out(text: str, name: str = "<text>") -> str:
    """Return text with every solution region replaced by its TODO line."""
    out, region_start = [], None
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        begin = BEGIN.match(line)
        if begin:
            if region_start is not None:
                raise MarkerError(f"{name}:{number}: BEGIN SOLUTION inside the region opened at line {region_start}")
            region_start = number
            out.append(f"{begin['indent']}// @@ TODO{begin['rest']}\n")
        elif END.match(line):
            if region_start is None:
                raise MarkerError(f"{name}:{number}: END SOLUTION without a BEGIN SOLUTION")
            region_start = None
        elif region_start is None:
            out.append(line)
    if region_start is not None:
        raise MarkerError(f"{name}:{region_start}: BEGIN SOLUTION never closed")
    return "".join(out)


def lab_files(solutions: Path):
    """Yield (path relative to solutions/, its blanked text) for every file of every lab."""
    for path in sorted(solutions.rglob("*")):
        if path.is_file() and "build" not in path.relative_to(solutions).parts:
            rel = path.relative_to(solutions)
            yield rel, blank_out(path.read_text(), str(path))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solutions", type=Path, default=KIT / "solutions")
    parser.add_argument("--labs", type=Path, default=KIT / "labs")
    parser.add_argument("--check", action="store_true", help="report drift instead of writing")
    args = parser.parse_args(argv)
    try:
        expected = dict(lab_files(args.solutions))
    except MarkerError as err:
        print(f"make_skeletons: {err}", file=sys.stderr)
        return 2
    drift = []
    for rel, text in expected.items():
        target = args.labs / rel
        current = target.read_text() if target.exists() else None
        if current == text:
            continue
        if args.check:
            drift.append(rel)
            diff = difflib.unified_diff((current or "").splitlines(True), text.splitlines(True),
                                        f"labs/{rel}", f"derived from solutions/{rel}")
            sys.stdout.writelines(list(diff)[:40])
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            print(f"wrote {target.relative_to(args.labs.parent) if args.labs.is_absolute() else target}")
    if args.check:
        extra = sorted(p.relative_to(args.labs) for p in args.labs.rglob("*")
                       if p.is_file() and "build" not in p.relative_to(args.labs).parts
                       and p.relative_to(args.labs) not in expected)
        for rel in extra:
            print(f"labs/{rel} has no counterpart in solutions/")
        if drift or extra:
            print(f"labs/ has drifted from solutions/ in {len(drift) + len(extra)} file(s); "
                  "run `make skeletons` to rederive the labs from the solutions", file=sys.stderr)
            return 1
        print(f"labs/ matches solutions/ ({len(expected)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
