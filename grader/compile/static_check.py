"""Static checks of the student's compiled file: what its object (student.o) calls, defines, contains and runs before
main, read from the object itself (symbols, relocations, code bytes, device code), never from the source text.

check_object(path, pattern) returns a Verdict: a list of Findings, each one line for the student ("calls wordexp: not
on the list of what a lab file may call ..."), and notes on anything it could not inspect. The grader gives a lab
with findings 0 points on every test and runs none of them. ToolError means the kit's tools (nm, objdump from
binutils) are missing or failed: a kit problem, never a pass.

The checks read hostile bytes, with the grader's ELF reader (grader/compile/objfile.py) and with nm, objdump, cuobjdump
and zstd: check_object runs them as a program of their own (`python3 -m grader.compile.static_check OBJECT PATTERN OUT`,
inspect_object) in the build's sandbox (grader/compile/build_sandbox.py: bubblewrap, the compile's resource limits), and
reads back its verdict as data. A check that crashes, hangs or runs past a limit on the object is the object's
failure (the finding "unreadable"), never the grader's.

What is looked at:
  - what the file calls (every undefined host symbol, weak ones too): it must be on the allow-list of
    grader/lab_calls.toml for the lab's pattern; atexit, __cxa_atexit and the calls that register device code
    (__cudaRegisterFatBinary, __cudaRegisterFunction, ...) only from the code the list names, so the only device
    code a lab runs is nvcc's from the file, the code the device checks below read;
  - what it defines (strong global definitions): a function with C linkage could replace the C library's, the CUDA
    runtime's or the harness's, as could operator new or the C library's variables; CUB or Thrust anywhere;
  - symbols and relocations by type: indirect functions (STT_GNU_IFUNC, R_X86_64_IRELATIVE) run their resolver
    while the program loads;
  - the startup and exit tables (.init_array, .ctors, .preinit_array, .fini_array, .dtors, .init, .fini): only
    nvcc's own registration function may run before main (and <iostream>'s initializer, which GCC 12 and older put
    in every file that includes it); any .preinit_array is refused;
  - system call instructions: in objdump's listing, and as raw bytes (0f 05, 0f 34, cd 80) at any offset of every
    executable section, which finds one hidden inside another instruction's bytes;
  - the device code (each cubin and PTX text of the fatbinary nvcc's wrapper registers): kernels or functions of
    CUB or Thrust (nm), and code inlined from their headers (the line table of -lineinfo, and PTX's .file
    directives, name the header folders the code came from); .nv_fatbin must hold that fatbinary and nothing else
    (no header of the file's own ahead of it, no entry the runtime could read otherwise than the checks);
  - relocations written over one another (an assembler .reloc on top of the compiler's, which could make nvcc's
    registration register another fatbinary once linked), and a second call of __cudaRegisterFatBinary or
    __cudaRegisterFatBinaryEnd (student code inlined into nvcc's registration, through a __device__ variable's
    operator&, would be inside it);
The checks see what is linked, not what is computed: a call through a pointer computed from an allowed function's
address is beyond them. The runner's sandbox stops what such a call could do to the system, not what it could do
within the CUDA runtime (register a module the checks never saw, say).
"""
import fnmatch
import functools
import json
import re
import struct
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from grader.compile.build_sandbox import TOOL_TIMEOUT, Limits, run_kit_python
from grader.patterns import PATTERNS
from grader.compile.objfile import (Elf, ToolError, device_images, overlapping_relocations, read_elf, read_symbols,
                            require_tools, run_tool)
from grader.report.text import printable

MAX_NAMES = 4  # symbols named per finding; the rest are counted
CALLS_TABLE = Path(__file__).resolve().parents[1] / "lab_calls.toml"

# ---- what the student's file may define or contain ----


@dataclass(frozen=True)
class Rule:
    """Symbols the student's file may not have. where: "defines" (strong global host definitions of functions),
    "defines-data" (of variables), "contains" (any host symbol, and the device code's functions). A pattern fully
    matches the demangled name, which may be followed by its parameter list; with raw = True it matches the symbol's
    name as it is in the object instead. says: what the file does, with {names}; why: what it means for the student."""

    key: str
    where: str
    patterns: tuple
    says: str
    why: str
    raw: bool = False


RULES = (
    Rule("cub", "contains", (r".*\b(cub|thrust)::.*",), "uses CUB or Thrust ({names})",
         "the lab's code may not use CUB or Thrust: write the kernels yourself"),
    Rule("c-functions", "defines", (r"(?!_Z)[A-Za-z_.$][\w.$@]*",),
         "defines {names} with C linkage (extern \"C\")",
         "such a function can replace one of the C library, the CUDA runtime or the harness; write C++ functions, as "
         "the skeleton does", raw=True),
    Rule("operator-new", "defines", (r"operator (new|delete)(\[\])?",), "replaces {names}",
         "the lab's code may not replace the C++ library's memory allocation"),
    Rule("c-data", "defines-data",
         (r"(stdin|stdout|stderr|environ|__environ|_environ|optarg|optind|opterr|optopt|errno)",
          r"(program_invocation_name|program_invocation_short_name|__progname|__progname_full|_IO_2_1_\w+_)"),
         "defines {names}", "the lab's code may not define the C library's variables"),
)

# Code that runs before main (.init_array and the like) or after it (.fini_array). nvcc puts exactly one entry
# there, its registration of the file's kernels; a C++ file that includes <iostream> gets one more from GCC 12 and
# older, an initializer whose only code is std::ios_base::Init's (its relocations name only IOSTREAM_INIT).
STARTUP_SECTIONS = (".init_array", ".ctors", ".preinit_array")
EXIT_SECTIONS = (".fini_array", ".dtors")
CODE_SECTIONS = (".init", ".fini")  # code pasted into the startup code itself
SECTION_TYPES = {14: ".init_array", 15: ".fini_array", 16: ".preinit_array"}  # SHT_INIT_ARRAY and the like
NVCC_REGISTRATION = "_ZL24__sti____cudaRegisterAllv"
# The two static functions of nvcc's host runtime (crt/host_runtime.h) that its registration calls or hands to
# atexit: the callback that registers each kernel and __device__ variable, and the one that unregisters the
# fatbinary. At -O3 GCC inlines the callback into the registration, so it need not exist.
NVCC_REGISTRATION_HELPERS = ("_ZL31__nv_cudaEntityRegisterCallbackPPv", "_ZL26__cudaUnregisterBinaryUtilv")
R_X86_64_PC32, R_X86_64_PLT32 = 2, 4
LISTED_TARGET = re.compile(r"(?:#|\bcall\s+)\s*([0-9a-f]+) <")  # objdump's address of a rip-relative operand or call
IOSTREAM_INIT = ("_ZNSt8ios_base4InitC1Ev", "_ZNSt8ios_base4InitD1Ev", "__cxa_atexit", "__dso_handle",
                 "_ZStL8__ioinit", ".bss")
STARTUP_SAYS = "runs {names} before main"
STARTUP_WHY = ("a static constructor (a function marked __attribute__((constructor)), or a global variable whose "
               "initializer runs code, like `static int x = f();` or a global object with a constructor): the lab's "
               "code may run only when the harness calls it; compute such values inside the function instead")
EXIT_SAYS = "runs {names} after main"
EXIT_WHY = "a static destructor (__attribute__((destructor))): the lab's code may run only when the harness calls it"
# ELF types refused whatever their names: an indirect function's resolver runs while the program loads.
STT_GNU_IFUNC, R_X86_64_IRELATIVE, SHF_EXECINSTR = 10, 37, 0x4
IFUNC_SAYS = "has an indirect function ({names})"
IFUNC_WHY = ("its resolver would run while the program loads, before main (@gnu_indirect_function or "
             "__attribute__((ifunc))): write a plain function")
SYSCALL_SAYS = "makes system calls itself (a {names} instruction)"
SYSCALL_WHY = "the lab's code may not make system calls"
SYSCALL_INSTRUCTIONS = re.compile(r"^\s*([0-9a-f]+):\t(syscall|sysenter|int\s+\$0x80)\b", re.M)
SYSCALL_BYTES = {b"\x0f\x05": "syscall", b"\x0f\x34": "sysenter", b"\xcd\x80": "int $0x80"}
HIDDEN_SAYS = "contains a system call instruction hidden in its code ({names})"
HIDDEN_WHY = "the lab's code may not make system calls, nor jump into the middle of an instruction"
# The folders of CUB's and Thrust's headers, as the device code's line table names them (CUDA 12: include/cub/...,
# CUDA 13: include/cccl/cub/...).
DEVICE_HEADERS = re.compile(rb"/include/(?:cccl/)?(cub|thrust)(?=[/\"\x00])")
DEVICE_SAYS = "has device code from {names}'s headers"
DEVICE_WHY = ("the lab's code may not use CUB or Thrust (cub::BlockReduce, cub::WarpScan, ...): write the kernels "
              "yourself")
NOT_LISTED = "not on the list of what a lab file may call ({summary}; grader/lab_calls.toml)"
FATBIN_SAYS = "has device code that nvcc did not lay out ({names})"
FATBIN_WHY = ("the device checks read the fatbinary nvcc makes from the file, which is all the CUDA runtime may load: "
              "no data of the file's own in .nv_fatbin or .nvFatBinSegment")
RELOC_SAYS = "has relocations written over one another ({names})"
RELOC_WHY = ("a compiler never writes two relocations into the same bytes; an assembler .reloc directive can, to "
             "change what nvcc's code refers to once linked: write plain C++")
REGISTRATION_SAYS = "registers device code more than once ({names})"
REGISTRATION_WHY = ("nvcc's registration calls __cudaRegisterFatBinary and __cudaRegisterFatBinaryEnd once each, for "
                    "the fatbinary made from the file; a second call registers device code the checks never saw")
ONCE = ("__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd")
LIST_SUMMARY = "kernel launches, device memory, streams and events, printing, math, what {header} declares"
ONLY_IN_SAYS = "calls {names}"


@dataclass(frozen=True)
class Finding:
    key: str  # the rule's key ("calls", "copies", "startup", "device-cub", ...)
    message: str  # one line for the student


@dataclass
class Verdict:
    findings: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # what could not be inspected (compressed device code, ...)

    @property
    def ok(self) -> bool:
        return not self.findings


# ---- the allow-list (grader/lab_calls.toml) ----


@dataclass(frozen=True)
class Allowed:
    group: str
    names: tuple  # as in lab_calls.toml: exact, or a C++ name ending in "*" (a prefix)
    patterns: tuple  # the harness patterns it applies to; () for every lab
    only_in: str = ""  # "nvcc-registration", "iostream-init", or "" for anywhere


@dataclass(frozen=True)
class Advice:
    key: str
    names: tuple  # shell-style patterns
    says: str


ONLY_IN = ("", "nvcc-registration", "iostream-init")


@functools.lru_cache(maxsize=None)
def load_calls(path=CALLS_TABLE) -> tuple:
    """(the Allowed groups, the Advice entries) of lab_calls.toml; ValueError when it is malformed (a kit bug)."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    allowed, advice = [], []
    for k, group in enumerate(data.get("allow", [])):
        unknown = set(group) - {"group", "why", "names", "patterns", "only_in"}
        if unknown or not group.get("why") or not group.get("names") or group.get("only_in", "") not in ONLY_IN:
            raise ValueError(f"{path}: [[allow]] #{k + 1} ({group.get('group')}): needs group, why and names; "
                             f"only_in is one of {ONLY_IN[1:]}; unknown keys {sorted(unknown)}")
        allowed.append(Allowed(group["group"], tuple(group["names"]), tuple(group.get("patterns", ())),
                               group.get("only_in", "")))
    for name, pattern in PATTERNS.items():  # what each pattern's labs may call of the kit (its pattern.toml's [calls])
        if pattern.calls.get("names"):
            allowed.append(Allowed(f"the kit: {', '.join(pattern.headers) or name}", tuple(pattern.calls["names"]),
                                   (name,), ""))
    for entry in data.get("advice", []):
        advice.append(Advice(entry["key"], tuple(entry["names"]), " ".join(entry["says"].split())))
    if not advice or advice[-1].names != ("*",):
        raise ValueError(f"{path}: the last [[advice]] must be the catch-all (names = [\"*\"])")
    return tuple(allowed), tuple(advice)


def allowed_for(pattern: str, path=CALLS_TABLE) -> list:
    """The Allowed groups that apply to a lab of the given harness pattern."""
    return [a for a in load_calls(path)[0] if not a.patterns or pattern in a.patterns]


def find_allowed(name: str, groups) -> Allowed | None:
    """The first group that lists name (exactly, or by a C++ prefix ending in "*")."""
    for group in groups:
        for entry in group.names:
            if name == entry or (entry.endswith("*") and "::" in entry and name.startswith(entry[:-1])):
                return group
    return None


def advice_for(name: str, path=CALLS_TABLE) -> Advice:
    return next(a for a in load_calls(path)[1] if any(fnmatch.fnmatchcase(name, p) for p in a.names))


def header_api(pattern: str, path=CALLS_TABLE) -> list:
    """The harness functions a lab of this pattern may call (the pattern's own groups)."""
    return [n for a in load_calls(path)[0] if pattern in a.patterns for n in a.names]


# ---- names for people ----

SPECIAL_NAME = re.compile(r"^(typeinfo name for|typeinfo for|vtable for|VTT for|construction vtable for|"
                          r"guard variable for|TLS init function for|TLS wrapper function for|"
                          r"(?:non-|covariant return )?virtual thunk to) ")
OPERATOR = re.compile(r"\boperator(?:\s*(?:new|delete)(?:\[\])?\b|<<=|>>=|<=>|<<|>>|<=|>=|->\*|->|\(\)|\[\]|[<>])")


def short_name(demangled: str) -> str:
    """A demangled name without its return type, template arguments, parameters and versioned inline namespaces:
    "void cub::CUB_300001_SM_750::detail::EmptyKernel<void>()" -> "cub::detail::EmptyKernel",
    "std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char const*)" -> "std::operator<<",
    "typeinfo for std::runtime_error" -> itself."""
    name = re.sub(r" \[clone [^\]]*\]$", "", demangled)
    special = SPECIAL_NAME.match(name)
    if special:
        return special.group(0) + short_name(name[special.end():])
    name = name.replace("(anonymous namespace)", "{anonymous}")
    operators = []

    def keep(m):
        operators.append(" ".join(m.group(0).split()))
        return f"\x00{len(operators) - 1}\x00"

    kept, depth = [], 0
    for ch in OPERATOR.sub(keep, name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            kept.append(ch)
    name = "".join(kept).split("(")[0].strip().split(" ")[-1]
    name = re.sub(r"\x00(\d+)\x00", lambda m: operators[int(m.group(1))], name)
    name = re.sub(r"(CUB|THRUST)_\d+(_SM(_\d+)+)?(_NS)?::|__\d+::", "", name)
    return name.replace("{anonymous}", "(anonymous namespace)")


def c_name(name: str) -> str:
    """The C function a student wrote for a symbol the compiler put in its place, named as written: glibc's
    fortified variants (-D_FORTIFY_SOURCE, on by default in some distributions' compilers), "__fread_chk" -> "fread";
    and its ISO C variants, which glibc's headers pick under _GNU_SOURCE (always on in g++): C23's number parsers
    from glibc 2.38 (Ubuntu 24.04), "__isoc23_strtoul" -> "strtoul", and C99's scanf family, "__isoc99_sscanf" ->
    "sscanf"."""
    return re.sub(r"^__isoc(?:99|23)_(\w+)$", r"\1", re.sub(r"^__(\w+?)_chk$", r"\1", name))


def listed_name(name: str, demangled: str) -> str:
    """How lab_calls.toml names a symbol: C names as written (c_name), C++ names by their short_name."""
    return short_name(demangled) if name.startswith("_Z") else c_name(name)


def _names(names) -> str:
    names = list(dict.fromkeys(names))
    shown = ", ".join(names[:MAX_NAMES])
    return shown + (f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else "")


def _finding(key: str, says: str, why: str, names) -> Finding:
    return Finding(key, f"{says.format(names=_names(names))}: {why}")


# ---- the checks ----


def _matches(patterns, name: str) -> bool:
    return any(re.fullmatch(rf"(?:{p})(?:\(.*)?", name, re.S) for p in patterns)


DEFINED_FUNCTIONS, DEFINED_DATA = "TWi", "DBRCGSV"


def check_symbols(symbols, device_functions=()) -> list:
    """Findings of the RULES over the host symbols' definitions (and the device code's function symbols)."""
    hits = {}  # rule key -> names, in the order of RULES
    for sym in symbols:
        if sym.name.startswith(".") or sym.kind in "aN?":
            continue
        for rule in RULES:
            if rule.where == "defines" and sym.kind not in DEFINED_FUNCTIONS:
                continue
            if rule.where == "defines-data" and (sym.kind not in DEFINED_DATA or sym.name.startswith("DW.ref.")):
                continue
            if rule.where == "contains" and "__device_stub__" in sym.demangled:
                continue  # a kernel's launch stub: the kernel itself is named, and the stub's parameters are not
            if _matches(rule.patterns, sym.name if rule.raw else sym.demangled):
                hits.setdefault(rule.key, []).append(c_name(short_name(sym.demangled) if not rule.raw else sym.name))
                break
    for sym in device_functions:
        if _matches(RULES[0].patterns, sym.demangled):
            hits.setdefault(RULES[0].key, []).append(short_name(sym.demangled))
    if RULES[0].key in hits:  # CUB's and Thrust's own names first, before the code that merely uses their types
        hits[RULES[0].key].sort(key=lambda n: not re.match(r"(cub|thrust)::", n))
    return [_finding(rule.key, rule.says, rule.why, hits[rule.key]) for rule in RULES if rule.key in hits]


def undefined_symbols(elf: Elf, symbols) -> list:
    """(index in the symbol table, name, listed name) of every undefined global or weak symbol: what the file calls
    or reads from elsewhere."""
    demangled = {s.name: s.demangled for s in symbols}
    return [(k, s["name"], listed_name(s["name"], demangled.get(s["name"], s["name"])))
            for k, s in enumerate(elf.symbols)
            if s["shndx"] == 0 and s["name"] and s["bind"] in (1, 2) and s["type"] != 4]  # not STT_FILE


def check_calls(elf: Elf, symbols, pattern: str, path=CALLS_TABLE, listing: str = "") -> list:
    """Findings for every undefined symbol not on the allow-list of the pattern, and for an only_in symbol referenced
    from anywhere but the code its group names (listing: objdump -d of the object, see registration_functions)."""
    groups = allowed_for(pattern, path)
    registration = registration_functions(elf, listing)
    refused, misplaced = {}, {}  # advice key -> names; advice key -> "name in function()"
    references = {}  # symbol index -> [(section index, offset)]
    for target, offset, sym, _, _ in elf.relocation_entries():
        references.setdefault(sym, []).append((target, offset))
    demangled = {s.name: s.demangled for s in symbols}
    for index, name, shown in undefined_symbols(elf, symbols):
        group = find_allowed(shown, groups)
        if group is None:
            refused.setdefault(advice_for(shown, path).key, []).append(shown)
            continue
        if not group.only_in:
            continue
        for section, offset in references.get(index, []):
            function = elf.function_at(section, offset)
            if not _inside(elf, section, offset, group.only_in, registration):
                where = (short_name(demangled.get(function, function)) + "()" if function
                         else f"{elf.sections[section]['name']}+{offset:#x}")
                misplaced.setdefault(advice_for(shown, path).key, []).append(f"{shown} in {where}")
    findings = []
    api = ", ".join(header_api(pattern, path))
    header = f"{pattern}.h"
    for advice in load_calls(path)[1]:
        if advice.key in refused:
            says = NOT_LISTED.format(summary=LIST_SUMMARY.format(header=header))
            findings.append(_finding(advice.key, "calls {names}: " + says, advice.says.format(api=api),
                                     refused[advice.key]))
        if advice.key in misplaced:
            findings.append(_finding(advice.key, ONLY_IN_SAYS, advice.says.format(api=api), misplaced[advice.key]))
    return findings


def _inside(elf: Elf, section: int, offset: int, only_in: str, registration: set) -> bool:
    """True when the code at (section, offset) belongs to the code only_in names (registration: the functions of
    nvcc's, registration_functions), and to no other function."""
    functions = elf.functions_at(section, offset)
    if len(functions) != 1:  # outside any function, or in overlapping ones: nobody's code for sure
        return False
    if only_in == "nvcc-registration":
        return functions[0]["name"] in registration
    return _iostream_init(elf, functions[0]["name"])  # "iostream-init"


def registration_functions(elf: Elf, listing: str = "") -> set:
    """The names of the functions that make up nvcc's registration of the file's kernels: the function it runs before
    main (check_startup holds .init_array to it), and each helper of NVCC_REGISTRATION_HELPERS that this function
    refers to, by a relocation or (within one section, where the assembler needs none) by the address of a call or
    lea in objdump's listing of it. A function counts only when no other function symbol overlaps its code, so that
    a symbol the lab's own code names after nvcc's (an asm label where GCC inlined nvcc's callback) adds nothing. The
    calls that register a fatbinary and its kernels (__cudaRegisterFatBinary, __cudaRegisterFunction, ...) are
    allowed only there, which keeps a fatbinary the file carries as data (CUB's kernels, or kernels the static
    checks never saw) from being registered."""
    funcs = [s for s in elf.symbols if s["type"] == 2 and s["shndx"]]
    alone = {s["name"]: s for s in funcs if s["name"] in (NVCC_REGISTRATION,) + NVCC_REGISTRATION_HELPERS
             and s["bind"] == 0 and all(o is s or o["shndx"] != s["shndx"]
                                         or o["value"] + max(o["size"], 1) <= s["value"]
                                         or s["value"] + max(s["size"], 1) <= o["value"] for o in funcs)}
    sti = alone.get(NVCC_REGISTRATION)
    if sti is None:
        return set()
    addresses = set()  # (section index, offset) that the registration refers to
    found = {NVCC_REGISTRATION}
    for target, offset, index, addend, rtype in elf.relocation_entries():
        if target != sti["shndx"] or not sti["value"] <= offset < sti["value"] + sti["size"]:
            continue
        symbol = elf.symbols[index]
        if symbol["type"] == 3:  # a section symbol plus an offset: the address, where a call or lea points
            addresses.add((symbol["shndx"], addend + (4 if rtype in (R_X86_64_PC32, R_X86_64_PLT32) else 0)))
        elif symbol["name"] in alone:
            found.add(symbol["name"])
    block = re.search(rf"^[0-9a-f]+ <{re.escape(NVCC_REGISTRATION)}>:\n(.*?)(?:\n\n|\Z)", listing, re.M | re.S)
    if block:
        addresses.update((sti["shndx"], int(a, 16)) for a in LISTED_TARGET.findall(block.group(1)))
    found.update(name for name, h in alone.items() if (h["shndx"], h["value"]) in addresses)
    return found


def _iostream_init(elf: Elf, name: str) -> bool:
    """True when the function name is GCC's initializer of <iostream> and nothing else: every relocation in its body
    names IOSTREAM_INIT, one of them std::ios_base::Init's constructor."""
    sym = next((s for s in elf.symbols if s["name"] == name and s["type"] == 2), None)
    if not sym or not name.startswith("_GLOBAL__sub_I_"):
        return False
    targets = {elf.target_name(s, 0) if s["type"] != 3 else elf.sections[s["shndx"]]["name"]
               for off, s, _ in elf.relocations(sym["shndx"]) if sym["value"] <= off < sym["value"] + sym["size"]}
    return IOSTREAM_INIT[0] in targets and targets <= set(IOSTREAM_INIT)


# Names the C start-up files (crti's _init, crtbegin's frame_dummy and __do_global_dtors_aux) call when something
# defines them, weak as they are there: a definition in the student's object, function or data, runs before main
# (tests/attacks/54, 55); and the section crtbegin hands to _ITM_registerTMCloneTable.
STARTUP_HOOKS = ("__gmon_start__", "_ITM_registerTMCloneTable", "_ITM_deregisterTMCloneTable")
STARTUP_HOOK_SECTIONS = (".tm_clone_table",)


def check_startup(elf: Elf, symbols) -> list:
    """Findings for code run before or after main other than nvcc's registration (and <iostream>'s initializer),
    and for the start-up files' hooks (STARTUP_HOOKS) defined by the student's object."""
    demangled = {s.name: s.demangled for s in symbols}
    before, after, nvcc_seen = [], [], 0
    before += [f"{sym['name']} (which the C start-up files call)" for sym in elf.symbols
               if sym["name"] in STARTUP_HOOKS and sym["shndx"] != 0]
    before += [f"a {s['name']} section" for s in elf.sections if s["name"] in STARTUP_HOOK_SECTIONS and s["size"]]
    for index, section in enumerate(elf.sections):
        name = section["name"]
        base = next((b for b in STARTUP_SECTIONS + EXIT_SECTIONS if name == b or name.startswith(b + ".")), None)
        base = base or SECTION_TYPES.get(section["type"])  # an array of pointers to run, whatever its name
        if name in CODE_SECTIONS and section["size"]:
            before.append(f"code in the {name} section")
            continue
        if base is None or section["type"] in (4, 9):  # the RELA/REL sections themselves
            continue
        if base == ".preinit_array" and not section["size"]:
            before.append(f"a {name} section")  # refused even empty: nothing of a lab belongs there
        relocs = elf.relocations(index)
        entries = section["size"] // 8
        targets = [elf.target_name(sym, addend) for _, sym, addend in relocs]
        targets += [f"{name}+{8 * k:#x}" for k in range(len(targets), entries)]  # entries without a relocation
        for target in targets:
            if base == ".init_array" and target == NVCC_REGISTRATION and not nvcc_seen:
                nvcc_seen += 1
                continue
            if base == ".init_array" and _iostream_init(elf, target):
                continue
            if target.startswith("_GLOBAL__sub_I_"):
                shown = f"the initializers of its global variables ({target})"
            elif target in demangled:
                shown = short_name(demangled[target]) + "()"
            else:
                shown = target  # a section and offset: no function is defined there
            (after if base in EXIT_SECTIONS else before).append(shown)
    findings = []
    if before:
        findings.append(_finding("startup", STARTUP_SAYS, STARTUP_WHY, before))
    if after:
        findings.append(_finding("exit", EXIT_SAYS, EXIT_WHY, after))
    return findings


def check_relocations(elf: Elf) -> list:
    """Relocations written over one another, and a registration call referred to more than once (see ONCE)."""
    findings = []
    overlapping = overlapping_relocations(elf)
    if overlapping:
        findings.append(_finding("relocations", RELOC_SAYS, RELOC_WHY, overlapping))
    counts = {name: 0 for name in ONCE}
    for _, _, index, _, _ in elf.relocation_entries():
        name = elf.symbols[index]["name"]
        if name in counts:
            counts[name] += 1
    twice = [f"{name} {n} times" for name, n in counts.items() if n > 1]
    if twice:
        findings.append(_finding("registers-twice", REGISTRATION_SAYS, REGISTRATION_WHY, twice))
    return findings


def check_types(elf: Elf) -> list:
    """Indirect functions, by symbol type (STT_GNU_IFUNC, however they were written) and relocation type
    (R_X86_64_IRELATIVE)."""
    found = [s["name"] for s in elf.symbols if s["type"] == STT_GNU_IFUNC]
    if any(rtype == R_X86_64_IRELATIVE for *_, rtype in elf.relocation_entries()):
        found.append("an R_X86_64_IRELATIVE relocation")
    return [_finding("ifunc", IFUNC_SAYS, IFUNC_WHY, found)] if found else []


def disassemble(objdump: str, path) -> str:
    """objdump's listing of the object's executable sections, one instruction a line."""
    return run_tool([objdump, "-d", "--no-show-raw-insn", "-w", str(path)], path)


def check_syscalls(listing: str, elf: Elf) -> list:
    """System call instructions in objdump's listing of the executable sections, and their bytes anywhere in those
    sections: bytes that objdump does not list as an instruction are one hidden inside another instruction."""
    shown, visible = set(), set()  # instruction names; (section, offset) of the listed ones
    for part in re.split(r"^Disassembly of section ", listing, flags=re.M)[1:]:
        section = part.split(":", 1)[0].strip()
        for m in SYSCALL_INSTRUCTIONS.finditer(part):
            shown.add(" ".join(m.group(2).split()))
            visible.add((section, int(m.group(1), 16)))
    hidden = []
    for section in elf.sections:
        if not section["flags"] & SHF_EXECINSTR:
            continue
        code = elf.contents(section)
        for pattern, what in SYSCALL_BYTES.items():
            start = code.find(pattern)
            while start >= 0:
                if (section["name"], start) not in visible:
                    hidden.append(f"{what} at {section['name']}+{start:#x}")
                start = code.find(pattern, start + 1)
    findings = [_finding("syscall", SYSCALL_SAYS, SYSCALL_WHY, sorted(shown))] if shown else []
    if hidden:
        findings.append(_finding("hidden-syscall", HIDDEN_SAYS, HIDDEN_WHY, hidden))
    return findings


def check_device(nm: str, elf: Elf, path) -> tuple:
    """(device function symbols, findings from the line tables, notes) over the cubins of the object at path."""
    try:
        images, texts, problems, notes = device_images(elf, path)
    except struct.error as e:
        images, texts, problems, notes = [], [], [f"its fatbinary cannot be read ({e})"], []
    functions, headers = [], set()
    for text in texts:  # PTX: the line table's .file directives name the headers
        headers.update(m.group(1).decode() for m in DEVICE_HEADERS.finditer(text))
    with tempfile.TemporaryDirectory(prefix="static-check-") as tmp:
        for k, image in enumerate(images):
            path = Path(tmp) / f"device{k}.cubin"
            path.write_bytes(image)
            try:
                functions += [s for s in read_symbols(nm, path) if s.kind in "TtWw"]
            except ToolError as e:
                notes.append(f"the device code's symbols could not be read ({e})")
            try:
                cubin = Elf(image, f"device image {k}")
            except (ValueError, struct.error, IndexError) as e:
                notes.append(f"device image {k} could not be read ({e})")
                continue
            for section in cubin.sections:
                if section["name"].startswith((".debug_line", ".nv_debug_ptx_txt", ".debug_str")):
                    headers.update(m.group(1).decode() for m in DEVICE_HEADERS.finditer(cubin.contents(section)))
    findings = []
    if headers:
        names = [{"cub": "CUB", "thrust": "Thrust"}[h] for h in sorted(headers)]
        findings.append(_finding("device-cub", DEVICE_SAYS, DEVICE_WHY, names))
    if problems:
        findings.append(_finding("fatbin", FATBIN_SAYS, FATBIN_WHY, problems))
    return functions, findings, notes


UNREADABLE_SAYS = ("the kit could not read your object file: {error}. The object nvcc made of your file is not one "
                   "the checks can read (an unusual construct: assembler directives, odd symbol names?); every test "
                   "of this lab scores 0. Write the lab in plain CUDA C++; if it is plain, tell the course staff, "
                   "quoting this message")


CRASHED_SAYS = ("the kit's static checks of your object file did not finish: {why}. Every test of this lab scores 0. "
                "Write the lab in plain CUDA C++; if it is plain, tell the course staff, quoting this message")
VERDICT_FILE, STARTED_FILE = "verdict.json", "started"


def check_object(path, pattern: str, *, sandbox: str = "auto", limits: Limits = Limits(),
                 timeout: float = TOOL_TIMEOUT) -> Verdict:
    """The static checks of one student object (built from the file of a lab of the given harness pattern), run by
    inspect_object in a program of its own, in the build's sandbox (sandbox: "auto", "require" or "off", as
    grader.compile.build.build_lab's; limits: its resource limits; timeout: seconds for all of it).

    ToolError (a kit problem) when nm or objdump is missing, the kit's allow-list cannot be read, the sandbox is
    required and cannot run, or the checks' program did not start. A program that started and then crashed, hung
    or ran past a limit on the object is the object's failure: one finding, "unreadable"."""
    path = Path(path).resolve()
    _kit_ready(pattern)
    with tempfile.TemporaryDirectory(prefix="static-check-") as tmp:
        out = Path(tmp)
        try:
            proc = run_kit_python("grader.compile.static_check", [path, pattern, out], read_only=[path] if path.exists()
                                  else [], writable=[out], sandbox=sandbox, limits=limits, timeout=timeout)
        except ValueError as e:  # bubblewrap required and missing
            raise ToolError(str(e)) from None
        if not (out / STARTED_FILE).is_file():
            raise ToolError(f"the static checks' program did not start (a kit problem): "
                            f"{printable(proc.output.strip(), keep='')[-500:] or f'exit status {proc.returncode}'}")
        verdict = _read_verdict(out / VERDICT_FILE)
    if proc.timed_out:
        why = f"they ran longer than {timeout:g} s"
    elif verdict is not None and proc.returncode == 0:
        return verdict
    elif proc.returncode is not None and proc.returncode < 0:
        why = f"they were killed by signal {-proc.returncode} (a limit: {limits.cpu_seconds} s of CPU time, " \
              f"{limits.address_space >> 30} GiB of memory)"
    else:
        tail = printable(proc.output.strip(), keep="").splitlines()[-1:] or [f"exit status {proc.returncode}"]
        why = f"they stopped ({tail[0][:300]})"
    return Verdict([Finding("unreadable", CRASHED_SAYS.format(why=why))])


def _kit_ready(pattern: str) -> None:
    """ToolError when the kit cannot check objects here: nm or objdump missing, lab_calls.toml unreadable."""
    require_tools()
    try:
        allowed_for(pattern)  # a broken lab_calls.toml is the kit's problem, found before the object is read
    except (OSError, ValueError, KeyError, TypeError, tomllib.TOMLDecodeError) as e:
        raise ToolError(f"the kit's {CALLS_TABLE.name} cannot be read: {e}") from None


def _read_verdict(path: Path) -> Verdict | None:
    """The Verdict the checks' program wrote (JSON: findings as [key, message] pairs, notes), or None when it wrote
    none or something else."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        findings = [Finding(str(key), str(message)) for key, message in data["findings"]]
        return Verdict(findings, [str(n) for n in data["notes"]])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def inspect_object(path, pattern: str) -> Verdict:
    """The static checks of one student object, in this process: only for the checks' own program (main), which
    check_object runs in the sandbox.

    ToolError (a kit problem) as check_object's. Whatever else goes wrong while the object is read (a tool that fails
    on it, an exception of the checks on what is in it) is the object's: one finding, "unreadable", that says so
    (UNREADABLE_SAYS), never a pass and never the kit's."""
    tools = require_tools()
    _kit_ready(pattern)
    try:
        return _check_object(tools, Path(path), pattern)
    except Exception as e:  # noqa: BLE001 - the student's object made the checks fail: the student's failure
        error = printable(f"{type(e).__name__ if not isinstance(e, ToolError) else 'a tool failed'}: {e}", keep="")
        return Verdict([Finding("unreadable", UNREADABLE_SAYS.format(error=error[:300]))])


def main(argv=None) -> int:
    """`python3 -m grader.compile.static_check OBJECT PATTERN OUT`: writes OUT/started once the kit is ready (the tools
    found, the allow-list read), then OUT/verdict.json. Exit status 0, or 1 after a kit problem's message on stderr."""
    import argparse
    import sys
    p = argparse.ArgumentParser(prog="python3 -m grader.compile.static_check",
                                description="The grader's static checks of one compiled lab file.")
    p.add_argument("object")
    p.add_argument("pattern")
    p.add_argument("out", type=Path, help="a folder for the files 'started' and 'verdict.json'")
    args = p.parse_args(argv)
    try:
        _kit_ready(args.pattern)
    except ToolError as e:
        print(e, file=sys.stderr)
        return 1
    (args.out / STARTED_FILE).write_text("")
    verdict = inspect_object(args.object, args.pattern)
    data = {"findings": [[f.key, f.message] for f in verdict.findings], "notes": verdict.notes}
    (args.out / VERDICT_FILE).write_text(json.dumps(data), encoding="utf-8")
    return 0


def _check_object(tools: dict, path: Path, pattern: str) -> Verdict:
    symbols = read_symbols(tools["nm"], path)
    elf = read_elf(path)
    device_functions, device_findings, notes = check_device(tools["nm"], elf, path)
    findings = check_symbols(symbols, device_functions)
    listing = disassemble(tools["objdump"], path)
    findings += check_calls(elf, symbols, pattern, listing=listing)
    findings += device_findings
    findings += check_types(elf)
    findings += check_relocations(elf)
    findings += check_startup(elf, symbols)
    findings += check_syscalls(listing, elf)
    return Verdict(findings, notes)


if __name__ == "__main__":
    raise SystemExit(main())
