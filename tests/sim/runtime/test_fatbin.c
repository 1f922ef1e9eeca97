/*
 * test_fatbin.c - sim/fatbin.c on real fatbinaries: kernels.cu compiled by nvcc with its PTX stored as nvcc stores it
 * by default (zstd-compressed from CUDA 13 on, LZ4-compressed by CUDA 12), uncompressed (-Xfatbin -compress=false),
 * zstd-compressed (-Xfatbin -compress-mode=size) and LZ4-compressed (-Xfatbin -compress-mode=speed), each fatbinary
 * taken out of the object with objcopy (the Makefile); one built for sm_75 only (no PTX); and broken containers,
 * which must give an error, never a crash. Also the LZ4 block decoder on hand-made blocks.
 *
 * The fixtures' paths come from the Makefile (FATBIN_DIR); a variant this nvcc cannot make is absent and its test
 * says so and passes.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fatbin.h"

#ifndef FATBIN_DIR
#error "build with -DFATBIN_DIR=\"...\" (tests/sim/runtime/Makefile does)"
#endif

/* The file FATBIN_DIR/name in 8-byte aligned memory (as nvcc aligns it), or NULL when absent. */
static unsigned char *load(const char *name, size_t *size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", FATBIN_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    rewind(f);
    unsigned char *buf = aligned_alloc(8, ((size_t)n + 7) / 8 * 8 + 8);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

#define NVCC_DEFAULT (-1) /* ptx_of's compression for the default fixture: whichever this nvcc uses */

/* The PTX of a fixture, checked for what kernels.cu must produce; NULL when the fixture is absent. */
static char *ptx_of(const char *name, int compression)
{
    size_t size;
    unsigned char *image = load(name, &size);
    if (!image) {
        fprintf(stderr, "note: %s/%s is absent (this nvcc cannot make it): not tested\n", FATBIN_DIR, name);
        return NULL;
    }
    sim_fatbin_ptx ptx;
    char err[512] = "";
    const int rc = sim_fatbin_find_ptx(image, &ptx, err, sizeof err);
#ifdef PPL_SIM_NO_ZSTD
    if (compression == 1 || (compression == NVCC_DEFAULT && rc == -1 && strstr(err, "libzstd"))) {
        ck_assert_int_eq(rc, -1);
        ck_assert_ptr_nonnull(strstr(err, "libzstd"));
        free(image);
        return NULL;
    }
#endif
    ck_assert_msg(rc == 0, "%s: %s", name, err);
    if (compression != NVCC_DEFAULT)
        ck_assert_int_eq(ptx.compression, compression);
    ck_assert_uint_eq(ptx.arch, 75);
    ck_assert_uint_eq(sim_fatbin_ptx_arch(image), 75); /* what the simulated device reports: 7.5 */
    ck_assert_uint_eq(ptx.len, strlen(ptx.text));
    ck_assert_ptr_nonnull(strstr(ptx.text, ".version"));
    ck_assert_ptr_nonnull(strstr(ptx.text, ".target sm_75"));
    ck_assert_ptr_nonnull(strstr(ptx.text, ".entry _Z7add_onePii("));
    ck_assert_ptr_nonnull(strstr(ptx.text, ".entry _Z13write_stridedILi1EEvPi("));
    ck_assert_ptr_nonnull(strstr(ptx.text, " scale;"));
    ck_assert_ptr_nonnull(strstr(ptx.text, ".loc")); /* -lineinfo */
    int n_ptx = -1, n_elf = -1;
    ck_assert_int_eq(sim_fatbin_count(image, &n_ptx, &n_elf), 1);
    ck_assert_int_eq(n_ptx, 1);
    ck_assert_int_eq(n_elf, 0);
    char *text = ptx.text;
    free(image);
    return text;
}

/* Of several targets' PTX, the graded GPU's (PPL_SIM_DEVICE_ARCH: the simulator's check runs what its driver
   runs), else compute_75's. */
START_TEST(test_the_graded_gpus_ptx_of_several)
{
    size_t size;
    unsigned char *image = load("kernels_two.fatbin", &size);
    ck_assert_ptr_nonnull(image);
    sim_fatbin_ptx ptx;
    char err[512] = "";
    unsetenv("PPL_SIM_DEVICE_ARCH");
    ck_assert_int_eq(sim_fatbin_find_ptx(image, &ptx, err, sizeof err), 0);
    ck_assert_uint_eq(ptx.arch, 75);
    ck_assert_ptr_nonnull(strstr(ptx.text, ".target sm_75"));
    free(ptx.text);
    setenv("PPL_SIM_DEVICE_ARCH", "80", 1);
    ck_assert_int_eq(sim_fatbin_find_ptx(image, &ptx, err, sizeof err), 0);
    ck_assert_uint_eq(ptx.arch, 80);
    ck_assert_ptr_nonnull(strstr(ptx.text, ".target sm_80"));
    free(ptx.text);
    setenv("PPL_SIM_DEVICE_ARCH", "90", 1); /* not there: the lowest */
    ck_assert_int_eq(sim_fatbin_find_ptx(image, &ptx, err, sizeof err), 0);
    ck_assert_uint_eq(ptx.arch, 75);
    free(ptx.text);
    unsetenv("PPL_SIM_DEVICE_ARCH");
    free(image);
}
END_TEST

START_TEST(test_zstd_plain_lz4_agree)
{
    char *nvcc_default = ptx_of("kernels_default.fatbin", NVCC_DEFAULT);
    char *zstd = ptx_of("kernels_zstd.fatbin", 1);
    char *plain = ptx_of("kernels_plain.fatbin", 0);
    char *lz4 = ptx_of("kernels_lz4.fatbin", 2);
    ck_assert_ptr_nonnull(plain);
    if (nvcc_default)
        ck_assert_str_eq(nvcc_default, plain);
    if (zstd)
        ck_assert_str_eq(zstd, plain);
    if (lz4)
        ck_assert_str_eq(lz4, plain);
    free(nvcc_default);
    free(zstd);
    free(plain);
    free(lz4);
}
END_TEST

START_TEST(test_wrapper_and_container)
{
    size_t size;
    unsigned char *image = load("kernels_plain.fatbin", &size);
    ck_assert_ptr_nonnull(image);
    /* what __cudaRegisterFatBinary receives: { int magic; int version; const unsigned long long *data; void *x; } */
    struct {
        int magic, version;
        const void *data;
        void *filename_or_fatbins;
    } wrapper = {(int)SIM_FATBIN_WRAPPER_MAGIC, 1, image, NULL};
    sim_fatbin_ptx a, b;
    char err[512];
    ck_assert_int_eq(sim_fatbin_find_ptx(&wrapper, &a, err, sizeof err), 0);
    ck_assert_int_eq(sim_fatbin_find_ptx(image, &b, err, sizeof err), 0);
    ck_assert_str_eq(a.text, b.text);
    sim_fatbin_ptx_free(&a);
    sim_fatbin_ptx_free(&b);
    ck_assert_ptr_null(a.text);
    sim_fatbin_ptx_free(&a); /* twice is harmless */
    free(image);
}
END_TEST

START_TEST(test_cubin_only_says_what_to_do)
{
    size_t size;
    unsigned char *image = load("kernels_sass.fatbin", &size);
    ck_assert_ptr_nonnull(image);
    int n_ptx = -1, n_elf = -1;
    ck_assert_int_ge(sim_fatbin_count(image, &n_ptx, &n_elf), 1);
    ck_assert_int_eq(n_ptx, 0);
    ck_assert_int_ge(n_elf, 1);
    ck_assert_uint_eq(sim_fatbin_ptx_arch(image), 0);
    sim_fatbin_ptx ptx;
    char err[512] = "";
    ck_assert_int_eq(sim_fatbin_find_ptx(image, &ptx, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "holds no PTX"));
    ck_assert_ptr_nonnull(strstr(err, "compute_75"));
    ck_assert_ptr_null(ptx.text);
    free(image);
}
END_TEST

START_TEST(test_broken_containers)
{
    size_t size;
    unsigned char *image = load("kernels_plain.fatbin", &size);
    ck_assert_ptr_nonnull(image);
    sim_fatbin_ptx ptx;
    char err[512];
    unsigned char *copy = aligned_alloc(8, (size + 7) / 8 * 8);
    ck_assert_ptr_nonnull(copy);

    memcpy(copy, image, size); /* not a fatbinary */
    copy[0] ^= 0xff;
    ck_assert_int_eq(sim_fatbin_find_ptx(copy, &ptx, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "not a fatbinary"));

    memcpy(copy, image, size); /* the body claims more than the entry holds: the entry's payload runs past it */
    const uint64_t body = 80;
    memcpy(copy + 8, &body, sizeof body);
    ck_assert_int_eq(sim_fatbin_find_ptx(copy, &ptx, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "corrupt"));

    memcpy(copy, image, size); /* an entry header size of 0 */
    memset(copy + 16 + 4, 0, 4);
    ck_assert_int_eq(sim_fatbin_find_ptx(copy, &ptx, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "corrupt"));

    ck_assert_int_eq(sim_fatbin_find_ptx(NULL, &ptx, err, sizeof err), -1);
    ck_assert_int_eq(sim_fatbin_count(NULL, NULL, NULL), -1);
    free(copy);
    free(image);
}
END_TEST

START_TEST(test_lz4_blocks)
{
    unsigned char out[64];
    /* "ab" then a match of 6 at offset 2 (overlapping: "ababab"), then the literal "!" */
    const unsigned char block[] = {0x22, 'a', 'b', 0x02, 0x00, 0x10, '!'};
    ck_assert_int_eq(sim_lz4_block_decode(block, sizeof block, out, 9), 9);
    ck_assert_mem_eq(out, "abababab!", 9);
    /* 20 literals: the length goes on in a second byte (15 + 5) */
    unsigned char lit[1 + 1 + 20];
    lit[0] = 0xf0;
    lit[1] = 5;
    memcpy(lit + 2, "0123456789abcdefghij", 20);
    ck_assert_int_eq(sim_lz4_block_decode(lit, sizeof lit, out, 20), 20);
    ck_assert_mem_eq(out, "0123456789abcdefghij", 20);
    /* errors: output too small, offset 0, offset before the start, truncated */
    ck_assert_int_eq(sim_lz4_block_decode(block, sizeof block, out, 8), -1);
    const unsigned char zero_offset[] = {0x10, 'a', 0x00, 0x00, 0x00};
    ck_assert_int_eq(sim_lz4_block_decode(zero_offset, sizeof zero_offset, out, sizeof out), -1);
    const unsigned char far_offset[] = {0x10, 'a', 0x05, 0x00, 0x00};
    ck_assert_int_eq(sim_lz4_block_decode(far_offset, sizeof far_offset, out, sizeof out), -1);
    ck_assert_int_eq(sim_lz4_block_decode(lit, 10, out, sizeof out), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fatbin");
    TCase *tc = tcase_create("fatbin");
    tcase_add_test(tc, test_the_graded_gpus_ptx_of_several);
    tcase_add_test(tc, test_zstd_plain_lz4_agree);
    tcase_add_test(tc, test_wrapper_and_container);
    tcase_add_test(tc, test_cubin_only_says_what_to_do);
    tcase_add_test(tc, test_broken_containers);
    tcase_add_test(tc, test_lz4_blocks);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
