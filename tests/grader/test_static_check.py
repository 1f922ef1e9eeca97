"""grader/compile/static_check.py and its allow-list (grader/lab_calls.toml): the tables and rules on made-up symbol
lists, then on real objects: every reference solution and every blank skeleton, compiled by nvcc through mk/lab.mk,
passes; each known-wrong submission of tools/instructor/variants/ that the static checks must catch is caught with the
right message, as are made-up files (device-side CUB, a __managed__ variable, a C function replacing the C library's,
system calls, constructors and destructors, a static object with a destructor) and one small file per way out of the
allow-list (ATTACKS: calls of the C library and the CUDA runtime that are not on it, an indirect function, a system call
hidden in another instruction, a .preinit_array entry); files that use what an honest student may well write (HONEST)
pass; and two wrong submissions go through the whole grader (a library call: 0 points, nothing run; a compile
error: the compiler's message).

The objects are compiled once for the module, in parallel (each student file takes 1-5 s, one with CUB's headers
about 10 s). The harness objects are the kit's own (build/harness/<arch>), built once and shared with test_build.py.
"""
import contextlib
import io
import json
import os
import re
import shutil
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

from grader.compile import static_check
from grader.compile.build import build_harness, make_argv
from grader.config import load_config
from grader.grade import main
from grader.run.process import run_process
from grader.compile.objfile import Symbol, ToolError, read_symbols
from grader.compile.static_check import (RULES, advice_for, allowed_for, check_symbols, find_allowed, header_api,
                                         listed_name, load_calls, short_name)
from tests.grader.fakes import KIT, write_file
from tests.grader.static_check_attacks import ATTACKS, attack_source
from tools.author.make_skeletons import derive
from tools.instructor.variants.wrong import submission

LABS = {"01-global-strided": ("reduce", "reduce.cu"), "02-shared-strided": ("reduce", "reduce.cu"),
        "03-sequential": ("reduce", "reduce.cu"), "04-unrolled": ("reduce", "reduce.cu"),
        "05-coarsened": ("reduce", "reduce.cu"), "06-scan": ("scan", "scan.cu"),
        "07-compact": ("compact", "compact.cu"),
        "08-single-pass": ("scan", "scan.cu")}
NOT_LISTED = r"not on the list of what a lab file may call \(.*grader/lab_calls\.toml\): "

# The known-wrong submissions that the static checks catch: (folder, lab) -> what the findings must say.
WRONG = {
    ("host-sum", "01-global-strided"): [rf"^calls cudaMemcpy: {NOT_LISTED}the lab's code may not copy data between "
                                        r"the host and the device"],
    ("reads-expected", "03-sequential"): [rf"^calls fopen, fread, fclose: {NOT_LISTED}the lab's code computes on the "
                                          r"GPU: no files"],
    ("library-call", "05-coarsened"): [r"^uses CUB or Thrust \(cub::detail::\w+, .*: the lab's code may not use CUB "
                                       r"or Thrust", r"^has device code from CUB's headers"],
    ("static-constructor", "05-coarsened"): [r"^runs the initializers of its global variables \(_GLOBAL__sub_I_\w+\) "
                                             r"before main: a static constructor"],
}

# Made-up files: (pattern, source, the findings' keys in order, a pattern each message must match).
SNEAKY = ("scan", r"""#include "scan.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dlfcn.h>
#include <thread>
#include <vector>
#include <cub/block/block_reduce.cuh>

void ppl_cub_exclusive_sum(const int *d_in, int *d_out, size_t n); /* the harness's CUB wrapper */
__managed__ int total;

extern "C" size_t fwrite(const void *p, size_t size, size_t count, FILE *f) { return count; }

__global__ void block_sum_kernel(const int *in, int *out, size_t n)
{
    typedef cub::BlockReduce<int, 256> block_reduce;
    __shared__ typename block_reduce::TempStorage tmp;
    const int s = block_reduce(tmp).Sum(threadIdx.x < n ? in[threadIdx.x] : 0);
    if (threadIdx.x == 0)
        out[0] = total = s;
}

static void late(void) { puts("late"); }

void scan(const int *d_in, int *d_out, size_t n, int exclusive, scan_algorithm algorithm, void *d_work)
{
    static std::vector<int> sizes; /* a static object with a destructor: code after main */
    sizes.push_back((int)n);
    if (getenv("FAST")) {
        ppl_cub_exclusive_sum(d_in, d_out, n);
        return;
    }
    if (write(3, "{}\n", 3) < 0 || !dlopen("libc.so.6", RTLD_NOW))
        return;
    atexit(late);
    long r;
    asm volatile("syscall" : "=a"(r) : "a"(39) : "rcx", "r11", "memory");
    std::thread t([] {});
    t.join();
    block_sum_kernel<<<1, 256>>>(d_in, d_out, n);
}
""", ["cub", "c-functions", "host-memory", "after-main", "kit", "calls", "device-cub", "syscall"], {
    "host-memory": r"^calls __cudaRegisterManagedVar: .*memory that the host can read .*__managed__ variables",
    "after-main": r"^calls (__cxa_atexit in scan\(\), atexit in scan\(\)|atexit in scan\(\), __cxa_atexit in scan\(\)):"
                  r" the lab's code may run only when the harness calls it, not after main",
    "c-functions": r"^defines fwrite with C linkage",
    "kit": rf"^calls ppl_cub_exclusive_sum: {NOT_LISTED}the lab's code may call only what its header declares "
           r"\(scan_work_bytes, CUDA_CHECK and CUDA_CHECK_LAUNCH\)",
    "calls": rf"^calls (?=.*getenv)(?=.*write)(?=.*dlopen).*: {NOT_LISTED}the lab's code computes on the GPU",
    "device-cub": r"^has device code from CUB's headers",
    "syscall": r"^makes system calls itself \(a syscall instruction\)"})

STARTUP = ("reduce", r"""#include "reduce.h"
#include <stdio.h>
#include <stdlib.h>
struct Timer { Timer() { start = rand(); } int start; };
Timer timer; /* a global object with a constructor */
volatile int seen;
__attribute__((constructor)) static void early(void) { seen = rand(); }
__attribute__((destructor)) static void late(void) { printf("%d\n", seen); }
void reduce(float *d_in, float *d_out, size_t n, float *d_work) { if (timer.start == 3) seen = 1; }
""", ["startup", "exit"], {"startup": r"^runs early\(\), the initializers of its global variables \(_GLOBAL__sub_I_"
                                      r"timer\) before main: a static constructor",
                           "exit": r"^runs late\(\) after main: a static destructor"})

# What an honest student may well write: C++ and C headers, <iostream> (whose initializer GCC 12 puts in every file
# that includes it), std::vector, std::string and exceptions, cooperative groups (grid-wide sync too), half floats,
# libcu++, the runtime API (occupancy, attributes, streams, events, launches with attributes), printing, timing, math.
HONEST = ("reduce", r"""#include "reduce.h"
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cassert>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <vector>
#include <string>
#include <stdexcept>
#include <iostream>
#include <chrono>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/atomic>
namespace cg = cooperative_groups;
__device__ float scale = 1.0f;
float host_table[4] = {1, 2, 3, 4};
__global__ void tile_sum_kernel(const float *in, float *out, size_t n)
{
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    float v = cg::reduce(tile, threadIdx.x < n ? in[threadIdx.x] * scale : 0.0f, cg::plus<float>());
    if (tile.thread_rank() == 0)
        cuda::atomic_ref<float, cuda::thread_scope_device>(*out).fetch_add(__half2float(__float2half(v)));
}
__global__ void grid_kernel(float *out) { cg::this_grid().sync(); if (out) out[0] = 1; }
__global__ void cluster_kernel(float *out) { if (out) out[0] = 2; } /* launched with attributes (clusters on sm_90) */
static std::string label(size_t n) { return "n=" + std::to_string(n); }
void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    auto t0 = std::chrono::steady_clock::now();
    std::vector<int> sizes = {3, 1, 2};
    sizes.push_back((int)n);
    std::sort(sizes.begin(), sizes.end());
    assert(n >= 1);
    if (n == 0)
        throw std::invalid_argument(label(n));
    int device = 0, min_grid = 0, block = 0;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    CUDA_CHECK(cudaFuncSetAttribute(tile_sum_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024));
    cudaFuncAttributes attributes;
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, tile_sum_kernel));
    CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, tile_sum_kernel, 0, 0));
    float *extra;
    CUDA_CHECK(cudaMalloc(&extra, 16));
    CUDA_CHECK(cudaFree(extra));
    cudaEvent_t e;
    cudaStream_t s;
    float ms;
    cudaEventCreate(&e);
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaEventRecord(e, s);
    cudaEventSynchronize(e);
    cudaEventElapsedTime(&ms, e, e);
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    cudaEventDestroy(e);
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
    tile_sum_kernel<<<1, 256>>>(d_in, d_out, n);
    CUDA_CHECK_LAUNCH();
    void *args[] = {&d_out};
    CUDA_CHECK(cudaLaunchCooperativeKernel((void *)grid_kernel, 1, 32, args, 0, 0));
    cudaLaunchConfig_t config = {};
    config.gridDim = 2;
    config.blockDim = 32;
    CUDA_CHECK(cudaLaunchKernelEx(&config, cluster_kernel, d_out));
    CUDA_CHECK(cudaDeviceSynchronize());
    if (n == 7)
        fprintf(stderr, "n = %zu %s %f %s\n", n, strerror(1), sqrt((double)n) + host_table[sizes[0]],
                cudaGetErrorString(cudaPeekAtLastError()));
    if (n == 8)
        fprintf(stderr, "eight\n");
    if (n == 9)
        fprintf(stderr, "%s", label(n).c_str());
    if (n == 10)
        printf("%c", (int)n);
    std::cout << "took " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << std::endl;
    std::cerr << label(n) << "\n";
    char line[64];
    snprintf(line, sizeof line, "%d %f %f %f", (int)n, log2((double)n), ceil(n / 3.0), pow(n, 0.3));
    puts(line);
    srand(time(NULL));
    (void)rand();
    (void)clock();
    int *scratch = new int[n];
    memset(scratch, 0, n * sizeof(int));
    delete[] scratch;
    fflush(stdout);
}
""", [], {})

# CUB inlined into a kernel, compiled with compressed device code (-Xfatbin -compress-all): cuobjdump, where it is
# installed, reads it; elsewhere the verdict says what it could not inspect.
COMPRESSED = ("reduce", r"""#include "reduce.h"
#include <cub/warp/warp_reduce.cuh>
__global__ void warp_sum_kernel(const float *in, float *out, size_t n)
{
    __shared__ typename cub::WarpReduce<float>::TempStorage tmp;
    const float s = cub::WarpReduce<float>(tmp).Sum(threadIdx.x < n ? in[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0)
        *out = s;
}
void reduce(float *d_in, float *d_out, size_t n, float *d_work) { warp_sum_kernel<<<1, 32>>>(d_in, d_out, n); }
""")


def sym(name, kind="U", demangled=None):
    return Symbol(name, demangled or name, kind)


def messages(findings) -> dict:
    return {f.key: f.message for f in findings}


class Rules(unittest.TestCase):
    """The tables and the rules on made-up symbol lists (no compiler needed)."""

    def test_the_tables_are_well_formed(self):
        keys = [r.key for r in RULES]
        self.assertEqual(len(keys), len(set(keys)))
        self.assertEqual(RULES[0].key, "cub")  # check_symbols also applies it to the device code's functions
        for rule in RULES:
            self.assertIn(rule.where, ("defines", "defines-data", "contains"), rule.key)
            for p in rule.patterns:
                re.compile(p)
        allowed, advice = load_calls()
        names = [n for group in allowed for n in group.names]
        self.assertEqual(len(names), len(set(names)), "a name listed twice in lab_calls.toml")
        for name in names:  # a "*" only ends a C++ name: every C and CUDA name is listed whole
            self.assertTrue("*" not in name or (name.endswith("*") and "::" in name and name.count("*") == 1), name)
        self.assertEqual(advice[-1].names, ("*",))

    def test_a_malformed_table_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = write_file(tmp, "calls.toml", '[[allow]]\ngroup = "x"\nnames = ["printf"]\n'
                                                 '[[advice]]\nkey = "calls"\nnames = ["*"]\nsays = "no"\n')
            with self.assertRaisesRegex(ValueError, "needs group, why and names"):
                load_calls(path)

    def test_every_pattern_has_its_header(self):
        self.assertEqual({lab.pattern for lab in load_config().labs}, {p for g in load_calls()[0] for p in g.patterns})
        self.assertEqual(header_api("compact"), ["compact_work_bytes", "kit_exclusive_scan"])

    def test_what_the_solutions_call_is_allowed(self):
        """The solutions' `nm -u` (CUDA 13 with GCC 12, and with Ubuntu 24.04's GCC 13, whose _FORTIFY_SOURCE and
        stack protector add __printf_chk and __stack_chk_fail; CUDA 12's launch stubs call cudaLaunchKernel)."""
        calls = ["_Unwind_Resume", "__cudaGetKernel", "__cudaLaunchKernel", "cudaLaunchKernel",
                 "__cudaPopCallConfiguration", "__cudaPushCallConfiguration", "__cudaRegisterFatBinary",
                 "__cudaRegisterFatBinaryEnd", "__cudaRegisterFunction", "__cudaRegisterVar",
                 "__cudaUnregisterFatBinary", "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort",
                 "__gxx_personality_v0", "atexit", "exit", "cudaDeviceGetAttribute", "cudaGetDevice",
                 "cudaGetLastError", "cudaMemsetAsync", "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
                 "ppl_cuda_check", "reduce_tree_of_blocks", "__stack_chk_fail", "__printf_chk", "__fprintf_chk",
                 "__memset_chk", "__snprintf_chk", "memcpy"]
        calls = [listed_name(c, c) for c in calls]
        groups = allowed_for("reduce")
        self.assertEqual([c for c in calls if not find_allowed(c, groups)], [])
        self.assertIsNone(find_allowed("reduce_tree_of_blocks", allowed_for("scan")))
        self.assertIsNone(find_allowed("kit_exclusive_scan", allowed_for("reduce")))

    def test_listed_names(self):
        self.assertEqual(listed_name("__printf_chk", "__printf_chk"), "printf")
        self.assertEqual(listed_name("__fread_chk", "__fread_chk"), "fread")
        self.assertEqual(listed_name("_ZNSo3putEc", "std::ostream::put(char)"), "std::ostream::put")
        self.assertEqual(listed_name("_ZSt16__ostream_insertIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_PKS3_l",
                                     "std::basic_ostream<char, std::char_traits<char> >& std::__ostream_insert<char, "
                                     "std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, "
                                     "char const*, long)"), "std::__ostream_insert")
        self.assertEqual(listed_name("_ZTISt13runtime_error", "typeinfo for std::runtime_error"),
                         "typeinfo for std::runtime_error")
        self.assertEqual(listed_name("_Z21reduce_tree_of_blocksPfS_mS_mPFvS_S_mjE",
                                     "reduce_tree_of_blocks(float*, float*, unsigned long, float*, unsigned long, "
                                     "void (*)(float*, float*, unsigned long, unsigned int))"),
                         "reduce_tree_of_blocks")
        groups = allowed_for("reduce")
        self.assertIsNotNone(find_allowed("std::__throw_length_error", groups))
        self.assertIsNotNone(find_allowed("std::__cxx11::basic_string::_M_create", groups))
        self.assertIsNone(find_allowed("std::basic_ofstream::open", groups))
        self.assertIsNone(find_allowed("fopen@GLIBC_2.2.5", groups))  # a versioned name is another name
        # <iostream> with GCC 13 (Ubuntu 24.04, the lent H100's compiler) names std::ios_base_library_init
        self.assertEqual(listed_name("_ZSt21ios_base_library_initv", "std::ios_base_library_init()"),
                         "std::ios_base_library_init")
        self.assertIsNotNone(find_allowed("std::ios_base_library_init", groups))

    def test_advice(self):
        self.assertEqual(advice_for("cudaMemcpyAsync").key, "copies")
        self.assertEqual(advice_for("cuLaunchKernel").key, "driver")
        self.assertEqual(advice_for("ppl_sum_f64").key, "kit")
        self.assertEqual(advice_for("wordexp").key, "calls")

    def test_fortified_calls_are_named_as_written(self):
        # GCC with _FORTIFY_SOURCE (the default of Ubuntu's compilers, seen on the lent GPU machine) turns fread
        # into __fread_chk: the student wrote fread, and the message says so.
        self.assertEqual(listed_name("__fread_chk", "__fread_chk"), "fread")
        self.assertIsNone(find_allowed("fread", allowed_for("reduce")))

    def test_iso_c_variants_are_named_as_written(self):
        # glibc 2.38's headers (Ubuntu 24.04, the lent GPU machine) turn strtoul into __isoc23_strtoul under
        # _GNU_SOURCE, which g++ always defines; older ones turn sscanf into __isoc99_sscanf. Allowed as written.
        self.assertEqual(listed_name("__isoc23_strtoul", "__isoc23_strtoul"), "strtoul")
        self.assertEqual(listed_name("__isoc99_sscanf", "__isoc99_sscanf"), "sscanf")
        self.assertIsNotNone(find_allowed(listed_name("__isoc23_strtoul", "__isoc23_strtoul"), allowed_for("reduce")))
        self.assertIsNone(find_allowed(listed_name("__isoc99_fscanf", "__isoc99_fscanf"), allowed_for("reduce")))

    def test_definitions(self):
        found = messages(check_symbols([sym("fwrite", "T"), sym("_Znwm", "T", "operator new(unsigned long)"),
                                        sym("stdout", "D"), sym("_Z6helperv", "T", "helper()"),
                                        sym("g_scratch", "B"), sym("fopen", "t"), sym("printf", "U")]))
        self.assertEqual(list(found), ["c-functions", "operator-new", "c-data"])
        self.assertTrue(found["c-functions"].startswith('defines fwrite with C linkage (extern "C"): '))
        self.assertTrue(found["operator-new"].startswith("replaces operator new: "))

    def test_cub_anywhere(self):
        kernel = ("void cub::CUB_300001_SM_750::detail::reduce::DeviceReduceKernel<cub::CUB_300001_SM_750::Policy>"
                  "(float*)")
        stub = "__device_stub__ZN3cub17CUB_300001_SM_7506detail(cub::CUB_300001_SM_750::Policy)"
        found = check_symbols([sym("_ZN3cub1xE", "W", kernel), sym("_Z3stub", "T", stub),
                               sym("_ZN5nvtx31xE", "W", "nvtx3::v1::scoped_range_in<cub::detail::Domain>::f()")],
                              [sym("_ZN6thrust1fE", "T", "thrust::THRUST_300001_SM_750_900_NS::f()")])
        self.assertEqual(found[0].message, "uses CUB or Thrust (cub::detail::reduce::DeviceReduceKernel, thrust::f, "
                                           "nvtx3::v1::scoped_range_in::f): the lab's code may not use CUB or Thrust: "
                                           "write the kernels yourself")

    def test_short_names(self):
        self.assertEqual(short_name("void cub::CUB_300001_SM_750::detail::EmptyKernel<void>()"),
                         "cub::detail::EmptyKernel")
        self.assertEqual(short_name("reduce_kernel(float const*, float*, unsigned long) [clone .cold]"),
                         "reduce_kernel")
        self.assertEqual(short_name("operator new(unsigned long)"), "operator new")
        self.assertEqual(short_name("operator delete[](void*)"), "operator delete[]")
        self.assertEqual(short_name("std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
                                    "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, "
                                    "char const*)"), "std::operator<<")
        self.assertEqual(short_name("(anonymous namespace)::helper(int)"), "(anonymous namespace)::helper")
        self.assertEqual(short_name("fopen"), "fopen")

    def test_missing_tools_are_a_kit_error(self):
        with tempfile.TemporaryDirectory() as empty, mock.patch.dict(os.environ, {"PATH": empty}):
            with self.assertRaises(ToolError) as caught:
                static_check.check_object(KIT / "no-such.o", "reduce")
        self.assertIn("nm and objdump not found: the grader's static checks need binutils", str(caught.exception))
        self.assertIn("a kit problem", str(caught.exception))

    def test_an_unreadable_object_is_the_students_failure(self):
        """The object is made from the student's file: a tool that fails on it, or a check that raises on what is in
        it, is the student's failure (one finding, 0 points), not the kit's (issue 20: a crash while checking left
        the previous results in place and told the student "not your fault")."""
        if not (shutil.which("nm") and shutil.which("objdump")):
            self.skipTest("binutils (nm, objdump) is not installed here")
        with tempfile.TemporaryDirectory() as tmp:
            verdict = static_check.check_object(write_file(tmp, "student.o", "not an object"), "reduce")
            self.assertEqual([f.key for f in verdict.findings], ["unreadable"])
            self.assertIn("the kit could not read your object file: ", verdict.findings[0].message)
            with mock.patch("grader.compile.static_check.read_symbols", side_effect=UnicodeDecodeError(
                    "utf-8", b"\xff", 0, 1, "invalid start byte")):  # in this process: the sandboxed program's part
                verdict = static_check.inspect_object(write_file(tmp, "student.o", "not an object"), "reduce")
        self.assertEqual([f.key for f in verdict.findings], ["unreadable"])
        self.assertIn("UnicodeDecodeError", verdict.findings[0].message)

    def test_the_checks_run_in_the_build_sandbox(self):
        """nm, objdump, cuobjdump, zstd and the ELF reader read the object in a program of their own, inside
        bubblewrap where it works and under the compile's resource limits, never in the grader's process."""
        if not (shutil.which("nm") and shutil.which("objdump")):
            self.skipTest("binutils (nm, objdump) is not installed here")
        from grader.compile import build_sandbox
        seen = []
        real = build_sandbox.limited

        def spy(argv, limits):
            seen.append(list(argv))
            return real(argv, limits)

        limits = build_sandbox.Limits()
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(build_sandbox, "limited", spy), \
                mock.patch.object(static_check, "read_symbols", side_effect=AssertionError("read in the grader")):
            obj = write_file(tmp, "student.o", "not an object")
            verdict = static_check.check_object(obj, "reduce")
            self.assertEqual([f.key for f in verdict.findings], ["unreadable"])  # nm's failure, from the sandbox
            self.assertEqual(len(seen), 1)
            self.assertIn("grader.compile.static_check", seen[0])
            bwrap = not build_sandbox.plan("auto", build_sandbox.tools_toolkit())
            self.assertEqual(seen[0][0] == build_sandbox.bwrap_program(), bwrap, seen[0])
            if bwrap:
                self.assertIn("--unshare-all", seen[0])
                k = seen[0].index("--ro-bind", seen[0].index(str(KIT / "grader")) - 2)
                self.assertEqual(seen[0][k + 1], str(KIT / "grader"))  # the kit's code, read-only
            seen.clear()
            static_check.check_object(obj, "reduce", sandbox="off")
            self.assertNotIn(build_sandbox.bwrap_program(), seen[0])

    def test_a_check_that_dies_is_the_students_failure(self):
        """A checks' program that started and was then killed (by a resource limit) or hung past its timeout is the
        object's failure, with the limit named; one that never started is the kit's."""
        if not (shutil.which("nm") and shutil.which("objdump")):
            self.skipTest("binutils (nm, objdump) is not installed here")
        from grader.compile import build_sandbox
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(static_check, "run_kit_python") as run:
            run.side_effect = lambda *a, writable, **k: (
                (Path(writable[0]) / static_check.STARTED_FILE).write_text(""),
                __import__("grader.run.process", fromlist=["Process"]).Process(-9, "", 1.0))[1]
            verdict = static_check.check_object(write_file(tmp, "student.o", "x"), "reduce",
                                                limits=build_sandbox.Limits(cpu_seconds=1))
            self.assertEqual([f.key for f in verdict.findings], ["unreadable"])
            self.assertIn("killed by signal 9 (a limit: 1 s of CPU time", verdict.findings[0].message)
            run.side_effect = lambda *a, writable, **k: (
                (Path(writable[0]) / static_check.STARTED_FILE).write_text(""),
                __import__("grader.run.process", fromlist=["Process"]).Process(None, "", 4.0))[1]
            verdict = static_check.check_object(write_file(tmp, "student.o", "x"), "reduce", timeout=4)
            self.assertEqual([f.key for f in verdict.findings], ["unreadable"])  # a hang: the object's, not ours
            self.assertIn("did not finish: they ran longer than 4 s", verdict.findings[0].message)
            run.side_effect = lambda *a, **k: __import__("grader.run.process", fromlist=["Process"]).Process(
                1, "ModuleNotFoundError: No module named 'grader'", 0.1)
            with self.assertRaises(ToolError) as caught:  # it never started: the kit's problem
                static_check.check_object(write_file(tmp, "student.o", "x"), "reduce")
            self.assertIn("did not start (a kit problem)", str(caught.exception))

    def test_a_broken_allow_list_is_still_a_kit_error(self):
        if not (shutil.which("nm") and shutil.which("objdump")):
            self.skipTest("binutils (nm, objdump) is not installed here")
        with tempfile.TemporaryDirectory() as tmp, mock.patch("grader.compile.static_check.allowed_for",
                                                              side_effect=ValueError("malformed")):
            with self.assertRaises(ToolError):
                static_check.check_object(write_file(tmp, "student.o", "x"), "reduce")


def compile_object(pattern: str, source: Path, folder: Path, *settings):
    """(object, "") or (None, the compiler's output): student.o of source, built by mk/lab.mk like the grader's."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder.resolve() / "student.o"
    argv = make_argv(KIT, pattern, f"LAB_SRC={Path(source).resolve()}", f"BUILD={folder.resolve()}", *settings,
                     target=str(target))
    proc = run_process(argv, timeout=600, cwd=KIT)
    return (target, "") if proc.returncode == 0 and target.is_file() else (None, proc.output)


@unittest.skipUnless(shutil.which("nvcc") and shutil.which("make"), "nvcc or make is not installed here")
class RealObjects(unittest.TestCase):
    """Objects compiled by nvcc: the solutions, the skeletons, tools/instructor/variants/ and the made-up files
    above."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        jobs = {}  # key -> (pattern, source, make settings...)
        skeletons = derive(root / "skeletons")  # derived from solutions/: labs/ may hold a student's work
        for top, folder in (("solutions", KIT / "solutions"), ("labs", skeletons)):
            for lab, (pattern, source) in LABS.items():
                if (folder / lab / source).is_file():
                    jobs[(top, lab)] = (pattern, folder / lab / source)
        for folder, lab in WRONG:
            jobs[("wrong", folder)] = (LABS[lab][0], submission(folder, root / "wrong") / lab / LABS[lab][1])
        for name, (pattern, text, _, _) in (("sneaky", SNEAKY), ("startup", STARTUP), ("honest", HONEST)):
            jobs[("made-up", name)] = (pattern, write_file(root / "src" / name, f"{pattern}.cu", text))
        for name in ATTACKS:
            jobs[("attack", name)] = ("reduce", write_file(root / "attack" / name, "reduce.cu", attack_source(name)))
        jobs[("made-up", "compressed")] = (COMPRESSED[0], write_file(root / "src" / "compressed", "reduce.cu",
                                                                     COMPRESSED[1]),
                                           "EXTRA_NVCCFLAGS=-Xfatbin -compress-all", "STUDENT_FATBIN_FLAGS=",
                                           # machine code alone: the kit's builds carry PTX too (mk/cuda.mk)
                                           "ARCH_FLAGS=-gencode arch=compute_75,code=sm_75")
        # the longest compiles (CUB's headers) first, so they do not finish last on their own
        order = sorted(jobs, key=lambda k: k not in (("wrong", "library-call"), ("made-up", "sneaky")))
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            built = pool.map(lambda k: compile_object(jobs[k][0], jobs[k][1], root / "obj" / "-".join(k),
                                                      *jobs[k][2:]), order)
            cls.objects = dict(zip(order, built))
        cls.patterns = {k: job[0] for k, job in jobs.items()}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, key):
        obj, output = self.objects[key]
        self.assertIsNotNone(obj, f"{key} does not compile:\n{output}")
        return static_check.check_object(obj, self.patterns[key])

    def test_solutions_and_skeletons_pass(self):
        keys = [k for k in self.objects if k[0] in ("solutions", "labs")]
        self.assertGreaterEqual(len(keys), 14)
        for key in keys:
            verdict = self.check(key)
            self.assertEqual([f.message for f in verdict.findings], [], key)
            self.assertEqual(verdict.notes, [], key)

    def test_wrong_submissions_are_caught(self):
        for (folder, lab), expected in WRONG.items():
            findings = [f.message for f in self.check(("wrong", folder)).findings]
            for pattern in expected:
                self.assertTrue(any(re.search(pattern, m) for m in findings), f"{folder}: {pattern}\n{findings}")
            if folder != "library-call":  # CUB's headers bring getenv, dlopen and C functions of their own
                self.assertEqual(len(findings), len(expected), f"{folder}: {findings}")

    def test_made_up_files(self):
        for name, (_, _, keys, says) in (("sneaky", SNEAKY), ("startup", STARTUP), ("honest", HONEST)):
            found = messages(self.check(("made-up", name)).findings)
            self.assertEqual(list(found), keys, f"{name}: {found}")
            for key, pattern in says.items():
                self.assertRegex(found[key], pattern, name)

    def test_each_way_out_of_the_list_is_refused(self):
        for name, (_, _, pattern) in ATTACKS.items():
            with self.subTest(name):
                findings = [f.message for f in self.check(("attack", name)).findings]
                self.assertTrue(any(re.search(pattern, m) for m in findings), f"{name}: {pattern}\n{findings}")

    def test_a_visible_system_call_is_not_also_hidden(self):
        keys = [f.key for f in self.check(("made-up", "sneaky")).findings]
        self.assertIn("syscall", keys)
        self.assertNotIn("hidden-syscall", keys)

    def test_compressed_device_code(self):
        verdict = self.check(("made-up", "compressed"))
        keys = [f.key for f in verdict.findings]
        if shutil.which("cuobjdump"):
            self.assertEqual((keys[:1], keys[-1:], verdict.notes), (["cub"], ["device-cub"], []))
        else:
            self.assertNotIn("device-cub", keys)  # the host code may still show CUB's headers ("cub")
            self.assertEqual(verdict.notes, ["1 compressed device image not inspected: cuobjdump (from the CUDA "
                                             "toolkit) is needed to read them; only the host code's symbols were "
                                             "checked"])

    def test_the_headers_api_is_the_harness(self):
        """Every harness function lab_calls.toml offers a pattern is one the harness objects define (no stale
        names)."""
        for pattern in {p for group in load_calls()[0] for p in group.patterns}:
            built = build_harness(KIT, pattern)
            self.assertTrue(built.ok, built.message)
        defined = {short_name(s.demangled) for obj in (KIT / "build" / "harness").glob("*/*.o")
                   for s in read_symbols(shutil.which("nm"), obj) if s.kind == "T"}
        offered = {name for group in load_calls()[0] if group.group.startswith("the kit") for name in group.names}
        self.assertEqual(sorted(offered - defined), [])


@unittest.skipUnless(shutil.which("nvcc"), "nvcc is not installed here")
class PtxOnly(unittest.TestCase):
    """An object with PTX and no cubin (the simulator's builds): CUB is found in the PTX's .file directives, which
    nvcc 13 compresses (zstd); without the zstd program or cuobjdump the verdict says what it could not read."""

    def test_cub_in_ptx(self):
        with tempfile.TemporaryDirectory() as tmp:
            source, obj = Path(tmp) / "reduce.cu", Path(tmp) / "student.o"
            source.write_text(COMPRESSED[1])
            done = run_process(["nvcc", "-O3", "-lineinfo", "-std=c++17", "-gencode", "arch=compute_75,code=compute_75",
                                f"-I{KIT / 'harness' / 'include'}", f"-I{KIT / 'patterns' / 'reduce' / 'include'}",
                                "-c", "-o", str(obj), str(source)], timeout=600)
            self.assertEqual(done.returncode, 0, done.output)
            verdict = static_check.check_object(obj, "reduce")
            keys = [f.key for f in verdict.findings]
            if shutil.which("zstd") or shutil.which("cuobjdump"):
                self.assertIn("device-cub", keys)
            else:
                self.assertIn("compressed PTX text not inspected", " ".join(verdict.notes))


@unittest.skipUnless(shutil.which("nvcc") and shutil.which("make"), "nvcc or make is not installed here")
class GradeWrongSubmissions(unittest.TestCase):
    """The whole grader, real build and static checks, on two wrong submissions at once (no GPU needed: neither
    runs). Every other lab's file is missing from the submission, which costs no compile."""

    def test_static_check_and_compile_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            sub = Path(tmp) / "sub"
            for folder, lab in (("host-sum", "01-global-strided"), ("compile-error", "02-shared-strided")):
                shutil.copytree(submission(folder, Path(tmp) / "wrong") / lab, sub / lab)
            results, out = Path(tmp) / "results.json", io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                status = main(["--submission", str(sub), "--build-dir", str(Path(tmp) / "build"), "--results",
                               str(results)])
            data = json.loads(results.read_text())
        table = out.getvalue()
        self.assertEqual(status, 1, table)
        self.assertEqual(data["score"], 0, table)
        tests = {t["name"]: t for t in data["tests"]}
        static = tests["01-global-strided: static checks"]
        self.assertEqual(static["status"], "failed")
        self.assertRegex(static["output"], rf"^calls cudaMemcpy: {NOT_LISTED}the lab's code may not copy data "
                                           r"between the host and the device")
        self.assertIn("Every test of this lab scores 0 and none was run", static["output"])
        for group in ("datasets", "edge sizes", "exact integer data", "large sizes", "performance"):
            self.assertEqual(tests[f"01-global-strided: {group}"]["output"],
                             "not run: the static checks found what reduce.cu may not use (see static checks)")
        self.assertRegex(table, r"\n  static checks +0 / 0 +FORBIDDEN +calls cudaMemcpy: ")
        self.assertEqual(list(data["extra_data"]["static_check_findings"]), ["01-global-strided"])
        self.assertEqual(tests["02-shared-strided: static checks"]["output"], "not run: reduce.cu does not compile")
        compile_error = tests["02-shared-strided: datasets"]["output"]
        self.assertTrue(compile_error.startswith("reduce.cu does not compile: every test of this lab scores 0\n"),
                        compile_error)
        self.assertRegex(compile_error, r'\nreduce.cu\(\d+\): error: expected a ";"')
        self.assertIn("missing file", tests["03-sequential: datasets"]["output"])  # grading went on


if __name__ == "__main__":
    unittest.main()
