"""Static checks of the student's compiled file: what its object (student.o) calls, defines, contains and runs before
main, read from the object itself (symbols, relocations, device code), never from the source text.

check_object(path, pattern) returns a Verdict: a list of Findings, each one line for the student ("calls fopen: the
lab's code may not open, read or write files ..."), and notes on anything it could not inspect. The grader gives a
lab with findings 0 points on every test and runs none of them. ToolError means the kit's tools (nm, objdump from
binutils) are missing or failed: a kit problem, never a pass.

What is looked at:
  - the host symbols (nm): what the file calls (undefined symbols), what it defines (strong global definitions:
    a function with C linkage could replace the C library's, the CUDA runtime's or the harness's), and CUB or Thrust
    anywhere;
  - the startup and exit tables (.init_array, .ctors, .preinit_array, .fini_array, .dtors): only nvcc's own
    registration function may run before main (and <iostream>'s initializer, which GCC 12 and older put in every
    file that includes it);
  - system calls made directly (a syscall instruction in the host code, objdump);
  - the device code (each cubin in the object's fatbin): kernels or functions of CUB or Thrust (nm), and code
    inlined from their headers (the line table of -lineinfo names the header folders the code came from).
Every list below is a table; the first rule that matches a symbol reports it.
"""
import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

TOOL_TIMEOUT = 120.0
MAX_NAMES = 4  # symbols named per finding; the rest are counted

# ---- what the student's file may not use ----


@dataclass(frozen=True)
class Rule:
    """Symbols the student's file may not have. where: "calls" (undefined host symbols), "defines" (strong global
    host definitions of functions), "defines-data" (of variables), "contains" (any host symbol, and the device code's
    functions). A pattern fully matches the demangled name, which may be followed by its parameter list; with
    raw = True it matches the symbol's name as it is in the object instead. says: what the file does, with {names};
    why: what it means for the student."""

    key: str
    where: str
    patterns: tuple
    says: str
    why: str
    raw: bool = False


RULES = (
    Rule("cub", "contains", (r".*\b(cub|thrust)::.*",), "uses CUB or Thrust ({names})",
         "the lab's code may not use CUB or Thrust: write the kernels yourself"),
    Rule("libraries", "calls",
         (r"(cublas|cublasLt|cusparse|cufft|curand|cusolver|nccl|npp|nvjpeg|cudnn|cutensor|nvrtc|nvJitLink)\w*",),
         "calls {names}", "the lab's code may not use other libraries (cuBLAS, cuSPARSE, cuFFT, cuRAND, ...): write "
                          "the kernels yourself"),
    Rule("copies", "calls", (r"cudaMemcpy\w*", r"cuMemcpy\w*"), "calls {names}",
         "the lab's code may not copy data between the host and the device (or within it): the answer must be "
         "computed by your kernels, on the GPU, and the harness moves the data"),
    Rule("host-memory", "calls",
         (r"cudaMallocHost", r"cudaHostAlloc", r"cudaHostRegister", r"cudaHostGetDevicePointer", r"cudaMallocManaged",
          r"cudaMemPoolCreate"),
         "calls {names}", "the lab's code may not allocate memory that the host can read (pinned, mapped or managed "
                          "memory): the answer must be computed on the GPU"),
    Rule("managed", "calls", (r"__cudaRegisterManagedVar",), "declares a __managed__ variable",
         "host code could read device data through it; the lab's code may not"),
    Rule("driver", "calls", (r"cu[A-Z]\w*", r"cudaGetDriverEntryPoint\w*", r"cudaGetExportTable"), "calls {names}",
         "the lab's code may use the CUDA runtime API only, not the driver API"),
    Rule("files", "calls",
         (r"(fopen|freopen|fdopen|tmpfile|open|openat|creat|truncate|ftruncate)(64)?", r"__open(at)?(64)?_2",
          r"(read|pread|pread64|readv|preadv|preadv2|write|pwrite|pwrite64|writev|pwritev|pwritev2|dprintf|vdprintf)",
          r"__(read|pread|pread64)_chk", r"__(v?dprintf)_chk",
          r"(fread|fread_unlocked|__fread_chk|__fread_unlocked_chk|fgets|fgets_unlocked|__fgets_chk|getline|getdelim)",
          r"(fscanf|vfscanf|__isoc99_fscanf|__isoc99_vfscanf|__isoc23_fscanf|__isoc23_vfscanf)",
          r"(opendir|fdopendir|readdir|readdir64|scandir|scandir64|nftw|ftw|glob|glob64)",
          r"(stat|stat64|lstat|lstat64|fstatat|fstatat64|statx|__xstat|__xstat64|__lxstat|__lxstat64|__fxstatat)",
          r"(access|faccessat|euidaccess|realpath|readlink|readlinkat|chdir|fchdir|chroot)",
          r"(unlink|unlinkat|remove|rename|renameat|renameat2|mkdir|mkdirat|rmdir|symlink|symlinkat|link|linkat)",
          r"(chmod|fchmod|fchmodat|chown|fchown|lchown|fchownat|utime|utimes|utimensat|futimens|mkfifo|mknod)",
          r"(dup|dup2|dup3|pipe|pipe2|fcntl|fcntl64|ioctl|memfd_create|shm_open|shm_unlink|sendfile|sendfile64)",
          r"(splice|tee|copy_file_range|fanotify_\w+|inotify_\w+)", r"_IO_list_all",
          r"std::(__cxx11::)?basic_(i|o)?fstream<.*", r"std::(__cxx11::)?basic_filebuf<.*",
          r"std::(__)?filesystem::.*"),
         "calls {names}", "the lab's code may not open, read or write files or file descriptors (only the harness does "
                          "input and output; printing to the terminal with printf is fine)"),
    Rule("environment", "calls",
         (r"(getenv|secure_getenv|__secure_getenv|setenv|putenv|unsetenv|clearenv|__environ|_?environ)",),
         "reads or changes the environment ({names})", "the lab's code may not use environment variables"),
    Rule("memory-maps", "calls",
         (r"(mmap|mmap64|munmap|mremap|mprotect|pkey_mprotect|pkey_alloc|shmget|shmat|shmctl|brk|sbrk)",),
         "calls {names}", "the lab's code may not map or protect memory itself"),
    Rule("processes", "calls",
         (r"(system|popen|pclose|fork|vfork|_Fork|clone|clone3|__clone|daemon)",
          r"(execl|execlp|execle|execv|execvp|execvpe|execve|execveat|fexecve|posix_spawn|posix_spawnp)",
          r"(kill|killpg|tgkill|tkill|sigqueue|ptrace|prctl|seccomp|syscall|process_vm_readv|process_vm_writev)",
          r"(setuid|setgid|seteuid|setegid|setreuid|setregid|setresuid|setresgid|unshare|setns|pidfd_\w+)"),
         "calls {names}", "the lab's code may not start or signal processes, or make system calls itself"),
    Rule("loading", "calls", (r"(dlopen|dlmopen|dlsym|dlvsym|dladdr|dladdr1|dlinfo|__libc_dlopen_mode|__libc_dlsym)",),
         "calls {names}", "the lab's code may not load libraries or look functions up at run time"),
    Rule("network", "calls",
         (r"(socket|socketpair|connect|bind|listen|accept|accept4|send|sendto|sendmsg|sendmmsg|recv|recvfrom)",
          r"(recvmsg|recvmmsg|getaddrinfo|gethostbyname|gethostbyname2|gethostbyname_r|getnameinfo|shutdown)"),
         "calls {names}", "the lab's code may not use the network"),
    Rule("threads", "calls",
         (r"(pthread_create|thrd_create|GOMP_\w+|omp_set_\w+)", r"std::thread::_M_start_thread.*"),
         "starts host threads ({names})", "the lab's code runs on the GPU: no OpenMP or host threads"),
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

# Anything no rule names is allowed: the rest of the CUDA runtime, the C and C++ libraries' other functions (printf,
# malloc, time functions), libcu++ and cooperative groups. The reference solutions call (nm -u; CUDA 13, GCC 12):
# nvcc's glue (__cudaRegisterFatBinary, __cudaRegisterFatBinaryEnd, __cudaRegisterFunction, __cudaUnregisterFatBinary,
# __cudaPushCallConfiguration, __cudaPopCallConfiguration, __cudaLaunchKernel, __cudaGetKernel, atexit), the C++
# runtime (_Unwind_Resume, __gxx_personality_v0, __cxa_guard_*), exit, the kit's ppl_cuda_check (CUDA_CHECK),
# reduce_tree_of_blocks (labs 01-04) and kit_exclusive_scan (lab 07), and the runtime's cudaGetLastError,
# cudaMemsetAsync (labs 05, 08), cudaGetDevice, cudaDeviceGetAttribute and
# cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags (lab 05). tests/grader/test_static_check.py checks that every
# solution and skeleton passes.

# The kit's harness: a lab's file may call what its header declares (KIT_API, by harness pattern, and KIT_COMMON for
# every lab) and nothing else of the harness. KIT_INTERNAL names every other function the harness defines (a test
# checks that it covers the harness objects): its CPU references, its result writer, its CUB wrappers, its baseline.
KIT_COMMON = ("ppl_cuda_check",)
KIT_API = {
    "reduce": ("reduce_work_elems", "reduce_tree_of_blocks"),
    "scan": ("scan_work_bytes",),
    "compact": ("compact_work_bytes", "kit_exclusive_scan"),
}
KIT_INTERNAL = (r"ppl_\w+", r"kit_\w+", r"\w+_cub", r"\w*baseline\w*", r"\w+_kernel", r"__device_stub__\w+",
                r"(reduce|scan|compact)_work_\w+", r"reduce_tree_of_blocks", r"main")
KIT_SAYS = "calls the harness's own {names}"
KIT_WHY = "the lab's code may call only what its header declares ({api})"

# Code that runs before main (.init_array and the like) or after it (.fini_array). nvcc puts exactly one entry
# there, its registration of the file's kernels; a C++ file that includes <iostream> gets one more from GCC 12 and
# older, an initializer whose only code is std::ios_base::Init's (its relocations name only IOSTREAM_INIT).
STARTUP_SECTIONS = (".init_array", ".ctors", ".preinit_array")
EXIT_SECTIONS = (".fini_array", ".dtors")
CODE_SECTIONS = (".init", ".fini")  # code pasted into the startup code itself
SECTION_TYPES = {14: ".init_array", 15: ".fini_array", 16: ".preinit_array"}  # SHT_INIT_ARRAY and the like
NVCC_REGISTRATION = "_ZL24__sti____cudaRegisterAllv"
IOSTREAM_INIT = ("_ZNSt8ios_base4InitC1Ev", "_ZNSt8ios_base4InitD1Ev", "__cxa_atexit", "__dso_handle",
                 "_ZStL8__ioinit", ".bss")
STARTUP_SAYS = "runs {names} before main"
STARTUP_WHY = ("a static constructor (a function marked __attribute__((constructor)), or a global variable whose "
               "initializer runs code, like `static int x = f();` or a global object with a constructor): the lab's "
               "code may run only when the harness calls it; compute such values inside the function instead")
EXIT_SAYS = "runs {names} after main"
EXIT_WHY = "a static destructor (__attribute__((destructor))): the lab's code may run only when the harness calls it"
SYSCALL_SAYS = "makes system calls itself (a {names} instruction)"
SYSCALL_WHY = "the lab's code may not make system calls"
SYSCALL_INSTRUCTIONS = re.compile(r"\t(syscall|sysenter|int\s+\$0x80)\b")
# The folders of CUB's and Thrust's headers, as the device code's line table names them (CUDA 12: include/cub/...,
# CUDA 13: include/cccl/cub/...).
DEVICE_HEADERS = re.compile(rb"/include/(?:cccl/)?(cub|thrust)(?=[/\"\x00])")
DEVICE_SAYS = "has device code from {names}'s headers"
DEVICE_WHY = ("the lab's code may not use CUB or Thrust (cub::BlockReduce, cub::WarpScan, ...): write the kernels "
              "yourself")


class ToolError(RuntimeError):
    """A tool the checks need (nm, objdump) is missing or failed, or the object cannot be read: a kit problem."""


@dataclass(frozen=True)
class Finding:
    key: str  # the rule's key ("files", "startup", "device-cub", ...)
    message: str  # one line for the student


@dataclass
class Verdict:
    findings: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # what could not be inspected (compressed device code, ...)

    @property
    def ok(self) -> bool:
        return not self.findings


@dataclass(frozen=True)
class Symbol:
    name: str  # as in the object (mangled)
    demangled: str
    kind: str  # nm's letter: U undefined, T text, W weak, D data, ...


# ---- reading the object ----


def require_tools() -> dict:
    """{"nm": path, "objdump": path}; ToolError naming what is missing."""
    tools = {name: shutil.which(name) for name in ("nm", "objdump")}
    missing = [name for name, path in tools.items() if not path]
    if missing:
        raise ToolError(f"{' and '.join(missing)} not found: the grader's static checks need binutils (nm, objdump) "
                        f"to read the compiled labs; install binutils (a kit problem, not the student's)")
    return tools


def _tool(argv, what: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"{Path(argv[0]).name} failed on {what}: {e}") from None
    if done.returncode != 0:
        raise ToolError(f"{Path(argv[0]).name} failed on {what} (exit {done.returncode}): {done.stderr.strip()[:500]}")
    return done.stdout


def read_symbols(nm: str, path) -> list:
    """Every symbol of the object at path, in its symbol table's order, with its demangled name (nm -P, twice)."""
    raw = _tool([nm, "-P", "-p", str(path)], path).splitlines()
    demangled = _tool([nm, "-P", "-p", "-C", str(path)], path).splitlines()
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

    def relocations(self, target_index: int) -> list:
        """(offset, symbol dict, addend) of every RELA entry that applies to section target_index."""
        out = []
        for s in self.sections:
            if s["type"] == 4 and s["info"] == target_index:  # SHT_RELA
                for off in range(s["offset"], s["offset"] + s["size"], 24):
                    r_offset, r_info, addend = struct.unpack_from("<QQq", self.data, off)
                    out.append((r_offset, self.symbols[r_info >> 32], addend))
        return sorted(out, key=lambda r: r[0])

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


# ---- names for people ----


def short_name(demangled: str) -> str:
    """A demangled name without its return type, template arguments, parameters and versioned inline namespaces:
    "void cub::CUB_300001_SM_750::detail::EmptyKernel<void>()" -> "cub::detail::EmptyKernel"."""
    name = re.sub(r" \[clone [^\]]*\]$", "", demangled).replace("(anonymous namespace)", "{anonymous}")
    if name.startswith("operator") or " operator" in name:
        return name.split("(")[0]
    kept, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            kept.append(ch)
    name = "".join(kept).split("(")[0].strip().split(" ")[-1]
    name = re.sub(r"(CUB|THRUST)_\d+(_SM(_\d+)+)?(_NS)?::|__\d+::", "", name)
    return name.replace("{anonymous}", "(anonymous namespace)")


def c_name(name: str) -> str:
    """The C function a student wrote for a symbol the compiler put in its place: glibc's fortified variants
    (-D_FORTIFY_SOURCE, on by default in some distributions' compilers) are named as written:
    "__fread_chk" -> "fread", "__printf_chk" -> "printf"."""
    return re.sub(r"^__(\w+?)_chk$", r"\1", name)


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


def check_symbols(symbols, pattern: str, device_functions=()) -> list:
    """Findings of the RULES and the kit rule over the host symbols (and the device code's function symbols)."""
    hits = {}  # rule key -> names, in the order of RULES
    for sym in symbols:
        if sym.name.startswith(".") or sym.kind in "aN?":
            continue
        for rule in RULES:
            if rule.where == "calls" and sym.kind != "U":
                continue
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
    findings = [_finding(rule.key, rule.says, rule.why, hits[rule.key]) for rule in RULES if rule.key in hits]
    api = (*KIT_API.get(pattern, ()), *KIT_COMMON)
    internal = [short_name(s.demangled) for s in symbols if s.kind == "U" and short_name(s.demangled) not in api
                and _matches(KIT_INTERNAL, short_name(s.demangled))]
    if internal:
        shown = ", ".join(a for a in api if a != "ppl_cuda_check") + ", CUDA_CHECK and CUDA_CHECK_LAUNCH"
        findings.append(_finding("kit", KIT_SAYS, KIT_WHY.format(api=shown), internal))
    return findings


def _iostream_init(elf: Elf, name: str) -> bool:
    """True when the function name is GCC's initializer of <iostream> and nothing else: every relocation in its body
    names IOSTREAM_INIT, one of them std::ios_base::Init's constructor."""
    sym = next((s for s in elf.symbols if s["name"] == name and s["type"] == 2), None)
    if not sym or not name.startswith("_GLOBAL__sub_I_"):
        return False
    targets = {elf.target_name(s, 0) if s["type"] != 3 else elf.sections[s["shndx"]]["name"]
               for off, s, _ in elf.relocations(sym["shndx"]) if sym["value"] <= off < sym["value"] + sym["size"]}
    return IOSTREAM_INIT[0] in targets and targets <= set(IOSTREAM_INIT)


def check_startup(elf: Elf, symbols) -> list:
    """Findings for code run before or after main other than nvcc's registration (and <iostream>'s initializer)."""
    demangled = {s.name: s.demangled for s in symbols}
    before, after, nvcc_seen = [], [], 0
    for index, section in enumerate(elf.sections):
        name = section["name"]
        base = next((b for b in STARTUP_SECTIONS + EXIT_SECTIONS if name == b or name.startswith(b + ".")), None)
        base = base or SECTION_TYPES.get(section["type"])  # an array of pointers to run, whatever its name
        if name in CODE_SECTIONS and section["size"]:
            before.append(f"code in the {name} section")
            continue
        if base is None or section["type"] in (4, 9):  # the RELA/REL sections themselves
            continue
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


def check_syscalls(objdump: str, path) -> list:
    listing = _tool([objdump, "-d", "--no-show-raw-insn", "-w", str(path)], path)
    found = sorted({" ".join(m.group(1).split()) for m in SYSCALL_INSTRUCTIONS.finditer(listing)})
    return [_finding("syscall", SYSCALL_SAYS, SYSCALL_WHY, found)] if found else []


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


def check_device(nm: str, elf: Elf, path) -> tuple:
    """(device function symbols, findings from the line tables, notes) over the cubins of the object at path."""
    try:
        images, notes = device_images(elf, path)
    except struct.error as e:
        images, notes = [], [f"the object's fatbin could not be read ({e}): its device code was not inspected"]
    functions, headers = [], set()
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
    return functions, findings, notes


def check_object(path, pattern: str) -> Verdict:
    """The static checks of one student object (built from the file of a lab of the given harness pattern)."""
    tools = require_tools()
    path = Path(path)
    symbols = read_symbols(tools["nm"], path)
    elf = read_elf(path)
    device_functions, device_findings, notes = check_device(tools["nm"], elf, path)
    findings = check_symbols(symbols, pattern, device_functions)
    findings += device_findings
    findings += check_startup(elf, symbols)
    findings += check_syscalls(tools["objdump"], path)
    return Verdict(findings, notes)
