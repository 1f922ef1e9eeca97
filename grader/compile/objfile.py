"""Reading a compiled object for the static checks (grader/compile/static_check.py): its symbols as nm lists them, its
ELF sections, relocations and symbol types, and the device images (cubins) of its fatbin, extracted by cuobjdump where
they are compressed. ToolError: nm, objdump or cuobjdump failed or is missing (a kit problem, never a pass).

Names and listings are student bytes: the tools' output is read as bytes and decoded with surrogateescape
(grader/report/text.py), as are the names in the ELF file's own string tables, so a byte that is not UTF-8 (0xff) in a
symbol name reads the same from nm and from the file, and never stops the checks.

Everything here reads hostile bytes, so the grader never calls it in its own process: grader/compile/static_check.py
runs its checks as a program of their own in the build's sandbox, and
`python3 -m grader.compile.objfile fatbin OBJECT OUT` (run so by grader/compile/build.py) writes the object's
.nv_fatbin section to OUT."""
import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.report.text import decode

TOOL_TIMEOUT = 120.0


class ToolError(RuntimeError):
    """A tool the checks need (nm, objdump) is missing or failed, or the object cannot be read: a kit problem."""


@dataclass(frozen=True)
class Symbol:
    name: str  # as in the object (mangled)
    demangled: str
    kind: str  # nm's letter: U undefined, T text, W weak, D data, ...


def require_tools() -> dict:
    """{"nm": path, "objdump": path}; ToolError naming what is missing."""
    tools = {name: shutil.which(name) for name in ("nm", "objdump")}
    missing = [name for name, path in tools.items() if not path]
    if missing:
        raise ToolError(f"{' and '.join(missing)} not found: the grader's static checks need binutils (nm, objdump) "
                        f"to read the compiled labs; install binutils (a kit problem, not the student's)")
    return tools


def run_tool(argv, what: str) -> str:
    """A tool's standard output, its bytes decoded with surrogateescape (grader/report/text.py); ToolError when it
    fails."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=TOOL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"{Path(argv[0]).name} failed on {what}: {e}") from None
    if done.returncode != 0:
        raise ToolError(f"{Path(argv[0]).name} failed on {what} (exit {done.returncode}): "
                        f"{decode(done.stderr).strip()[:500]}")
    return decode(done.stdout, round_trip=True)


# nm -P: "NAME TYPE [VALUE [SIZE]]"; the shortest name for which the rest of the line is those fields
NM_LINE = re.compile(r"(?P<name>.+?) (?P<kind>\S)(?: (?:[0-9a-fA-F]*)(?: [0-9a-fA-F]*)?)? *")


def read_symbols(nm: str, path) -> list:
    """Every symbol of the object at path, in its symbol table's order, with its demangled name (nm -P, twice)."""
    raw = run_tool([nm, "-P", "-p", str(path)], path).splitlines()
    demangled = run_tool([nm, "-P", "-p", "-C", str(path)], path).splitlines()
    if len(raw) != len(demangled):
        raise ToolError(f"nm listed {len(raw)} symbols of {path}, but {len(demangled)} demangled")
    symbols = []
    for line, pretty in zip(raw, demangled):
        fields = NM_LINE.fullmatch(line)  # a name may hold spaces (an assembler's quoted name): the fields end the line
        if not fields:
            continue
        name, kind = fields["name"], fields["kind"]
        # the demangled line ends with the same fields as the plain one: strip them to get the demangled name
        tail = line[len(name):]
        symbols.append(Symbol(name, pretty[:len(pretty) - len(tail)] if pretty.endswith(tail) else name, kind))
    return symbols


class Elf:
    """Just enough of a 64-bit little-endian ELF relocatable file: sections, the symbol table, relocations."""

    def __init__(self, data: bytes, what: str):
        self.data, self.what = data, what
        self._relocations = None  # relocation_entries(), once read
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ValueError(f"{what} is not a 64-bit little-endian ELF file")
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        self.sections = []
        for k in range(shnum):
            name, stype, flags, _, offset, size, link, info, _, entsize = struct.unpack_from(
                "<IIQQQQIIQQ", data, shoff + k * shentsize)
            self.sections.append({"name_off": name, "type": stype, "flags": flags, "offset": offset, "size": size,
                                  "link": link, "info": info, "entsize": entsize})
        names = self.sections[shstrndx] if shnum else None
        for s in self.sections:
            s["name"] = self._string(names["offset"], s["name_off"]) if names else ""
        self.symbols = []
        for s in self.sections:
            if s["type"] == 2:  # SHT_SYMTAB
                strtab = self.sections[s["link"]]["offset"]
                for off in range(s["offset"], s["offset"] + s["size"], 24):
                    name, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", data, off)
                    self.symbols.append({"name": self._string(strtab, name), "type": info & 0xF, "bind": info >> 4,
                                         "shndx": shndx, "value": value, "size": size})

    def _string(self, base: int, offset: int) -> str:
        end = self.data.index(b"\0", base + offset)
        return decode(self.data[base + offset:end], round_trip=True)

    def section(self, name: str):
        return next((s for s in self.sections if s["name"] == name), None)

    def contents(self, section) -> bytes:
        if section["type"] == 8:  # SHT_NOBITS
            return b""
        return self.data[section["offset"]:section["offset"] + section["size"]]

    def relocation_entries(self) -> tuple:
        """(target section index, offset, symbol index, addend, type) of every RELA entry of the object, read once:
        the static checks go over them several times."""
        if self._relocations is None:
            out = []
            for s in self.sections:
                if s["type"] == 4:  # SHT_RELA
                    for off in range(s["offset"], s["offset"] + s["size"], 24):
                        r_offset, r_info, addend = struct.unpack_from("<QQq", self.data, off)
                        out.append((s["info"], r_offset, r_info >> 32, addend, r_info & 0xFFFFFFFF))
            self._relocations = tuple(out)
        return self._relocations

    def relocations(self, target_index: int) -> list:
        """(offset, symbol dict, addend) of every RELA entry that applies to section target_index."""
        return sorted(((off, self.symbols[sym], addend) for target, off, sym, addend, _ in self.relocation_entries()
                       if target == target_index), key=lambda r: r[0])

    def function_at(self, section_index: int, offset: int) -> str | None:
        """The name of the (first) function (STT_FUNC) of section section_index whose body holds offset."""
        return next((s["name"] for s in self.functions_at(section_index, offset)), None)

    def functions_at(self, section_index: int, offset: int) -> list:
        """Every function symbol (STT_FUNC) of section section_index whose body holds offset: more than one when
        symbols overlap."""
        return [s for s in self.symbols if s["type"] == 2 and s["shndx"] == section_index
                and s["value"] <= offset < s["value"] + max(s["size"], 1)]

    def target_name(self, symbol: dict, addend: int) -> str:
        """The function a relocation points to: the symbol itself, or for a section symbol plus an offset, the
        function defined there."""
        if symbol["type"] != 3:  # not STT_SECTION
            return symbol["name"]
        found = next((s for s in self.symbols if s["shndx"] == symbol["shndx"] and s["value"] == addend
                      and s["type"] == 2), None)  # STT_FUNC
        return found["name"] if found else f"{self.sections[symbol['shndx']]['name']}+{addend:#x}"


def read_elf(path) -> Elf:
    try:
        return Elf(Path(path).read_bytes(), str(path))
    except (OSError, ValueError, struct.error, IndexError) as e:
        raise ToolError(f"cannot read {path}: {e}") from None


FATBIN_MAGIC, FATBIN_HEADER = 0xBA55ED50, 16
R_X86_64_64 = 1
RELOCATION_BYTES = {1: 8, 2: 4, 4: 4, 9: 4, 10: 4, 11: 4, 12: 2, 13: 2, 14: 1, 15: 1, 24: 8, 26: 4, 41: 4, 42: 4}


def registered_fatbins(elf: Elf) -> tuple:
    """(offsets in .nv_fatbin of the fatbins nvcc's registration hands to the CUDA runtime, problems): each wrapper
    in .nvFatBinSegment (24 bytes: magic, version, the fatbin's address, 0) points at one by an R_X86_64_64
    relocation. problems says what in .nvFatBinSegment is not a wrapper nvcc makes."""
    segment = elf.section(".nvFatBinSegment")
    if segment is None:
        return [], []
    index = elf.sections.index(segment)
    fatbin = elf.section(".nv_fatbin")
    offsets, problems = [], []
    for target, offset, sym, addend, rtype in elf.relocation_entries():
        if target != index:
            continue
        symbol = elf.symbols[sym]
        if (rtype != R_X86_64_64 or offset % 24 != 8 or symbol["type"] != 3 or fatbin is None
                or elf.sections[symbol["shndx"]] is not fatbin):
            problems.append(f"a relocation at .nvFatBinSegment+{offset:#x} that nvcc's fatbinary wrapper does not have")
        else:
            offsets.append(addend)
    return sorted(offsets), problems


def device_images(elf: Elf, path) -> tuple:
    """(cubins, PTX texts, problems, notes) of the fatbins the object registers: each ELF image (cubin) and each PTX
    text of every fatbin that nvcc's wrapper points at (registered_fatbins). problems: what makes .nv_fatbin other
    than nvcc's (bytes outside the registered fatbins, an entry of an unknown kind or running past its fatbin), for
    the static checks to refuse: the device checks read what the CUDA runtime will load, and only that. Compressed
    entries are read by cuobjdump (cubins) and zstd (PTX) where they are installed; without them, notes."""
    section = elf.section(".nv_fatbin")
    offsets, problems = registered_fatbins(elf)
    if section is None:
        return [], [], problems + (["a fatbinary wrapper without a .nv_fatbin section"] if offsets else []), []
    data = elf.contents(section)
    images, texts, compressed, unread_ptx, covered = [], [], 0, 0, 0
    for off in offsets:
        if off < covered or data[covered:off].strip(b"\0") or off + FATBIN_HEADER > len(data):
            problems.append(f".nv_fatbin holds bytes before the fatbinary at +{off:#x} that nothing registers")
            break
        magic, _, header_size, fat_size = struct.unpack_from("<IHHQ", data, off)
        end = off + header_size + fat_size
        if magic != FATBIN_MAGIC or header_size != FATBIN_HEADER or end > len(data):
            problems.append(f"the fatbinary at .nv_fatbin+{off:#x} has a header nvcc does not write")
            break
        entry = off + header_size
        while entry < end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry) if entry + 16 <= end else (0,) * 4
            start = entry + entry_header
            if kind not in (1, 2) or entry_header < 16 or start + payload > end:
                problems.append(f"an entry of the fatbinary at .nv_fatbin+{entry:#x} that the CUDA runtime may read "
                                f"differently from the checks (kind {kind})")
                break
            body = data[start:start + payload]
            if kind == 2 and body[:4] == b"\x7fELF":
                images.append(body)
            elif kind == 2:
                compressed += 1
            else:  # PTX; compressed, its entry header says the compressed size (padding follows)
                packed = struct.unpack_from("<I", data, entry + 16)[0] if entry_header >= 20 else 0
                text = zstd_text(body[:packed] if 0 < packed <= payload else body) \
                    if body.startswith(ZSTD_MAGIC) else body
                if text is None:
                    unread_ptx += 1
                else:
                    texts.append(text)
            entry = start + payload
        covered = end
    if data[covered:].strip(b"\0") and not problems:
        problems.append(f".nv_fatbin holds bytes after the registered fatbinary (from +{covered:#x}) that nothing "
                        f"registers")
    notes = []
    if unread_ptx:
        extracted_ptx = extract_with_cuobjdump(path, "ptx")
        if extracted_ptx is not None:
            texts += extracted_ptx
        else:
            notes.append(f"{unread_ptx} compressed PTX text{'s' if unread_ptx > 1 else ''} not inspected: the zstd "
                         f"program or cuobjdump (from the CUDA toolkit) reads them")
    if not compressed:
        return images, texts, problems, notes
    extracted = extract_with_cuobjdump(path)
    if extracted is not None:
        return extracted, texts, problems, notes
    return images, texts, problems, notes + [
        f"{compressed} compressed device image{'s' if compressed > 1 else ''} not inspected: cuobjdump (from the CUDA "
        f"toolkit) is needed to read them; only the host code's symbols were checked"]


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstd_text(body: bytes) -> bytes | None:
    """A zstd-compressed PTX entry (nvcc 13 compresses PTX), decompressed by the zstd program; None without it."""
    zstd = shutil.which("zstd")
    if not zstd:
        return None
    try:
        done = subprocess.run([zstd, "-dc"], input=body, capture_output=True, timeout=TOOL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def overlapping_relocations(elf: Elf) -> list:
    """'section+offset' of each relocation whose field overlaps another's: a compiler never writes two into the same
    bytes, and an assembler's .reloc directive can, to redirect what the code it follows refers to (GNU ld applies
    the later one)."""
    fields = {}
    for target, offset, _, _, rtype in elf.relocation_entries():
        fields.setdefault(target, []).append((offset, offset + RELOCATION_BYTES.get(rtype, 8)))
    found = []
    for target, spans in fields.items():
        spans.sort()
        found += [f"{elf.sections[target]['name']}+{b[0]:#x}" for a, b in zip(spans, spans[1:]) if b[0] < a[1]]
    return found


def extract_with_cuobjdump(path, kind: str = "elf") -> list | None:
    """Every cubin (kind "elf") or PTX text (kind "ptx") of the object at path, as cuobjdump -xelf all (-xptx all)
    extracts them, decompressed; None when cuobjdump is not installed or fails."""
    cuobjdump = shutil.which("cuobjdump")
    if not cuobjdump:
        return None
    with tempfile.TemporaryDirectory(prefix="static-check-") as tmp:
        try:
            done = subprocess.run([cuobjdump, f"-x{kind}", "all", str(Path(path).resolve())], cwd=tmp,
                                  capture_output=True, timeout=TOOL_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired):
            return None
        found = sorted(Path(tmp).glob("*.cubin" if kind == "elf" else "*.ptx"))
        if done.returncode != 0 or not found:
            return None
        return [f.read_bytes() for f in found]


def write_fatbin(student_object, path) -> None:
    """Writes the .nv_fatbin section of the object at student_object to path (empty when it has none). ToolError
    when the object cannot be read."""
    elf = read_elf(student_object)
    section = elf.section(".nv_fatbin")
    try:
        data = elf.contents(section) if section else b""
    except (ValueError, IndexError) as e:
        raise ToolError(f"cannot read {student_object}: {e}") from None
    Path(path).write_bytes(data)


def main(argv=None) -> int:
    """`python3 -m grader.compile.objfile fatbin OBJECT OUT`: 0 with OUT written, 1 with why on stderr."""
    import argparse
    import sys
    p = argparse.ArgumentParser(prog="python3 -m grader.compile.objfile",
                                description="Reads a compiled object's parts.")
    sub = p.add_subparsers(dest="command", required=True)
    fat = sub.add_parser("fatbin", help="write the object's .nv_fatbin section (its device code) to OUT")
    fat.add_argument("object")
    fat.add_argument("out")
    args = p.parse_args(argv)
    try:
        write_fatbin(args.object, args.out)
    except (ToolError, OSError) as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
