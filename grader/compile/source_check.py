"""What the student's source text may ask of the preprocessor, checked before anything compiles it.

check_source(data, name, include_dir) returns the refusals (one line each, "reduce.cu:3: ...") of a lab's file:
  - #include only of the kit's public headers by name in quotes ("reduce.h", ...), or of system headers in <...>
    without an absolute path or "..", never a header of the kit's include folder that is not public, never a
    computed #include MACRO; no #include_next, #import, #embed or any directive GCC does not share with every
    compiler (#ident, #assert, ...);
  - no #line, nor its short form `# 12 "file"`: the compiler would record made-up file names and line numbers, which
    the sanitizers' findings and the grader's messages rely on.
Everything else (#define, #if..., #pragma, #error, #warning) is the student's business; what a header or a pragma
could reach is bounded by the build's sandbox (grader/compile/build_sandbox.py), which shows nvcc the public headers
only.

Directives are found the way GCC's preprocessor (which nvcc runs, with -std=c++17) finds them: after joining
backslash-newlines, a # (or %:) that is the first token of a line; comments are white space, and a block comment
may hide a line break. To find them exactly, the text is lexed like GCC lexes it (strings, character literals,
numbers with ' separators, raw strings, whose backslash-newlines are kept), and a file whose lexing could depend on
the compiler's version or options is refused instead of guessed at: a NUL byte, a non-ASCII character or a backslash
outside comments and literals, an unterminated comment or raw string, a raw string's malformed delimiter, a ' right
after a number that is not a digit separator, __has_include (its argument is lexed differently in skipped groups).
No honest lab file has any of them.
"""
import bisect
import re
from pathlib import Path

from grader.patterns import PATTERNS

# harness/include's headers, and each pattern's (patterns/NAME/include/: grader/patterns.py)
PUBLIC_HEADERS = ("common.h", "cuda_check.h", "exit_codes.h", *(h for p in PATTERNS.values() for h in p.headers))
DIRECTIVES = ("define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif", "pragma",
              "error", "warning", "include")
INCLUDE_LIKE = ("include", "include_next", "import")  # GCC lexes their <...> and "..." as header names

SPACE = " \t\f\v"
IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
SPLICE = re.compile(r"\\[ \t\f\v]*\n")
RAW_PREFIXES = ("R", "LR", "uR", "UR", "u8R")
STRING_PREFIXES = ("L", "u", "U", "u8")
RAW_OPENING = re.compile(r'"([A-Za-z0-9_{}\[\]#<>%:;.?*+\-/^&|~!=,\'"]{0,16})\(')

HOW_TO_INCLUDE = (f"a lab's file may include the kit's headers in quotes ({', '.join(PUBLIC_HEADERS)}) and system "
                  f"headers in <...> (<cstdio>, <cooperative_groups.h>)")


class Refused(Exception):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line, self.message = line, message


def check_source(data: bytes, name: str, include_dir=None) -> list:
    """Refusals of the source text data of the lab's file name; include_dir is a folder (or a list of the folders)
    nvcc will search for "..." and <...> (the kit's harness/include and the pattern's include/): a header there that
    is not public may not be included."""
    refusals = []
    try:
        for line, directive, operand in Lexer(data).directives():
            why = check_directive(directive, operand, include_dir)
            if why:
                refusals.append(f"{name}:{line}: {why}")
    except Refused as e:
        refusals.append(f"{name}:{e.line}: {e.message}")
    return refusals


def check_directive(directive: str, operand, include_dir) -> str:
    """Why the directive (with its header-name operand for an #include) is refused, or ""."""
    if directive == "line" or directive[:1].isdigit():
        return ("a #line directive: it would make the compiler record other file names and line numbers than "
                "your file's (the grader and the sanitizers report your lines with them); remove it")
    if directive in INCLUDE_LIKE[1:] or directive == "embed":
        return f"#{directive}: {HOW_TO_INCLUDE}, with #include"
    if directive and directive not in DIRECTIVES:
        return (f"#{directive}: not a directive a lab's file may use (#include, #define, #undef, #if, #ifdef, "
                f"#ifndef, #elif, #else, #endif, #pragma, #error, #warning)")
    if directive != "include":
        return ""
    if operand is None:
        return (f"an #include without a header name in quotes or <...> (a macro, or text after the name): "
                f"{HOW_TO_INCLUDE}")
    header = operand[1:-1]
    if header.startswith("/") or ".." in header or "\\" in header or not header:
        return f"#include {operand}: {HOW_TO_INCLUDE}, never a path that starts with / or contains .."
    if operand[0] == '"' and header not in PUBLIC_HEADERS:
        return f"#include {operand}: {HOW_TO_INCLUDE}; put helpers of your own in this file"
    folders = include_dir if isinstance(include_dir, (list, tuple)) else [include_dir] if include_dir else []
    if header not in PUBLIC_HEADERS and any((Path(folder) / header).exists() for folder in folders):
        return f"#include {operand}: not one of the kit's public headers; {HOW_TO_INCLUDE}"
    return ""


class Lexer:
    """GCC's lexing of a C++17 file, as far as finding its directives needs: directives() yields (line, name,
    header-name operand of an include-like directive or None) for each, and raises Refused where the lexing would
    be a guess."""

    def __init__(self, data: bytes):
        if b"\0" in data:
            raise Refused(data[:data.index(b"\0")].count(b"\n") + 1, "a NUL byte: is this a text file?")
        text = data.decode("latin-1")  # bytes as they are; only ASCII is lexed
        text = text[3:] if text.startswith("\xef\xbb\xbf") else text  # a UTF-8 byte order mark
        self.original = text.replace("\r\n", "\n").replace("\r", "\n")
        # the text with backslash-newlines removed (translation phase 2), and for each of its characters, where it
        # was in the original text and on which line
        chars, self.where, self.lines = [], [], []
        pos, line = 0, 1
        for m in SPLICE.finditer(self.original):
            self._copy(chars, pos, m.start(), line)
            line += self.original.count("\n", pos, m.end())
            pos = m.end()
        self._copy(chars, pos, len(self.original), line)
        self.text = "".join(chars)

    def _copy(self, chars, start, end, line):
        for k in range(start, end):
            chars.append(self.original[k])
            self.where.append(k)
            self.lines.append(line)
            line += self.original[k] == "\n"

    def line(self, i: int) -> int:
        return self.lines[i] if i < len(self.lines) else (self.lines[-1] if self.lines else 1)

    def directives(self):
        s, i, at_line_start = self.text, 0, True
        while i < len(s):
            c = s[i]
            if c == "\n":
                at_line_start, i = True, i + 1
            elif c in SPACE:
                i += 1
            elif s.startswith("/*", i) or s.startswith("//", i):
                i = self.comment(i)
            elif at_line_start and (c == "#" or s.startswith("%:", i)):
                start = i
                i = self.space(i + (1 if c == "#" else 2))
                m = IDENT.match(s, i) or re.compile(r"\d+").match(s, i)
                name = m.group(0) if m else ""
                if not m and i < len(s) and s[i] != "\n":
                    name = s[i]
                i = m.end() if m else i
                operand = None
                if name in INCLUDE_LIKE:
                    operand, i = self.header_name(self.space(i))
                    if operand is not None and self.rest_has_tokens(i):
                        operand = None  # text after the header name
                yield self.line(start), name, operand
                i = self.rest_of_line(i)
            else:
                at_line_start = False
                i = self.token(i)

    def space(self, i: int) -> int:
        """Past white space and block comments (which may hold line breaks) within a line."""
        s = self.text
        while i < len(s):
            if s[i] in SPACE:
                i += 1
            elif s.startswith("/*", i):
                i = self.comment(i)
            else:
                break
        return i

    def comment(self, i: int) -> int:
        s = self.text
        if s.startswith("//", i):
            end = s.find("\n", i)
            return len(s) if end < 0 else end
        end = s.find("*/", i + 2)
        if end < 0:
            raise Refused(self.line(i), "a comment that never ends (/* without */)")
        return end + 2

    def header_name(self, i: int) -> tuple:
        """(the "..." or <...> header name at i, or None, and the index after it): no escapes inside."""
        s = self.text
        if i < len(s) and s[i] in "<\"":
            close = ">" if s[i] == "<" else '"'
            end, newline = s.find(close, i + 1), s.find("\n", i + 1)
            if end >= 0 and (newline < 0 or end < newline):
                return s[i:end + 1], end + 1
        return None, i

    def rest_has_tokens(self, i: int) -> bool:
        i = self.space(i)
        return i < len(self.text) and self.text[i] != "\n" and not self.text.startswith("//", i)

    def rest_of_line(self, i: int) -> int:
        """The index of the newline that ends the directive starting before i (its tokens lexed on the way)."""
        s = self.text
        while i < len(s) and s[i] != "\n":
            if s[i] in SPACE:
                i += 1
            elif s.startswith("/*", i) or s.startswith("//", i):
                i = self.comment(i)
            else:
                i = self.token(i)
        return i

    def token(self, i: int) -> int:
        """The index after the token that starts at i (not white space, a comment or a newline)."""
        s, c = self.text, self.text[i]
        if c == "\\" or ord(c) > 127:
            what = "backslash" if c == "\\" else "non-ASCII character"
            raise Refused(self.line(i), f"a {what} outside comments and string literals: write identifiers and code "
                                        f"in ASCII")
        m = IDENT.match(s, i)
        if m:
            word, end = m.group(0), m.end()
            if word in ("__has_include", "__has_include_next"):
                raise Refused(self.line(i), f"{word}: the kit's headers are always there; remove the test")
            if end < len(s) and s[end] == '"' and word in RAW_PREFIXES:
                return self.raw_string(end)
            if end < len(s) and s[end] in "\"'" and word in STRING_PREFIXES:
                return self.quoted(end)
            return end
        if c.isdigit() or (c == "." and i + 1 < len(s) and s[i + 1].isdigit()):
            return self.number(i)
        if c in "\"'":
            return self.quoted(i)
        return i + 1

    def quoted(self, i: int) -> int:
        """Past a string or character literal; an unterminated one ends before the newline, as in GCC."""
        s, quote, j = self.text, self.text[i], i + 1
        while j < len(s):
            if s[j] == "\\" and j + 1 < len(s) and s[j + 1] != "\n":
                j += 2
            elif s[j] == quote:
                return j + 1
            elif s[j] == "\n":
                return j
            else:
                j += 1
        return j

    def number(self, i: int) -> int:
        """Past a preprocessing number (digits, letters, ., e+ / p+ signs, ' digit separators)."""
        s, j = self.text, i + 1
        while j < len(s):
            c = s[j]
            if c.isascii() and (c.isalnum() or c in "_.$"):
                j += 1
            elif c in "+-" and s[j - 1] in "eEpP":
                j += 1
            elif c == "'" and j + 1 < len(s) and s[j + 1].isascii() and (s[j + 1].isalnum() or s[j + 1] == "_"):
                j += 2
            elif c == "'":
                raise Refused(self.line(j), "a ' right after a number (a digit separator must be followed by a "
                                            "digit): put a space or an operator between them")
            else:
                break
        return j

    def raw_string(self, i: int) -> int:
        """Past the raw string whose opening quote is text[i], read from the original text: inside a raw string,
        backslash-newlines are kept."""
        start = self.where[i]
        m = RAW_OPENING.match(self.original, start)
        if not m or '"' in m.group(1):
            raise Refused(self.line(i), "a raw string literal whose delimiter is not up to 16 letters, digits or "
                                        "punctuation followed by (")
        end = self.original.find(")" + m.group(1) + '"', m.end())
        if end < 0:
            raise Refused(self.line(i), "a raw string literal that never ends")
        return bisect.bisect_left(self.where, end + len(m.group(1)) + 2)
