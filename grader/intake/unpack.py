"""Unpacking the archives students make, safely: one routine for the class intake (grader/classroom/intake.py) and the
Gradescope autograder (grader/gradescope.py).

extract() unpacks a zip or a tar (plain, gzip, bzip2 or xz; told apart by content, not by name) into a folder:
  - only regular files are written, and only those the caller keeps (no links, devices or folders of the archive's);
  - no member leaves the folder: absolute paths, `..`, drive letters, control characters, paths over MAX_PARTS
    folders or MAX_PATH characters are left out, as is a member whose place is already taken;
  - sizes are counted as bytes are read, never taken from headers: one file at most Limits.max_file_bytes, all the
    files of one upload together (a Budget, shared with the archives inside it) at most max_total_bytes;
  - a zip may list at most max_members entries (checked in its end record before the listing is read, so a huge
    central directory is refused before it fills memory), compressed with deflate or stored only (bzip2 and lzma
    members decompress in one piece in zipfile); a tar at most max_members entries and max_scanned_bytes read
    through, in reads of at most MAX_READ bytes (a header claiming a gigabyte of long name is refused), and no
    sparse members (tarfile reads their maps whole).
Archives inside an archive are the caller's business: each side unpacks them one level deep, into the same Budget.
An archive that cannot be read, or passes a limit, raises UnpackError, whose message says which and why.
"""
import bz2
import gzip
import lzma
import re
import stat
import struct
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
CHUNK = 1 << 16
MAX_PARTS = 32  # folders a member's path may go down
MAX_PATH = 1024  # characters in a member's path
MAX_READ = 1 << 20  # bytes tarfile may ask for at once (our reads are CHUNK; a pax or long-name header is small)
ZIP_DIRECTORY_BYTES = 512  # per entry allowed: a zip's central directory may be at most max_members times this


class UnpackError(Exception):
    """An archive cannot be unpacked (damaged, not an archive, or over a limit); the message says why."""


@dataclass(frozen=True)
class Limits:
    """What one student's upload may hold. Bytes are counted as they are read, so a lying header does not help."""

    max_members: int = 20000  # entries in one archive
    max_file_bytes: int = 50 << 20  # one file written (a .cu file or an archive inside the upload)
    max_total_bytes: int = 200 << 20  # everything written for one upload, the archives inside it included
    max_scanned_bytes: int = 2 << 30  # bytes of one tar read through (decompressed), skipped members included


@dataclass
class Budget:
    """The bytes one upload may still write."""

    left: int


def archive_suffix(name: str) -> str:
    """The archive suffix name ends with (".tar.gz"), or "" when it is not an archive's name."""
    lower = name.lower()
    return next((s for s in sorted(ARCHIVE_SUFFIXES, key=len, reverse=True) if lower.endswith(s)), "")


def safe_relpath(name: str) -> Path | None:
    """An archive member's path if it stays inside the folder it is unpacked into and is a sane name, else None."""
    if (len(name) > MAX_PATH or any(ord(c) < 32 or ord(c) == 127 for c in name) or name.startswith(("/", "\\"))
            or re.match(r"^[A-Za-z]:", name)):
        return None
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts or len(parts) > MAX_PARTS:
        return None
    return Path(*parts)


def _size(n: int) -> str:
    """n bytes for people: "200 MiB", "2 GiB", "1500 bytes"."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def copy_capped(src, target: Path, limits: Limits, budget: Budget, what: str) -> None:
    """Copies the stream src to target, stopping with UnpackError once the file or the upload's budget is passed
    (the partial file is removed)."""
    written = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(target, "xb") as out:
            while chunk := src.read(CHUNK):
                written += len(chunk)
                if written > limits.max_file_bytes:
                    raise UnpackError(f"{what} is larger than {_size(limits.max_file_bytes)} (the limit for one file)")
                if written > budget.left:
                    raise UnpackError(f"the upload unpacks to more than {_size(limits.max_total_bytes)} (the limit "
                                      f"for one upload, archives inside it included): unpacking stopped at {what}")
                out.write(chunk)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    budget.left -= written


def _place(dest: Path, rel: Path) -> Path | None:
    """Where a member goes under dest, or None when a file or folder of that name is already in the way."""
    target = dest / rel
    for parent in list(target.parents)[:len(rel.parts) - 1]:
        if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
            return None
    return None if target.exists() or target.is_symlink() else target


def extract(archive, dest, limits: Limits, budget: Budget, keep, label: str = "") -> list:
    """Unpacks the regular files of archive (zip or tar, told apart by content) for which keep(relative path) is
    true into dest, within limits and budget. Returns notes on what was left out and why (unsafe paths, links,
    files over the limit, unsupported compression); raises UnpackError when the archive cannot be read or passes a
    limit. label names the archive in messages."""
    archive, dest = Path(archive), Path(dest)
    label = label or archive.name
    dest.mkdir(parents=True, exist_ok=True)
    skipped = {}
    try:
        with open(archive, "rb") as raw:
            if zipfile.is_zipfile(raw):
                _extract_zip(raw, dest, limits, budget, label, keep, skipped)
            else:
                stream = _tar_stream(raw)
                if stream is None:
                    raise UnpackError(f"{label} is not a zip or tar archive (or it is damaged)")
                _extract_tar(stream, dest, limits, budget, label, keep, skipped)
    except UnpackError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, tarfile.TarError, zlib.error, lzma.LZMAError, EOFError,
            OSError, NotImplementedError, RuntimeError, ValueError, struct.error) as e:
        raise UnpackError(f"cannot unpack {label}: {type(e).__name__}: {e}") from None
    notes = []
    for why, names in skipped.items():
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        notes.append(f"{label}: left out ({why}): {shown}")
    return notes


# ---- zip ----

_EOCD = struct.Struct("<4s4H2LH")
_EOCD64_LOCATOR = struct.Struct("<4sLQL")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")


def _zip_directory(raw) -> tuple | None:
    """(entries, central directory bytes) from a zip's end record (zip64 too), read as zipfile finds it; None when
    there is none."""
    raw.seek(0, 2)
    size = raw.tell()
    tail_start = max(0, size - (_EOCD.size + 0xFFFF))
    raw.seek(tail_start)
    tail = raw.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _EOCD.size > len(tail):
        return None
    _, _, _, _, entries, directory, offset, _ = _EOCD.unpack_from(tail, at)
    if entries == 0xFFFF or directory == 0xFFFFFFFF or offset == 0xFFFFFFFF:
        locator = tail_start + at - _EOCD64_LOCATOR.size
        if locator - _EOCD64.size < 0:
            return None
        raw.seek(locator - _EOCD64.size)
        record = raw.read(_EOCD64.size)
        if len(record) < _EOCD64.size or not record.startswith(b"PK\x06\x06"):
            return None
        entries, directory = _EOCD64.unpack(record)[7:9]
    return entries, directory


def _extract_zip(raw, dest, limits, budget, label, keep, skipped):
    found = _zip_directory(raw)
    if found and found[0] > limits.max_members:
        raise UnpackError(f"{label} lists {found[0]} entries, more than {limits.max_members}")
    if found and found[1] > limits.max_members * ZIP_DIRECTORY_BYTES:
        raise UnpackError(f"{label}'s list of entries takes {_size(found[1])}, more than "
                          f"{_size(limits.max_members * ZIP_DIRECTORY_BYTES)}")
    raw.seek(0)
    with zipfile.ZipFile(raw) as z:
        infos = z.infolist()
        if len(infos) > limits.max_members:
            raise UnpackError(f"{label} lists {len(infos)} entries, more than {limits.max_members}")
        for info in infos:
            if info.is_dir():
                continue
            rel = safe_relpath(info.filename)
            mode = info.external_attr >> 16
            if rel is None:
                skipped.setdefault("unsafe path", []).append(info.filename)
            elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: made on Windows, or by zipfile.writestr
                skipped.setdefault("link or special file", []).append(info.filename)
            elif keep(rel):
                if info.flag_bits & 0x1:
                    skipped.setdefault("encrypted", []).append(info.filename)
                elif info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    skipped.setdefault("compressed other than by deflate", []).append(info.filename)
                elif info.file_size > limits.max_file_bytes:
                    skipped.setdefault(f"too large: over {_size(limits.max_file_bytes)}", []).append(info.filename)
                elif (target := _place(dest, rel)) is None:
                    skipped.setdefault("name clash", []).append(info.filename)
                else:
                    with z.open(info) as src:
                        copy_capped(src, target, limits, budget, f"{label}: {info.filename}")


# ---- tar ----

def _tar_stream(raw):
    """The decompressed stream of a tar (plain, gzip, bzip2 or xz), or None when raw holds no tar."""
    raw.seek(0)
    magic = raw.read(6)
    raw.seek(0)
    if magic.startswith(b"\x1f\x8b"):
        stream = gzip.GzipFile(fileobj=raw, mode="rb")
    elif magic.startswith(b"BZh"):
        stream = bz2.BZ2File(raw)
    elif magic.startswith(b"\xfd7zXZ\x00"):
        stream = lzma.LZMAFile(raw)
    else:
        stream = raw
    try:
        block = stream.read(tarfile.BLOCKSIZE)
        stream.seek(0)
        tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")  # one header block: its checksum must hold
    except (tarfile.HeaderError, OSError, EOFError, zlib.error, lzma.LZMAError, ValueError):
        return None
    return stream


class _Counted:
    """A decompressed tar stream as tarfile reads it: bytes counted as they are read or skipped, no read larger
    than MAX_READ."""

    def __init__(self, stream, limits: Limits, label: str):
        self.stream, self.limits, self.label, self.total = stream, limits, label, 0

    def _count(self, n: int) -> None:
        self.total += n
        if self.total > self.limits.max_scanned_bytes:
            raise UnpackError(f"{self.label} holds more than {_size(self.limits.max_scanned_bytes)} of data (read "
                              f"through, unpacked or not)")

    def read(self, n=-1):
        if n is None or n < 0 or n > MAX_READ:
            raise UnpackError(f"{self.label}: a member's header is larger than {_size(MAX_READ)}")
        data = self.stream.read(n)
        self._count(len(data))
        return data

    def seek(self, pos, whence=0):
        here = self.stream.tell()
        target = pos if whence == 0 else here + pos if whence == 1 else None
        if target is None:
            raise UnpackError(f"{self.label}: cannot seek from the end of a tar")
        self._count(max(0, target - here))
        return self.stream.seek(target)

    def tell(self):
        return self.stream.tell()


def _tar_info(label: str):
    """tarfile's member header class, refusing sparse files (tarfile reads their maps whole, as long as the archive
    says)."""

    class TarInfo(tarfile.TarInfo):
        def _refuse(self, *args):
            raise UnpackError(f"{label} holds a sparse file (made by tar --sparse), which the grader does not unpack")

        _proc_sparse = _proc_gnusparse_00 = _proc_gnusparse_01 = _proc_gnusparse_10 = _refuse

    return TarInfo


def _extract_tar(stream, dest, limits, budget, label, keep, skipped):
    count = 0
    with tarfile.open(fileobj=_Counted(stream, limits, label), mode="r:", tarinfo=_tar_info(label)) as tar:
        for member in tar:
            count += 1
            if count > limits.max_members:
                raise UnpackError(f"{label} holds more than {limits.max_members} entries")
            if member.isdir():
                continue
            rel = safe_relpath(member.name)
            if rel is None:
                skipped.setdefault("unsafe path", []).append(member.name)
            elif not member.isreg():
                skipped.setdefault("link or special file", []).append(member.name)
            elif keep(rel):
                if member.size > limits.max_file_bytes:
                    skipped.setdefault(f"too large: over {_size(limits.max_file_bytes)}", []).append(member.name)
                elif (target := _place(dest, rel)) is None:
                    skipped.setdefault("name clash", []).append(member.name)
                else:
                    src = tar.extractfile(member)
                    if src is not None:
                        with src:
                            copy_capped(src, target, limits, budget, f"{label}: {member.name}")
