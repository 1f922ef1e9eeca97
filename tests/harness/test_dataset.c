/*
 * test_dataset.c - harness/dataset.c: round trips, the exact bytes on disk, and every way a file can be bad.
 *
 * Every error path must return -1, leave the output empty and say which file and what is wrong with it, because
 * that message is all a student sees when a dataset is damaged.
 */
#include "test_util.h"

#include "dataset.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const ppl_dtype dtypes[] = {PPL_F32, PPL_F64, PPL_I32};
static const uint64_t counts[] = {1, 2, 3, 31, 1000, 65537};
#define NUM_DTYPES (int)(sizeof dtypes / sizeof dtypes[0])
#define NUM_COUNTS (int)(sizeof counts / sizeof counts[0])

/* Output that a failed read must clear: a pointer that is never freed and a count that is not 0. */
static char sentinel;

static void assert_read_fails(const char *path, const char *problem)
{
    ppl_dataset out = {PPL_F64, 12345, &sentinel};
    char err[512];
    memset(err, 'X', sizeof err);
    err[sizeof err - 1] = '\0';
    ck_assert_int_eq(ppl_dataset_read(path, &out, err, sizeof err), -1);
    ck_assert_ptr_null(out.data);
    ck_assert_uint_eq(out.count, 0);
    ck_assert_msg(strchr(err, '\n') == NULL, "message is not one line: %s", err);
    ck_assert_msg(strstr(err, path) != NULL, "message does not name the file %s: %s", path, err);
    ck_assert_msg(strstr(err, problem) != NULL, "message does not say \"%s\": %s", problem, err);
}

/* A header followed by extra_bytes bytes of element data. */
static void write_dataset_bytes(const char *path, uint32_t version, uint32_t dtype, uint64_t count, size_t data_bytes)
{
    unsigned char *buf = calloc(1, 24 + data_bytes);
    ck_assert_ptr_nonnull(buf);
    make_header(buf, version, dtype, count);
    write_bytes(path, buf, 24 + data_bytes);
    free(buf);
}

START_TEST(test_dtype_size_and_name)
{
    ck_assert_uint_eq(ppl_dtype_size(PPL_F32), 4);
    ck_assert_uint_eq(ppl_dtype_size(PPL_F64), 8);
    ck_assert_uint_eq(ppl_dtype_size(PPL_I32), 4);
    ck_assert_uint_eq(ppl_dtype_size((ppl_dtype)0), 0);
    ck_assert_uint_eq(ppl_dtype_size(PPL_U8), 1);
    ck_assert_uint_eq(ppl_dtype_size((ppl_dtype)5), 0);
    ck_assert_str_eq(ppl_dtype_name(PPL_F32), "float32");
    ck_assert_str_eq(ppl_dtype_name(PPL_F64), "float64");
    ck_assert_str_eq(ppl_dtype_name(PPL_I32), "int32");
    ck_assert_str_eq(ppl_dtype_name(PPL_U8), "uint8");
    ck_assert_str_eq(ppl_dtype_name((ppl_dtype)0), "unknown");
    ck_assert_str_eq(ppl_dtype_name((ppl_dtype)99), "unknown");
}
END_TEST

/* Loop index i: dtype i / NUM_COUNTS, count i % NUM_COUNTS; random bit patterns, so NaNs and denormals too. */
START_TEST(test_round_trip)
{
    const ppl_dtype dtype = dtypes[_i / NUM_COUNTS];
    const uint64_t count = counts[_i % NUM_COUNTS];
    const size_t size = ppl_dtype_size(dtype);
    unsigned char *data = malloc(count * size);
    ck_assert_ptr_nonnull(data);
    for (uint64_t k = 0; k < count * size; k++)
        data[k] = (unsigned char)ppl_random_bits(7, k);
    const char *path = tmp_path("round.raw");
    char err[256] = "";
    ck_assert_msg(ppl_dataset_write(path, dtype, count, data, err, sizeof err) == 0, "write failed: %s", err);

    size_t file_bytes;
    free(read_bytes(path, &file_bytes));
    ck_assert_uint_eq(file_bytes, 24 + count * size);

    ppl_dataset ds;
    ck_assert_msg(ppl_dataset_read(path, &ds, err, sizeof err) == 0, "read failed: %s", err);
    ck_assert_int_eq(ds.dtype, dtype);
    ck_assert_uint_eq(ds.count, count);
    ck_assert_ptr_nonnull(ds.data);
    ck_assert_mem_eq(ds.data, data, count * size);
    ppl_dataset_free(&ds);
    ck_assert_ptr_null(ds.data);
    ck_assert_uint_eq(ds.count, 0);
    free(data);
}
END_TEST

START_TEST(test_round_trip_special_floats)
{
    const float f[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.4e-45f, -3.4028235e38f, 1.0f / 3.0f};
    const double d[] = {-0.0, INFINITY, -NAN, 4.9e-324, 1.7976931348623157e308, 0.1};
    const int32_t i32[] = {INT32_MIN, -1, 0, 1, INT32_MAX};
    const struct {
        ppl_dtype dtype;
        const void *data;
        uint64_t count;
    } cases[] = {{PPL_F32, f, 8}, {PPL_F64, d, 6}, {PPL_I32, i32, 5}};
    for (int c = 0; c < 3; c++) {
        const char *path = tmp_path("special.raw");
        char err[256] = "";
        ck_assert_int_eq(ppl_dataset_write(path, cases[c].dtype, cases[c].count, cases[c].data, err, sizeof err), 0);
        ppl_dataset ds;
        ck_assert_msg(ppl_dataset_read(path, &ds, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(ds.dtype, cases[c].dtype);
        ck_assert_uint_eq(ds.count, cases[c].count);
        ck_assert_mem_eq(ds.data, cases[c].data, cases[c].count * ppl_dtype_size(cases[c].dtype));
        ppl_dataset_free(&ds);
    }
}
END_TEST

/* The exact bytes of the documented format: header fields little-endian, then little-endian elements. */
START_TEST(test_layout_float32)
{
    const float x[3] = {1.0f, -2.0f, 0.5f};
    const unsigned char want[36] = {
        'P',  'P',  'L',  'D',  'A',  'T',  'A',  0,    /* magic */
        1,    0,    0,    0,                            /* version 1 */
        1,    0,    0,    0,                            /* dtype 1 = float32 */
        3,    0,    0,    0,    0,    0,    0,    0,    /* count 3 */
        0x00, 0x00, 0x80, 0x3f,                         /* 1.0f */
        0x00, 0x00, 0x00, 0xc0,                         /* -2.0f */
        0x00, 0x00, 0x00, 0x3f,                         /* 0.5f */
    };
    const char *path = tmp_path("layout.raw");
    ck_assert_int_eq(ppl_dataset_write(path, PPL_F32, 3, x, NULL, 0), 0);
    size_t len;
    unsigned char *got = read_bytes(path, &len);
    ck_assert_uint_eq(len, sizeof want);
    ck_assert_mem_eq(got, want, sizeof want);
    free(got);
}
END_TEST

START_TEST(test_layout_float64_and_int32)
{
    const double d = 1.0;
    const unsigned char want_d[32] = {'P', 'P', 'L', 'D', 'A', 'T', 'A', 0, 1, 0, 0, 0, 2, 0, 0, 0,
                                      1,   0,   0,   0,   0,   0,   0,   0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    const int32_t i[2] = {0x01020304, -2};
    const unsigned char want_i[32] = {'P', 'P', 'L', 'D', 'A', 'T', 'A', 0, 1, 0, 0,    0,    3,    0,    0,    0,
                                      2,   0,   0,   0,   0,   0,   0,   0, 4, 3, 2,    1,    0xfe, 0xff, 0xff, 0xff};
    size_t len;
    unsigned char *got;

    ck_assert_int_eq(ppl_dataset_write(tmp_path("d.raw"), PPL_F64, 1, &d, NULL, 0), 0);
    got = read_bytes(tmp_path("d.raw"), &len);
    ck_assert_uint_eq(len, sizeof want_d);
    ck_assert_mem_eq(got, want_d, sizeof want_d);
    free(got);

    ck_assert_int_eq(ppl_dataset_write(tmp_path("i.raw"), PPL_I32, 2, i, NULL, 0), 0);
    got = read_bytes(tmp_path("i.raw"), &len);
    ck_assert_uint_eq(len, sizeof want_i);
    ck_assert_mem_eq(got, want_i, sizeof want_i);
    free(got);
}
END_TEST

/* The count field is a full little-endian uint64: a count above 255 uses its second byte. */
START_TEST(test_layout_count_bytes)
{
    float *x = calloc(258, sizeof *x);
    ck_assert_ptr_nonnull(x);
    ck_assert_int_eq(ppl_dataset_write(tmp_path("c.raw"), PPL_F32, 258, x, NULL, 0), 0);
    size_t len;
    unsigned char *got = read_bytes(tmp_path("c.raw"), &len);
    unsigned char want[24];
    make_header(want, 1, 1, 258);
    ck_assert_uint_eq(want[16], 2);
    ck_assert_uint_eq(want[17], 1);
    ck_assert_mem_eq(got, want, 24);
    ck_assert_uint_eq(len, 24 + 258 * 4);
    free(got);
    free(x);
}
END_TEST

/* A hand-made file (the bytes a Python or other writer would produce) reads back as documented. */
START_TEST(test_read_hand_made_file)
{
    unsigned char buf[24 + 8];
    make_header(buf, 1, 3, 2);
    const unsigned char elems[8] = {0xff, 0xff, 0xff, 0x7f, 0x00, 0x00, 0x00, 0x80};
    memcpy(buf + 24, elems, 8);
    write_bytes(tmp_path("hand.raw"), buf, sizeof buf);
    ppl_dataset ds;
    char err[256] = "";
    ck_assert_msg(ppl_dataset_read(tmp_path("hand.raw"), &ds, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(ds.dtype, PPL_I32);
    ck_assert_uint_eq(ds.count, 2);
    ck_assert_int_eq(((int32_t *)ds.data)[0], INT32_MAX);
    ck_assert_int_eq(((int32_t *)ds.data)[1], INT32_MIN);
    ppl_dataset_free(&ds);
}
END_TEST

START_TEST(test_error_missing_file)
{
    assert_read_fails(tmp_path("no-such-file.raw"), "cannot open");
    assert_read_fails(tmp_path("no-such-file.raw"), "No such file");
}
END_TEST

START_TEST(test_error_too_short)
{
    unsigned char h[24];
    make_header(h, 1, 1, 1);
    const size_t lengths[] = {0, 1, 8, 23};
    for (int k = 0; k < 4; k++) {
        write_bytes(tmp_path("short.raw"), h, lengths[k]);
        assert_read_fails(tmp_path("short.raw"), "too short for a dataset header");
    }
}
END_TEST

START_TEST(test_error_bad_magic)
{
    const char *magics[] = {"PPLDATAX", "ppldata\0", "XPLDATA\0", "\0\0\0\0\0\0\0\0"};
    for (int k = 0; k < 4; k++) {
        unsigned char buf[28];
        make_header(buf, 1, 1, 1);
        memcpy(buf, magics[k], 8);
        memset(buf + 24, 0, 4);
        write_bytes(tmp_path("magic.raw"), buf, sizeof buf);
        assert_read_fails(tmp_path("magic.raw"), "bad magic");
    }
}
END_TEST

START_TEST(test_error_version)
{
    write_dataset_bytes(tmp_path("v2.raw"), 2, 1, 1, 4);
    assert_read_fails(tmp_path("v2.raw"), "version 2");
    write_dataset_bytes(tmp_path("v0.raw"), 0, 1, 1, 4);
    assert_read_fails(tmp_path("v0.raw"), "version 0");
    write_dataset_bytes(tmp_path("vbig.raw"), 0x01000000u, 1, 1, 4); /* version 1 written big-endian */
    assert_read_fails(tmp_path("vbig.raw"), "version 16777216");
}
END_TEST

START_TEST(test_error_unknown_dtype)
{
    write_dataset_bytes(tmp_path("t0.raw"), 1, 0, 1, 4);
    assert_read_fails(tmp_path("t0.raw"), "unknown dtype code 0");
    write_dataset_bytes(tmp_path("t5.raw"), 1, 5, 1, 4);
    assert_read_fails(tmp_path("t5.raw"), "unknown dtype code 5");
    write_dataset_bytes(tmp_path("tbig.raw"), 1, 0xffffffffu, 1, 4);
    assert_read_fails(tmp_path("tbig.raw"), "unknown dtype code 4294967295");
}
END_TEST

START_TEST(test_error_count_zero)
{
    write_dataset_bytes(tmp_path("empty.raw"), 1, 1, 0, 0);
    assert_read_fails(tmp_path("empty.raw"), "holds 0 elements");
    write_dataset_bytes(tmp_path("empty4.raw"), 1, 2, 0, 8); /* count 0 even with data after it */
    assert_read_fails(tmp_path("empty4.raw"), "holds 0 elements");
}
END_TEST

START_TEST(test_error_truncated)
{
    write_dataset_bytes(tmp_path("trunc.raw"), 1, 1, 4, 12);
    assert_read_fails(tmp_path("trunc.raw"), "header says 4 float32 elements (40 bytes) but the file has 36 bytes");
    write_dataset_bytes(tmp_path("trunc64.raw"), 1, 2, 2, 15);
    assert_read_fails(tmp_path("trunc64.raw"), "header says 2 float64 elements (40 bytes) but the file has 39 bytes");
    write_dataset_bytes(tmp_path("header-only.raw"), 1, 3, 1, 0);
    assert_read_fails(tmp_path("header-only.raw"), "but the file has 24 bytes");
}
END_TEST

START_TEST(test_error_trailing_bytes)
{
    write_dataset_bytes(tmp_path("long.raw"), 1, 1, 4, 20);
    assert_read_fails(tmp_path("long.raw"), "header says 4 float32 elements (40 bytes) but the file has 44 bytes");
    write_dataset_bytes(tmp_path("long1.raw"), 1, 3, 1, 5);
    assert_read_fails(tmp_path("long1.raw"), "header says 1 int32 elements (28 bytes) but the file has 29 bytes");
}
END_TEST

/* Counts whose byte size does not fit in 64 bits must be refused before any allocation. */
START_TEST(test_error_huge_count)
{
    write_dataset_bytes(tmp_path("huge.raw"), 1, 2, UINT64_MAX, 8);
    assert_read_fails(tmp_path("huge.raw"), "header says 18446744073709551615 float64 elements");
    write_dataset_bytes(tmp_path("huge2.raw"), 1, 2, (uint64_t)1 << 62, 8);
    assert_read_fails(tmp_path("huge2.raw"), "header says 4611686018427387904 float64 elements");
    write_dataset_bytes(tmp_path("big.raw"), 1, 1, (uint64_t)1 << 40, 8);
    assert_read_fails(tmp_path("big.raw"), "(4398046511128 bytes) but the file has 32 bytes");
}
END_TEST

START_TEST(test_error_directory)
{
    ppl_dataset out = {PPL_F32, 3, &sentinel};
    char err[256] = "";
    ck_assert_int_eq(ppl_dataset_read(tmp_dir(), &out, err, sizeof err), -1);
    ck_assert_ptr_null(out.data);
    ck_assert_uint_eq(out.count, 0);
    ck_assert_ptr_nonnull(strstr(err, tmp_dir()));
}
END_TEST

/* err may be NULL or short: the read still fails cleanly and a short message is still terminated. */
START_TEST(test_error_message_buffer)
{
    ppl_dataset out;
    ck_assert_int_eq(ppl_dataset_read(tmp_path("missing.raw"), &out, NULL, 0), -1);
    ck_assert_ptr_null(out.data);
    char err[16];
    memset(err, 'X', sizeof err);
    ck_assert_int_eq(ppl_dataset_read(tmp_path("missing.raw"), &out, err, 10), -1);
    ck_assert_uint_eq(strlen(err), 9);
    ck_assert_int_eq(err[10], 'X');
}
END_TEST

START_TEST(test_write_errors)
{
    const float x[2] = {1.0f, 2.0f};
    char err[256];

    err[0] = '\0';
    ck_assert_int_eq(ppl_dataset_write(tmp_path("zero.raw"), PPL_F32, 0, x, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "zero.raw"));
    ck_assert_int_ne(access(tmp_path("zero.raw"), F_OK), 0);

    err[0] = '\0';
    ck_assert_int_eq(ppl_dataset_write(tmp_path("dtype.raw"), (ppl_dtype)5, 2, x, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "dtype.raw"));
    ck_assert_int_ne(access(tmp_path("dtype.raw"), F_OK), 0);

    err[0] = '\0';
    ck_assert_int_eq(ppl_dataset_write(tmp_path("no-dir/x.raw"), PPL_F32, 2, x, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "no-dir/x.raw: cannot create"));

    if (access("/dev/full", W_OK) == 0) { /* Linux: every write fails with ENOSPC */
        err[0] = '\0';
        ck_assert_int_eq(ppl_dataset_write("/dev/full", PPL_F32, 2, x, err, sizeof err), -1);
        ck_assert_ptr_nonnull(strstr(err, "/dev/full: write error"));
    }
}
END_TEST

START_TEST(test_free_is_safe)
{
    ppl_dataset_free(NULL);
    ppl_dataset ds = {PPL_F32, 0, NULL};
    ppl_dataset_free(&ds);
    ds.data = malloc(8);
    ds.count = 2;
    ppl_dataset_free(&ds);
    ppl_dataset_free(&ds);
    ck_assert_ptr_null(ds.data);
    ck_assert_uint_eq(ds.count, 0);
}
END_TEST

/* Regression tests for harness bugs this suite found (now fixed). */

/* A directory opens with fopen on Linux and then fails to read (EISDIR); the message blames the length. */
START_TEST(bug_directory_message)
{
    ppl_dataset out;
    char err[256] = "";
    ck_assert_int_eq(ppl_dataset_read(tmp_dir(), &out, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "too short") == NULL, "a directory is reported as a short file: %s", err);
}
END_TEST

/* With a count whose byte size overflows, the message prints the wrapped byte count (24 + 8 * 2^62 mod 2^64). */
START_TEST(bug_huge_count_message)
{
    write_dataset_bytes(tmp_path("huge2.raw"), 1, 2, (uint64_t)1 << 62, 8);
    ppl_dataset out;
    char err[256] = "";
    ck_assert_int_eq(ppl_dataset_read(tmp_path("huge2.raw"), &out, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "(24 bytes)") == NULL, "the needed size wrapped around: %s", err);
}
END_TEST

Suite *dataset_suite(void)
{
    Suite *s = suite_create("dataset");
    TCase *tc;

    tc = tcase_create("dtypes");
    tcase_add_test(tc, test_dtype_size_and_name);
    suite_add_tcase(s, tc);

    tc = tcase_create("round_trip");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_loop_test(tc, test_round_trip, 0, NUM_DTYPES * NUM_COUNTS);
    tcase_add_test(tc, test_round_trip_special_floats);
    suite_add_tcase(s, tc);

    tc = tcase_create("layout");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_layout_float32);
    tcase_add_test(tc, test_layout_float64_and_int32);
    tcase_add_test(tc, test_layout_count_bytes);
    tcase_add_test(tc, test_read_hand_made_file);
    suite_add_tcase(s, tc);

    tc = tcase_create("read_errors");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_error_missing_file);
    tcase_add_test(tc, test_error_too_short);
    tcase_add_test(tc, test_error_bad_magic);
    tcase_add_test(tc, test_error_version);
    tcase_add_test(tc, test_error_unknown_dtype);
    tcase_add_test(tc, test_error_count_zero);
    tcase_add_test(tc, test_error_truncated);
    tcase_add_test(tc, test_error_trailing_bytes);
    tcase_add_test(tc, test_error_huge_count);
    tcase_add_test(tc, test_error_directory);
    tcase_add_test(tc, test_error_message_buffer);
    suite_add_tcase(s, tc);

    tc = tcase_create("write_errors");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_write_errors);
    tcase_add_test(tc, test_free_is_safe);
    suite_add_tcase(s, tc);

    tc = tcase_create("known_bugs");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, bug_directory_message);
    tcase_add_test(tc, bug_huge_count_message);
    suite_add_tcase(s, tc);
    return s;
}
