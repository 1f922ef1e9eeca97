"""Reading a compiled object for the static checks (grader/static_check.py): its symbols as nm lists them, its ELF
sections, relocations and symbol types, and the device images (cubins) of its fatbin, extracted by cuobjdump where
they are compressed. ToolError: nm, objdump or cuobjdump failed or is missing (a kit problem, never a pass)."""
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

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
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"{Path(argv[0]).name} failed on {what}: {e}") from None
    if done.returncode != 0:
        raise ToolError(f"{Path(argv[0]).name} failed on {what} (exit {done.returncode}): {done.stderr.strip()[:500]}")
    return done.stdout


def read_symbols(nm: str, path) -> list:
    """Every symbol of the object at path, in its symbol table's order, with its demangled name (nm -P, twice)."""
    raw = run_tool([nm, "-P", "-p", str(path)], path).splitlines()
    demangled = run_tool([nm, "-P", "-p", "-C", str(path)], path).splitlines()
    if len(raw) != len(demangled):
        raise ToolError(f"nm listed {len(raw)} symbols of {path}, but {len(demangled)} demangled")
    symbols = []
    for line, pretty in zip(raw, demangled):
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        # the demangled line ends with the same fields as the plain one: strip them to get the demangled name
        tail = line[len(name):]
        symbols.append(Symbol(name, pretty[:len(pretty) - len(tail)] if pretty.endswith(tail) else name, kind))
    return symbols


class Elf:
    """Just enough of a 64-bit little-endian ELF relocatable file: sections, the symbol table, relocations."""

    def __init__(self, data: bytes, what: str):
        self.data, self.what = data, what
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
        return self.data[base + offset:end].decode("utf-8", "replace")

    def section(self, name: str):
        return next((s for s in self.sections if s["name"] == name), None)

    def contents(self, section) -> bytes:
        if section["type"] == 8:  # SHT_NOBITS
            return b""
        return self.data[section["offset"]:section["offset"] + section["size"]]

    def relocation_entries(self) -> list:
        """(target section index, offset, symbol index, addend, type) of every RELA entry of the object."""
        out = []
        for s in self.sections:
            if s["type"] == 4:  # SHT_RELA
                for off in range(s["offset"], s["offset"] + s["size"], 24):
                    r_offset, r_info, addend = struct.unpack_from("<QQq", self.data, off)
                    out.append((s["info"], r_offset, r_info >> 32, addend, r_info & 0xFFFFFFFF))
        return out

    def relocations(self, target_index: int) -> list:
        """(offset, symbol dict, addend) of every RELA entry that applies to section target_index."""
        return sorted(((off, self.symbols[sym], addend) for target, off, sym, addend, _ in self.relocation_entries()
                       if target == target_index), key=lambda r: r[0])

    def function_at(self, section_index: int, offset: int) -> str | None:
        """The name of the function (STT_FUNC) of section section_index whose body holds offset."""
        return next((s["name"] for s in self.symbols if s["type"] == 2 and s["shndx"] == section_index
                     and s["value"] <= offset < s["value"] + max(s["size"], 1)), None)

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


def device_images(elf: Elf, path) -> tuple:
    """(the cubins in the object's fatbin, notes): each ELF image of every fatbin in .nv_fatbin. Compressed images
    (nvcc -Xfatbin -compress-all, or a toolkit that compresses by default) are extracted by cuobjdump where it is
    installed; without it they give a note instead."""
    section = elf.section(".nv_fatbin")
    if section is None:
        return [], []
    data, images, compressed, off = elf.contents(section), [], 0, 0
    while off + 16 <= len(data):
        magic, _, header_size, fat_size = struct.unpack_from("<IHHQ", data, off)
        if magic != 0xBA55ED50:
            off += 8  # fatbins are 8-byte aligned; skip padding
            continue
        entry, end = off + header_size, off + header_size + fat_size
        while entry + 16 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
            start = entry + entry_header
            if kind == 2:  # an ELF (cubin); kind 1 is PTX, compiled from the same source
                if data[start:start + 4] == b"\x7fELF":
                    images.append(data[start:start + payload])
                else:
                    compressed += 1
            entry = start + payload
        off = end
    if not compressed:
        return images, []
    extracted = extract_with_cuobjdump(path)
    if extracted is not None:
        return extracted, []
    return images, [f"{compressed} compressed device image{'s' if compressed > 1 else ''} not inspected: cuobjdump "
                    f"(from the CUDA toolkit) is needed to read them; only the host code's symbols were checked"]


def extract_with_cuobjdump(path) -> list | None:
    """Every cubin of the object at path, as cuobjdump -xelf all extracts them (decompressed), or None when
    cuobjdump is not installed or fails."""
    cuobjdump = shutil.which("cuobjdump")
    if not cuobjdump:
        return None
    with tempfile.TemporaryDirectory(prefix="static-check-") as tmp:
        try:
            done = subprocess.run([cuobjdump, "-xelf", "all", str(Path(path).resolve())], cwd=tmp,
                                  capture_output=True, timeout=TOOL_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired):
            return None
        found = sorted(Path(tmp).glob("*.cubin"))
        if done.returncode != 0 or not found:
            return None
        return [f.read_bytes() for f in found]
