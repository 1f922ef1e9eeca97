/*
 * test_util.h - helpers shared by the harness unit tests: scratch folders, whole-file reads and writes.
 *
 * The helpers abort the test (ck_abort_msg) rather than return errors, so a test body stays a list of facts.
 * In loops over many elements, test with a plain `if` and ck_abort_msg: every ck_assert_* also records a mark
 * point with the runner, which costs about a microsecond, so a million of them is seconds.
 */
#ifndef PPL_TEST_UTIL_H
#define PPL_TEST_UTIL_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

/* The suites, one per module of the checker (harness/checker/); test_main.c runs them all. */
Suite *dataset_suite(void);
Suite *rng_suite(void);
Suite *reference_suite(void);
Suite *stats_suite(void);
Suite *results_suite(void);
Suite *cli_suite(void);
Suite *link_suite(void);     /* link.c and bench.c, with the fake runner (fake_runner.c) */
Suite *checksum_suite(void);
Suite *check_i32_suite(void);  /* check_i32.c: the compaction's reference, the comparisons */
Suite *committed_datasets_suite(const char *root); /* root: the kit's datasets/ */

/* A fresh scratch folder (mkdtemp under $TMPDIR or /tmp) for the running test; tmp_path names a file in it. */
const char *tmp_dir(void);
const char *tmp_path(const char *name); /* returns a static buffer: use it before the next call */
void tmp_cleanup(void);                 /* removes the folder and what is in it */

/* Checked fixture that makes and removes the scratch folder around each test. */
void tmp_setup_fixture(void);
void tmp_teardown_fixture(void);

/* Writes len bytes to path, replacing it. */
void write_bytes(const char *path, const void *bytes, size_t len);

/* Reads all of path into a malloc'd buffer (NUL-terminated for text use); *len gets its size. */
unsigned char *read_bytes(const char *path, size_t *len);

/* A valid 24-byte dataset header, to corrupt one field at a time. */
void make_header(unsigned char h[24], uint32_t version, uint32_t dtype, uint64_t count);

#endif
