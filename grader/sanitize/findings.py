"""What the findings mean for the student: whose line each is (the student's or the kit's), its explanation in
words for students with the line quoted, and the grade's "sanitizers" row made of them."""
import functools
import re
from pathlib import Path, PurePosixPath

from grader.config import SANITIZERS
from grader.patterns import KIT
from grader.sanitize.parse import Finding


NAME = SANITIZERS  # the row's name in the grade table


# ---- whose line is it ----

def classify(findings, source: str, kit=KIT, source_text: str = "") -> None:
    """Sets each finding's origin: "student" when one of its lines is the student's (owner_of), "kit" when its lines
    are all the kit's, and "student" too without any source line. Ownership by the kit needs positive proof, a line of
    the kit's: the harness and the CUB it links are compiled with -lineinfo (mk/cuda.mk), so device code without line
    information can only be a submission's (a fatbinary it registered itself, say: attack 48 passed its race off as
    "not traced to any source line, nothing is held against you")."""
    for f in findings:
        owners = {owner_of(loc.file, loc.function, source, kit, source_text) for loc in f.locations if loc.file}
        f.origin = "kit" if owners and "student" not in owners else "student"


KIT_SOURCES = ("harness", "patterns")  # the kit's folders of device and host code a lab program is built from


def kit_relative(path: str, kit=KIT) -> PurePosixPath | None:
    """The path of a file of this kit's harness/ or patterns/ relative to the kit, for an absolute path in either
    folder (or, for an output recorded where the kit lay elsewhere, an absolute path whose last parts are
    harness/... or patterns/... of a file this kit has); None for any other path."""
    p = PurePosixPath(path)
    if not p.is_absolute():
        return None
    root = PurePosixPath(str(Path(kit).resolve()))
    if p.is_relative_to(root) and p.relative_to(root).parts[:1] in ((part,) for part in KIT_SOURCES):
        return p.relative_to(root) if Path(p).is_file() else None
    for k in range(len(p.parts) - 2, 0, -1):  # the last "harness" or "patterns" of the path
        if p.parts[k] in KIT_SOURCES:
            tail = PurePosixPath(*p.parts[k:])
            return tail if (Path(kit) / tail).is_file() else None
    return None


def origin_of(path: str, source: str, kit=KIT) -> str:
    """"student", "harness", "library" (CUB or Thrust), "header" (another CUDA or C++ header) or "other" for the file
    a line table names.

    harness: a file of the kit's harness/ or patterns/ folders (kit_relative); a relative path is never the kit's,
    whose builds name absolute paths. student: the student's file, by its name (the grader compiles a copy in the
    build folder; no file of the kit has a lab file's name)."""
    p = PurePosixPath(path)
    if kit_relative(path, kit) is not None:
        return "harness"
    if p.name == source:
        return "student"
    if p.is_absolute() and "include" in p.parts[:-1]:
        below = p.parts[len(p.parts) - p.parts[::-1].index("include"):-1]
        if below and (below[0] in ("cub", "thrust") or below[:2] in (("cccl", "cub"), ("cccl", "thrust"))):
            return "library"
        return "header"
    return "other"


def owner_of(path: str, function: str, source: str, kit=KIT, source_text: str = "") -> str:
    """"student" or "kit": whose line this is. The kit's: its harness, and CUB and Thrust (the static checks refuse a
    student's object whose line table names them); a CUDA header line goes with the function it is in (the kit's when
    the kit's harness defines it and the student's file does not); every other file, a path the student's source
    made up included, is the student's, and so is any line in a function the student's file defines (a kit path
    on the student's kernel: what a #line before it gives, resolved or not)."""
    origin = origin_of(path, source, kit)
    if origin in ("harness", "library", "header") and defines_function(source_text, function):
        return "student"  # the kit's path on a function the student's file defines: a line the source made up
    if origin in ("harness", "library"):
        return "kit"
    if origin == "header" and function and kit_defines_function(str(kit), function):
        return "kit"
    return "student"


def _function_name(function: str) -> str:
    """The plain name of compute-sanitizer's function text: "void cub::X::DeviceScanKernel<int>(int)" ->
    "DeviceScanKernel", "reduce_kernel(const float *, float *)" -> "reduce_kernel"."""
    text = function.strip().split("(")[0]
    while "<" in text:  # template arguments, innermost first
        cut = re.sub(r"<[^<>]*>", "", text)
        if cut == text:
            break
        text = cut
    words = text.split()
    return words[-1].split("::")[-1] if words else ""


def defines_function(source_text: str, function: str) -> bool:
    """Whether source_text defines (not only calls) the kernel or device function named by function."""
    name = _function_name(function or "")
    if not name or not source_text or not re.fullmatch(r"[A-Za-z_]\w*", name):
        return False
    return re.search(rf"__(?:global|device)__[^;{{}}]*\b{re.escape(name)}\s*\(", source_text) is not None


@functools.lru_cache(maxsize=256)
def kit_defines_function(kit: str, function: str) -> bool:
    """Whether a file of the kit's harness defines the function."""
    for folder in ("harness/device", "harness/runner", "harness/include", "harness/common", "patterns/*",
                   "patterns/*/include"):
        for path in sorted(Path(kit).glob(f"{folder}/*.c*")) + sorted(Path(kit).glob(f"{folder}/*.h")):
            if defines_function(read_source(path), function):
                return True
    return False


def shown_path(path: str | None, source: str, kit=KIT) -> str:
    """A path for people: the student's file by its name, the kit's relative to the kit, a header from its include
    folder on (cub/block/block_store.cuh)."""
    if not path:
        return "?"
    p = PurePosixPath(path)
    origin = origin_of(path, source, kit)
    if origin == "student":
        return source
    try:
        return str(p.relative_to(PurePosixPath(str(Path(kit).resolve()))))
    except ValueError:
        pass
    if origin == "harness":
        return str(kit_relative(path, kit))
    if "include" in p.parts:
        parts = p.parts
        return str(PurePosixPath(*parts[len(parts) - parts[::-1].index("include"):]))
    return str(p) if not p.is_absolute() else p.name


# ---- words for students ----

def explain(finding: Finding) -> str:
    """One line: what the finding means and what to do about it."""
    kind = finding.kind.lower()
    if finding.tool == "racecheck" or "hazard" in kind or "race" in kind:
        accesses = {loc.access for loc in finding.locations}
        if finding.severity == "warning":
            return ("lanes of one warp read and write the same shared-memory word with nothing ordering them: since "
                    "Volta a warp's lanes are not in lockstep, volatile or not. Add __syncwarp() between the steps, "
                    "or exchange the values in registers with __shfl_down_sync")
        if accesses == {"write"}:
            return ("two threads write the same shared-memory word between two barriers, so which value stays "
                    "depends on the scheduling: let one thread write it, or put a __syncthreads() between the writes")
        return ("one thread reads a shared-memory word that another thread writes, with no __syncthreads() between "
                "the two, so the value read depends on which warp runs first: read into a register, __syncthreads(), "
                "then write (every thread of the block must reach the barrier)")
    if "uninitialized" in kind:
        return ("reads device memory that nothing wrote first (cudaMalloc does not clear memory, and d_work comes "
                "uncleared): write it, or cudaMemsetAsync it, before reading it, or read only what was written")
    if "misaligned" in kind:
        return ("an access at an address that is not a multiple of its size (an int4 or float4 access needs 16-byte "
                "alignment): check the pointer arithmetic before a vector load or store")
    if "invalid __shared__" in kind or "shared or local address" in kind:
        return ("reads or writes past the end of a __shared__ array: check the array's size and the index, or "
                "bound the index before the access")
    if "invalid __local__" in kind:
        return "indexes a local array (or the stack) past its end: check the index against the array's size"
    if "invalid __global__" in kind or "illegal address" in kind or "out-of-range" in kind:
        return ("reads or writes device memory outside every allocation: an index past the end of an array (or "
                "before its start): bound the index (if (i < n)) before the access")
    if "invalid argument" in kind or "mask" in kind:
        return ("a warp-synchronous call (__syncwarp, __shfl_*_sync, __ballot_sync) with a mask that names lanes "
                "that have exited or do not take part: use a mask of the lanes that do arrive")
    if "divergent thread" in kind and "warp" in kind:
        return ("a __syncwarp() or *_sync call (shuffle, vote) whose mask names lanes that do not all reach it: call "
                "it where every lane of the mask arrives, or narrow the mask to the lanes that do")
    if "divergent thread" in kind or "barrier" in kind:
        return ("a __syncthreads() that not every thread of the block reaches (inside an if, or in a loop some "
                "threads leave early): move it where every thread of the block arrives")
    if "leak" in kind:
        return "device memory allocated and never freed"
    return f"see compute-sanitizer's {finding.tool} documentation for \"{finding.kind}\""


def _quote(source_lines: list, line: int | None) -> str:
    if not line or line > len(source_lines):
        return ""
    text = " ".join(source_lines[line - 1].split())
    return f" `{text[:70]}{'...' if len(text) > 70 else ''}`" if text else ""


def describe(finding: Finding, source: str, kit=KIT, source_lines=None) -> str:
    """One line for the table: the tool, the file and line (the student's lines first), what happened, where."""
    source_lines = source_lines or []
    locs = sorted(finding.locations, key=lambda loc: origin_of(loc.file, source, kit) != "student"
                  if loc.file else True)
    places = []
    for loc in locs:
        if not loc.file:
            continue
        place = f"{shown_path(loc.file, source, kit)}:{loc.line}"
        if place not in places:
            places.append(place)
    functions = [loc.function for loc in finding.locations if loc.function]
    where = " and ".join(places[:3]) if places else \
        f"{functions[0] if functions else 'a kernel'} without line information (device code the grader did not " \
        f"compile from {source}: it counts as {source}'s)"
    if finding.tool == "racecheck" or "hazard" in finding.kind.lower():
        parts = []
        for loc in finding.locations:
            if loc.file:
                quote = _quote(source_lines, loc.line) if origin_of(loc.file, source, kit) == "student" else ""
                part = f"a {loc.access or 'access'} at {shown_path(loc.file, source, kit)}:{loc.line}{quote}"
                if part not in parts:
                    parts.append(part)
        level = "between lanes of one warp" if finding.severity == "warning" else "between threads"
        what = f"shared-memory race {level}: " + " and ".join(parts) + f" ({finding.count} hazard" \
               f"{'s' if finding.count != 1 else ''})"
    else:
        first = next((loc for loc in locs if loc.file), None)
        quote = (_quote(source_lines, first.line)
                 if first and origin_of(first.file, source, kit) == "student" else "")
        what = finding.kind + quote
        if finding.function:
            what += f" in {finding.function.split('(')[0]}"
        if finding.thread:
            what += f", thread ({finding.thread}) of block ({finding.block})"
        if finding.count > 1:
            what += f" ({finding.count} threads in all)"
    return f"{finding.tool}: {where}: {what}"


def finding_data(finding: Finding, source: str, kit=KIT) -> dict:
    """A finding for results.json."""
    return {"tool": finding.tool, "kind": finding.kind, "severity": finding.severity, "origin": finding.origin,
            "locations": [{"file": shown_path(loc.file, source, kit) if loc.file else None, "line": loc.line,
                           "function": loc.function, "access": loc.access} for loc in finding.locations],
            "thread": finding.thread, "block": finding.block, "count": finding.count}


def read_source(path) -> str:
    """A source file's text, "" when there is none or it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace") if path else ""
    except OSError:
        return ""
