"""grader/static_check.py: its rules on made-up symbol lists, then on real objects: every reference solution and
every blank skeleton, compiled by nvcc through mk/lab.mk, passes; each known-wrong submission of tests/wrong/ that the
static checks must catch is caught with the right message, as are a few made-up files (device-side CUB, a
__managed__ variable, a C function replacing the C library's, a system call, constructors and destructors); files
that use only what is allowed (<iostream>, cooperative groups, the runtime API) pass; and two wrong submissions go
through the whole grader (a library call: 0 points, nothing run; a compile error: the compiler's message).

The objects are compiled once for the module, in parallel (each student file takes 3-5 s, one with CUB's headers
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

from grader import static_check
from grader.build import build_harness, make_argv
from grader.config import load_config
from grader.grade import main
from grader.run import run_process
from grader.static_check import KIT_API, KIT_COMMON, KIT_INTERNAL, RULES, Symbol, ToolError, check_symbols, short_name
from tests.grader.fakes import KIT, write_file
from tests.wrong.materialize import submission

LABS = {"01-global-strided": ("reduce", "reduce.cu"), "02-shared-strided": ("reduce", "reduce.cu"),
        "03-sequential": ("reduce", "reduce.cu"), "04-unrolled": ("reduce", "reduce.cu"),
        "05-coarsened": ("reduce", "reduce.cu"), "06-scan": ("scan", "scan.cu"),
        "07-compact": ("compact", "compact.cu"),
        "08-single-pass": ("scan", "scan.cu")}

# The known-wrong submissions that the static checks catch: (folder, lab) -> what the findings must say.
WRONG = {
    ("host-sum", "01-global-strided"): [r"^calls cudaMemcpy: the lab's code may not copy data between the host and "
                                        r"the device"],
    ("reads-expected", "03-sequential"): [r"^calls fopen, fread: the lab's code may not open, read or write files"],
    ("library-call", "05-coarsened"): [r"^uses CUB or Thrust \(cub::detail::\w+, .*: the lab's code may not use CUB "
                                       r"or Thrust", r"^has device code from CUB's headers"],
    ("static-constructor", "05-coarsened"): [r"^runs the initializers of its global variables \(_GLOBAL__sub_I_\w+\) "
                                             r"before main: a static constructor"],
}

# Made-up files: (pattern, source, the findings' rules in order, a pattern each message must match).
SNEAKY = ("scan", r"""#include "scan.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dlfcn.h>
#include <thread>
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

void scan(const int *d_in, int *d_out, size_t n, int exclusive, scan_algorithm algorithm, void *d_work)
{
    if (getenv("FAST")) {
        ppl_cub_exclusive_sum(d_in, d_out, n);
        return;
    }
    if (write(3, "{}\n", 3) < 0 || !dlopen("libc.so.6", RTLD_NOW))
        return;
    long r;
    asm volatile("syscall" : "=a"(r) : "a"(39) : "rcx", "r11", "memory");
    std::thread t([] {});
    t.join();
    block_sum_kernel<<<1, 256>>>(d_in, d_out, n);
}
""", ["cub", "managed", "files", "environment", "loading", "threads", "c-functions", "kit", "device-cub", "syscall"], {
    "managed": r"^declares a __managed__ variable: host code could read device data",
    "files": r"^calls write: ",
    "c-functions": r"^defines fwrite with C linkage",
    "kit": r"^calls the harness's own ppl_cub_exclusive_sum: the lab's code may call only what its header declares "
           r"\(scan_work_bytes, CUDA_CHECK and CUDA_CHECK_LAUNCH\)",
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
# that includes it), cooperative groups (its reduce too), half floats, libcu++, the runtime API, printing, timing.
HONEST = ("reduce", r"""#include "reduce.h"
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cassert>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <vector>
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
void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    auto t0 = std::chrono::steady_clock::now();
    std::vector<int> sizes = {3, 1, 2};
    std::sort(sizes.begin(), sizes.end());
    assert(n >= 1);
    int device = 0;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    float *extra;
    CUDA_CHECK(cudaMalloc(&extra, 16));
    CUDA_CHECK(cudaFree(extra));
    cudaEvent_t e;
    cudaEventCreate(&e);
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    cudaEventDestroy(e);
    CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
    tile_sum_kernel<<<1, 256>>>(d_in, d_out, n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    if (getchar() == -2)
        fprintf(stderr, "n = %zu %s %f\n", n, strerror(1), sqrt((double)n) + host_table[sizes[0]]);
    std::cout << "took " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << "\n";
    char line[64];
    snprintf(line, sizeof line, "%d", (int)n);
    puts(line);
    srand(time(NULL));
    (void)rand();
    (void)clock();
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
    """The tables and check_symbols on made-up symbol lists (no compiler needed)."""

    def test_the_table_is_well_formed(self):
        keys = [r.key for r in RULES]
        self.assertEqual(len(keys), len(set(keys)))
        self.assertEqual(RULES[0].key, "cub")  # check_symbols also applies it to the device code's functions
        for rule in RULES:
            self.assertIn(rule.where, ("calls", "defines", "defines-data", "contains"), rule.key)
            for p in rule.patterns:
                re.compile(p)
            self.assertTrue(rule.why.startswith(("the lab's code", "host code", "such a function")), rule.key)
        for p in KIT_INTERNAL:
            re.compile(p)

    def test_every_pattern_has_its_api(self):
        self.assertEqual({lab.pattern for lab in load_config().labs}, set(KIT_API))

    def test_what_the_solutions_call_is_allowed(self):
        calls = ["_Unwind_Resume", "__cudaGetKernel", "__cudaLaunchKernel", "__cudaPopCallConfiguration",
                 "__cudaPushCallConfiguration", "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd",
                 "__cudaRegisterFunction", "__cudaRegisterVar", "__cudaUnregisterFatBinary", "__cxa_guard_acquire",
                 "__gxx_personality_v0", "atexit", "exit", "cudaDeviceGetAttribute", "cudaGetDevice",
                 "cudaGetLastError", "cudaMemsetAsync", "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
                 "cudaDeviceSynchronize", "cudaMalloc", "cudaFree", "printf", "fprintf", "fwrite", "puts",
                 "clock_gettime", "malloc", "free", "ppl_cuda_check"]
        symbols = [sym(n) for n in calls] + [
            sym("_Z21reduce_tree_of_blocksPfS_mS_mPFvS_S_mjE", "U", "reduce_tree_of_blocks(float*, float*, unsigned "
                "long, float*, unsigned long, void (*)(float*, float*, unsigned long, unsigned int))"),
            sym("_Z6reducePfS_mS_", "T", "reduce(float*, float*, unsigned long, float*)"),
            sym("counter", "B"), sym("DW.ref.__gxx_personality_v0", "V")]
        self.assertEqual(check_symbols(symbols, "reduce"), [])

    def test_denied_calls(self):
        found = messages(check_symbols([sym(n) for n in ("fopen", "open64", "read", "getenv", "cudaMemcpyAsync",
                                                         "cudaMallocHost", "system", "dlsym", "socket", "GOMP_parallel",
                                                         "cublasSgemm_v2", "cuLaunchKernel", "mprotect")], "reduce"))
        self.assertEqual(list(found), ["libraries", "copies", "host-memory", "driver", "files", "environment",
                                       "memory-maps", "processes", "loading", "network", "threads"])
        self.assertEqual(found["files"], "calls fopen, open64, read: the lab's code may not open, read or write files "
                                         "or file descriptors (only the harness does input and output; printing to "
                                         "the terminal with printf is fine)")
        self.assertTrue(found["copies"].startswith("calls cudaMemcpyAsync: "))
        self.assertTrue(found["driver"].startswith("calls cuLaunchKernel: the lab's code may use the CUDA runtime "))
        self.assertEqual(found["threads"], "starts host threads (GOMP_parallel): the lab's code runs on the GPU: no "
                                           "OpenMP or host threads")

    def test_many_names_are_counted(self):
        found = check_symbols([sym(n) for n in ("fopen", "fread", "fgets", "stat", "access", "unlink")], "reduce")
        self.assertTrue(found[0].message.startswith("calls fopen, fread, fgets, stat and 2 more: "), found[0].message)

    def test_fortified_calls_are_named_as_written(self):
        # GCC with _FORTIFY_SOURCE (the default of Ubuntu's compilers, seen on the lent GPU machine) turns fread
        # into __fread_chk: the student wrote fread, and the message says so.
        found = check_symbols([sym(n) for n in ("fopen", "__fread_chk", "fread")], "reduce")
        self.assertTrue(found[0].message.startswith("calls fopen, fread: "), found[0].message)

    def test_the_kit_api_depends_on_the_pattern(self):
        kit_scan = sym("_Z18kit_exclusive_scanPKiPim", "U", "kit_exclusive_scan(int const*, int*, unsigned long)")
        self.assertEqual(check_symbols([kit_scan], "compact"), [])
        found = check_symbols([kit_scan, sym("_Z11ppl_sum_f64PKdm", "U", "ppl_sum_f64(double const*, unsigned long)"),
                               sym("ppl_results_str")], "scan")
        self.assertEqual(found[0].message, "calls the harness's own kit_exclusive_scan, ppl_sum_f64, ppl_results_str: "
                                           "the lab's code may call only what its header declares (scan_work_bytes, "
                                           "CUDA_CHECK and CUDA_CHECK_LAUNCH)")
        self.assertIn("ppl_cuda_check", KIT_COMMON)

    def test_definitions(self):
        found = messages(check_symbols([sym("fwrite", "T"), sym("_Znwm", "T", "operator new(unsigned long)"),
                                        sym("stdout", "D"), sym("_Z6helperv", "T", "helper()"),
                                        sym("g_scratch", "B"), sym("fopen", "t")], "reduce"))
        self.assertEqual(list(found), ["c-functions", "operator-new", "c-data"])
        self.assertTrue(found["c-functions"].startswith('defines fwrite with C linkage (extern "C"): '))
        self.assertTrue(found["operator-new"].startswith("replaces operator new: "))

    def test_cub_anywhere(self):
        kernel = ("void cub::CUB_300001_SM_750::detail::reduce::DeviceReduceKernel<cub::CUB_300001_SM_750::Policy>"
                  "(float*)")
        stub = "__device_stub__ZN3cub17CUB_300001_SM_7506detail(cub::CUB_300001_SM_750::Policy)"
        found = check_symbols([sym("_ZN3cub1xE", "W", kernel), sym("_Z3stub", "T", stub),
                               sym("_ZN5nvtx31xE", "W", "nvtx3::v1::scoped_range_in<cub::detail::Domain>::f()")],
                              "reduce", [sym("_ZN6thrust1fE", "T", "thrust::THRUST_300001_SM_750_900_NS::f()")])
        self.assertEqual(found[0].message, "uses CUB or Thrust (cub::detail::reduce::DeviceReduceKernel, thrust::f, "
                                           "nvtx3::v1::scoped_range_in::f): the lab's code may not use CUB or Thrust: "
                                           "write the kernels yourself")

    def test_short_names(self):
        self.assertEqual(short_name("void cub::CUB_300001_SM_750::detail::EmptyKernel<void>()"),
                         "cub::detail::EmptyKernel")
        self.assertEqual(short_name("reduce_kernel(float const*, float*, unsigned long) [clone .cold]"),
                         "reduce_kernel")
        self.assertEqual(short_name("operator new(unsigned long)"), "operator new")
        self.assertEqual(short_name("(anonymous namespace)::helper(int)"), "(anonymous namespace)::helper")
        self.assertEqual(short_name("fopen"), "fopen")

    def test_missing_tools_are_a_kit_error(self):
        with tempfile.TemporaryDirectory() as empty, mock.patch.dict(os.environ, {"PATH": empty}):
            with self.assertRaises(ToolError) as caught:
                static_check.check_object(KIT / "no-such.o", "reduce")
        self.assertIn("nm and objdump not found: the grader's static checks need binutils", str(caught.exception))
        self.assertIn("a kit problem", str(caught.exception))

    def test_an_unreadable_object_is_a_kit_error(self):
        if not (shutil.which("nm") and shutil.which("objdump")):
            self.skipTest("binutils (nm, objdump) is not installed here")
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(ToolError):
                static_check.check_object(write_file(tmp, "student.o", "not an object"), "reduce")


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
    """Objects compiled by nvcc: the solutions, the skeletons, tests/wrong/ and the made-up files above."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        jobs = {}  # key -> (pattern, source, make settings...)
        for top in ("solutions", "labs"):
            for lab, (pattern, source) in LABS.items():
                if (KIT / top / lab / source).is_file():
                    jobs[(top, lab)] = (pattern, KIT / top / lab / source)
        for folder, lab in WRONG:
            jobs[("wrong", folder)] = (LABS[lab][0], submission(folder, root / "wrong") / lab / LABS[lab][1])
        for name, (pattern, text, _, _) in (("sneaky", SNEAKY), ("startup", STARTUP), ("honest", HONEST)):
            jobs[("made-up", name)] = (pattern, write_file(root / "src" / name, f"{pattern}.cu", text))
        jobs[("made-up", "compressed")] = (COMPRESSED[0], write_file(root / "src" / "compressed", "reduce.cu",
                                                                     COMPRESSED[1]),
                                           "EXTRA_NVCCFLAGS=-Xfatbin -compress-all")
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
        for name, (_, _, rules, says) in (("sneaky", SNEAKY), ("startup", STARTUP), ("honest", HONEST)):
            found = messages(self.check(("made-up", name)).findings)
            self.assertEqual(list(found), rules, f"{name}: {found}")
            for rule, pattern in says.items():
                self.assertRegex(found[rule], pattern, name)

    def test_compressed_device_code(self):
        verdict = self.check(("made-up", "compressed"))
        keys = [f.key for f in verdict.findings]
        if shutil.which("cuobjdump"):
            self.assertEqual((keys, verdict.notes), (["cub", "device-cub"], []))
        else:
            self.assertNotIn("device-cub", keys)  # the host code may still show CUB's headers ("cub")
            self.assertEqual(verdict.notes, ["1 compressed device image not inspected: cuobjdump (from the CUDA "
                                             "toolkit) is needed to read them; only the host code's symbols were "
                                             "checked"])

    def test_the_kit_rule_covers_the_harness(self):
        """Every global the harness objects define is either offered to some lab (KIT_API, KIT_COMMON) or denied
        (KIT_INTERNAL), so a new harness function cannot become callable from the lab's file unnoticed."""
        for pattern in KIT_API:
            built = build_harness(KIT, pattern)
            self.assertTrue(built.ok, built.message)
        objects = sorted((KIT / "build" / "harness").glob("*/*.o"))
        self.assertTrue(objects)
        offered = {name for api in KIT_API.values() for name in api} | set(KIT_COMMON)
        loose = set()
        for obj in objects:
            for s in static_check.read_symbols(shutil.which("nm"), obj):
                if s.kind in "TDBR" and not s.name.startswith(("_ZN3cub", "_ZN6thrust", "_ZNK")):
                    name = short_name(s.demangled)
                    if name not in offered and not static_check._matches(KIT_INTERNAL, name) and "::" not in name:
                        loose.add(f"{obj.name}: {name}")
        self.assertEqual(sorted(loose), [])


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
        self.assertTrue(static["output"].startswith("calls cudaMemcpy: the lab's code may not copy data between the "
                                                    "host and the device"), static["output"])
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
