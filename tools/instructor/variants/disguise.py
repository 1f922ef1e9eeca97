"""A copied file in disguise, as a student who copies might hand it in: the local variables renamed and
neighbouring declarations that do not depend on each other swapped. The meaning stays the same (it compiles and
computes what the original does: every solution's disguise builds with nvcc), so the grader scores the copy as the
original; only a similarity check (grader/classroom/similarity.py) can tell it is one.

disguise(text, which) returns (the new text, what changed); `which` picks one of the disguises, so that two copies
made with different values do not share a reordering of their own (that would make them look copied from each
other).
"""
import re

QUALIFIERS = r"(?:(?:const|volatile|static|__shared__|unsigned|signed|long|short)\s+)*"
TYPES = r"(?:unsigned|int|size_t|float|float4|double|char|bool|long|status_word|auto|uint32_t|uint64_t|int64_t)"
DECLARATION = re.compile(r"^\s*" + QUALIFIERS + TYPES + r"\b[\s*]+(\w+)\s*(?:=|;|\[|,)")
STATEMENT = re.compile(r"^(\s*)[^\s{}#/][^{}]*;\s*$")  # one whole statement on one line, no braces
ORDERED = re.compile(r"\b(return|__syncthreads|__syncwarp|__threadfence\w*|clock64|atomic\w*|asm)\b")
SUFFIXES = ("_c", "_d", "_e", "_f")


def declared(text: str) -> list:
    """The names the file declares as variables (first declarator of each declaration line), in order."""
    names = []
    for line in text.splitlines():
        found = DECLARATION.match(line)
        if found and found.group(1) not in names:
            names.append(found.group(1))
    return names


def rename(text: str, names, suffix: str = "_c") -> tuple:
    """(text with each of names renamed to name+suffix, {old: new}). A member after . or -> keeps its name
    (x.x stays a field access); a new name already in the file gets a number too."""
    words = set(re.findall(r"\w+", text))
    mapping = {}
    for name in names:
        new, k = name + suffix, 2
        while new in words or new in mapping.values():
            new, k = f"{name}{suffix}{k}", k + 1
        mapping[name] = new
    for name, new in mapping.items():
        text = re.sub(r"(?<![\w.>])" + re.escape(name) + r"\b", new, text)
    return text, mapping


def _assigned(line: str) -> set:
    found = DECLARATION.match(line)
    return set(re.findall(r"(\w+)\s*(?:\[[^\]]*\]\s*)?=(?!=)", line)) | ({found.group(1)} if found else set())


def swappable(lines: list) -> list:
    """Indices k where lines k and k+1 are declarations at the same indentation that neither reads what the other
    sets, with no barrier, fence, atomic or return among them: swapping them changes nothing."""
    found, k = [], 0
    while k + 1 < len(lines):
        a, b = lines[k], lines[k + 1]
        sa, sb = STATEMENT.match(a), STATEMENT.match(b)
        if (sa and sb and sa.group(1) == sb.group(1) and DECLARATION.match(a) and DECLARATION.match(b)
                and not ORDERED.search(a + b) and not _assigned(a) & set(re.findall(r"\w+", b))
                and not _assigned(b) & set(re.findall(r"\w+", a))):
            found.append(k)
            k += 2
        else:
            k += 1
    return found


def reorder(text: str, which: int = 0) -> tuple:
    """(text with every other swappable pair swapped, starting at pair `which % 2`, the number swapped)."""
    lines = text.split("\n")
    chosen = swappable(lines)[which % 2::2]
    for k in chosen:
        lines[k], lines[k + 1] = lines[k + 1], lines[k]
    return "\n".join(lines), len(chosen)


def disguise(text: str, which: int = 0) -> tuple:
    """(the disguised text, "N renamed, M swapped")."""
    moved, swapped = reorder(text, which)
    renamed, mapping = rename(moved, declared(text), SUFFIXES[which % len(SUFFIXES)])
    return renamed, f"{len(mapping)} renamed, {swapped} swapped"
