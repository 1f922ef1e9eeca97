"""Student bytes are data: how the grader turns what a tool or a student's program wrote into text it may print or
store.

decode(data) reads a tool's output (nm, objdump, nvcc, compute-sanitizer, the checker's result lines, the runner's
printed text) as UTF-8, a byte that is not UTF-8 replaced (U+FFFD); with round_trip=True each such byte is kept as a
lone surrogate (surrogateescape), so that a symbol name read from nm compares equal to the same bytes read from the
object itself and two names that differ in one such byte stay apart. Nothing the grader reads from a tool may raise
UnicodeDecodeError: a 0xff byte in a student's symbol name is a name like any other.

printable(text) is what every student-derived string goes through before it is printed or stored (the table, the
progress lines, results.json, Gradescope's output, the class's gradebook and reports): ANSI escape sequences (CSI,
OSC, DCS, ...), carriage returns and every other C0 and C1 control character are removed, but for the line feed and
the tab where layout needs them; the Unicode controls that reorder or hide text (bidirectional overrides and
isolates, which can make shown text differ from stored text) go too; a surrogate kept by decode(round_trip=True)
is shown as \\xNN, the byte it stands for. So a student's printf cannot move the terminal's cursor, clear it or draw
a "Total 100 / 100" over the grader's own lines. printable_json(value) applies it to every string of a JSON value.
"""
import re

# ESC followed by a CSI (ESC [), an OSC/DCS/SOS/PM/APC string (ESC ] P X ^ _ ... up to BEL or ESC \), or a
# two-character sequence; and the 8-bit C1 forms of CSI (0x9b) and the string introducers (0x90, 0x9d, 0x98, 0x9e,
# 0x9f). Whatever these leave (a lone ESC, a truncated sequence) the control-character pass removes.
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
                      r"|(?:\x1b[\]PX^_]|[\x90\x9d\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
                      r"|\x1b[ -/]*[0-~]")
# C0 controls but \t and \n, DEL, C1 controls; the bidirectional embeddings, overrides and isolates, and the
# zero-width characters that can hide text (U+200B-U+200F, U+202A-U+202E, U+2066-U+2069, U+FEFF).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff"
_CONTROL = re.compile(f"[{_CONTROLS}]")
_SURROGATE = re.compile("[\udc80-\udcff]")


def decode(data: bytes | str | None, round_trip: bool = False) -> str:
    """data (a tool's output) as text: UTF-8, each byte that is not replaced by U+FFFD, or with round_trip kept as a
    surrogate that encode() gives back. A str is returned as it is, None as ""."""
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    return data.decode("utf-8", "surrogateescape" if round_trip else "replace")


def encode(text: str) -> bytes:
    """The bytes decode(..., round_trip=True) read."""
    return text.encode("utf-8", "surrogateescape")


def printable(text, keep: str = "\n\t") -> str:
    """text with escape sequences and control characters removed (keep: the ones layout needs, line feed and tab by
    default; "" for a one-line field), \\r\\n read as \\n, and a surrogate byte shown as \\xNN."""
    text = "" if text is None else str(text)
    text = _ESCAPES.sub("", text.replace("\r\n", "\n"))
    text = _CONTROL.sub(lambda m: m.group() if m.group() in keep else "", text)
    if "\n" not in keep:
        text = text.replace("\n", " ")
    if "\t" not in keep:
        text = text.replace("\t", " ")
    return _SURROGATE.sub(lambda m: f"\\x{ord(m.group()) - 0xdc00:02x}", text)


def printable_json(value):
    """value (what json.loads gives) with printable() applied to every string in it, dictionary keys too."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: printable_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_json(v) for v in value]
    return value


__all__ = ["decode", "encode", "printable", "printable_json"]
