"""The attacks of tests/grader/test_static_check.py: one small lab file per way out of the allow-list of
grader/lab_calls.toml, each with the finding that must refuse it."""


# One small file per way out of the allow-list: (the lab's body, a pattern the findings must match). Each is
# refused with a finding that names what it used, by its name or its ELF type.
ATTACKS = {
    "wordexp": ("#include <wordexp.h>\n", "wordexp_t w; wordexp(\"$(id)\", &w, 0);", r"^calls wordexp: "),
    "dl_iterate_phdr": ("#include <link.h>\nstatic int cb(struct dl_phdr_info *, size_t, void *) { return 0; }\n",
                        "dl_iterate_phdr(cb, 0);", r"^calls dl_iterate_phdr: "),
    "setsid": ("#include <unistd.h>\n", "setsid();", r"^calls setsid: "),
    "setmntent": ("#include <stdio.h>\n#include <mntent.h>\n",
                  "FILE *f = setmntent(\"/proc/mounts\", \"r\"); int c = fgetc(f); fputs(\"x\", f); (void)c;",
                  r"^calls setmntent, fgetc: "),
    "aio_write": ("#include <aio.h>\n", "struct aiocb cb = {}; aio_write(&cb);", r"^calls aio_write: "),
    "fts_open": ("#include <fts.h>\n", "char *p[] = {(char *)\"/\", 0}; fts_open(p, 0, 0);", r"^calls fts_open: "),
    "timer_create": ("#include <time.h>\n#include <signal.h>\n", "timer_t t; timer_create(CLOCK_REALTIME, 0, &t);",
                     r"^calls timer_create: "),
    "cudaGraphAddMemcpyNode1D": ("", "cudaGraph_t g; cudaGraphNode_t node; static float h; cudaGraphCreate(&g, 0); "
                                     "cudaGraphAddMemcpyNode1D(&node, g, 0, 0, &h, d_out, 4, cudaMemcpyDeviceToHost);",
                                 r"^calls cudaGraphCreate, cudaGraphAddMemcpyNode1D: .*no CUDA graphs"),
    "cudaLaunchHostFunc": ("static void CUDART_CB on_host(void *) {}\n", "cudaLaunchHostFunc(0, on_host, 0);",
                           r"^calls cudaLaunchHostFunc: .*no CUDA graphs or host callbacks"),
    "cudaImportExternalMemory": ("", "cudaExternalMemory_t m; cudaExternalMemoryHandleDesc d = {}; "
                                     "cudaImportExternalMemory(&m, &d);", r"^calls cudaImportExternalMemory: "),
    "system": ("#include <stdlib.h>\n", "if (system(\"true\")) return;", r"^calls system: "),
    "fopen": ("#include <stdio.h>\n", "FILE *f = fopen(\"expected.raw\", \"rb\"); if (f) fclose(f);",
              r"^calls fopen, fclose: "),
    "ifunc": ("#ifndef __CUDA_ARCH__\n"
              "asm(\".text\\nfast_impl:\\n  ret\\n.type pick_sum, @gnu_indirect_function\\n"
              "pick_sum:\\n  lea fast_impl(%rip), %rax\\n  ret\\n\");\n"
              "void pick_sum(void) asm(\"pick_sum\");\n#endif\n",
              "\n#ifndef __CUDA_ARCH__\n    pick_sum();\n#endif\n",
              r"^has an indirect function \(pick_sum\): its resolver would run while the program loads"),
    "irelative": ("#ifndef __CUDA_ARCH__\n"
                  "asm(\".text\\nresolve_it:\\n  ret\\n.data\\nslot:\\n  .quad 0\\n"
                  ".reloc slot, R_X86_64_IRELATIVE, resolve_it\\n.text\\n\");\n#endif\n", "",
                  r"^has an indirect function \(an R_X86_64_IRELATIVE relocation\)"),
    "hidden-syscall": ("", "asm volatile(\"cmpq $7, %0\\n\\tjne 1f\\n\\tjmp hidden%=+1\\n\\t"
                           "hidden%=: movl $0x050f, %%eax\\n\\t1:\\n\\t\" : : \"r\"(n) : \"eax\", \"rcx\", \"r11\");",
                       r"^contains a system call instruction hidden in its code \(syscall at \.text\+0x[0-9a-f]+\)"),
    # a fatbinary the file carries as data (CUB's kernels, say), registered by the file's own code
    "register-fatbinary": ("extern \"C\" void **__cudaRegisterFatBinary(void *);\n"
                           "static const unsigned long long blob[8] = {0x466243b1ull};\n",
                           "__cudaRegisterFatBinary((void *)blob);",
                           r"^calls __cudaRegisterFatBinary in reduce\(\): the lab's code may not register device "
                           r"code itself"),
    # the same from a function named after nvcc's callback, which GCC inlines at -O3 so that the name is free
    "fake-registration-callback": ("extern \"C\" void **__cudaRegisterFatBinary(void *);\n"
                                   "static void fake(void **) asm(\"_ZL31__nv_cudaEntityRegisterCallbackPPv\");\n"
                                   "static __attribute__((used, noinline)) void fake(void **h) "
                                   "{ static int w[4]; h[0] = __cudaRegisterFatBinary(w); }\n",
                                   "void *h[1]; fake(h);",
                                   r"^calls __cudaRegisterFatBinary in __nv_cudaEntityRegisterCallback\(\): "),
    # student code inlined into nvcc's registration: the operator& of a __device__ variable's type, which nvcc's
    # callback calls to take the variable's address, registers a second fatbinary from inside it
    "register-in-registration": (
        "extern \"C\" void **__cudaRegisterFatBinary(void *);\n"
        "extern \"C\" void __cudaRegisterFatBinaryEnd(void **);\n"
        "static const unsigned long long blob[8] = {0x466243b1ull};\n"
        "struct Box {\n    float v;\n"
        "    __host__ __device__ __attribute__((always_inline)) inline Box *operator&() {\n"
        "#ifndef __CUDA_ARCH__\n        __cudaRegisterFatBinaryEnd(__cudaRegisterFatBinary((void *)blob));\n#endif\n"
        "        return reinterpret_cast<Box *>(&reinterpret_cast<char &>(v));\n    }\n};\n__device__ Box box;\n",
        "", r"^registers device code more than once \(__cudaRegisterFatBinary 2 times, __cudaRegisterFatBinaryEnd 2 "
            r"times\)"),
    # a fatbinary header of the file's own ahead of nvcc's in .nv_fatbin, whose sizes hide what follows from a
    # reader that starts at the section's beginning
    "fatbin-before-nvcc": ("#ifndef __CUDA_ARCH__\nasm(\".pushsection .nv_fatbin, \\\"a\\\"\\n.balign 8\\n"
                           ".long 0xBA55ED50\\n.short 1, 16\\n.quad 16777216\\n.short 1, 0\\n.long 16\\n"
                           ".quad 16777216\\n.popsection\");\n#endif\n", "",
                           r"^has device code that nvcc did not lay out \(\.nv_fatbin holds bytes before the "
                           r"fatbinary at \+0x20 that nothing registers\)"),
    # an assembler .reloc over a relocation the compiler wrote (GNU ld applies the later one): how nvcc's
    # registration can be made to register another fatbinary
    "reloc-over-reloc": ("#ifndef __CUDA_ARCH__\nasm(\".pushsection .data\\n.balign 8\\nppl_slot: .quad d_alias\\n"
                         ".reloc ppl_slot, R_X86_64_64, d_alias\\nd_alias: .quad 0\\n.popsection\");\n#endif\n", "",
                         r"^has relocations written over one another \(\.data\+0x[0-9a-f]+\)"),
    "preinit": ("static void early(int, char **, char **) {}\n"
                "__attribute__((section(\".preinit_array\"), used)) static void (*run_early)(int, char **, char **) "
                "= early;\n", "", r"^runs early\(\) before main"),
    "constructor": ("static volatile int seen;\n__attribute__((constructor)) static void early(void) { seen = 1; }\n",
                    "",
                    r"^runs early\(\) before main: a static constructor"),
}


def attack_source(name: str) -> str:
    head, body, _ = ATTACKS[name]
    return f"#include \"reduce.h\"\n{head}void reduce(float *d_in, float *d_out, size_t n, float *d_work)\n{{\n" \
           f"    {body}\n}}\n"
