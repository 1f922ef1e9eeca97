/* test_util.c - scratch folders and file helpers for the harness unit tests (see test_util.h). */
#include "test_util.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir_buf[4096];
static char path_buf[4096 + 256];

const char *tmp_dir(void)
{
    if (dir_buf[0] == '\0') {
        const char *base = getenv("TMPDIR");
        snprintf(dir_buf, sizeof dir_buf, "%s/ppl-harness-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(dir_buf))
            ck_abort_msg("mkdtemp(%s): %s", dir_buf, strerror(errno));
    }
    return dir_buf;
}

const char *tmp_path(const char *name)
{
    if (snprintf(path_buf, sizeof path_buf, "%s/%s", tmp_dir(), name) >= (int)sizeof path_buf)
        ck_abort_msg("path too long: %s/%s", tmp_dir(), name);
    return path_buf;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void tmp_cleanup(void)
{
    if (dir_buf[0] != '\0')
        nftw(dir_buf, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    dir_buf[0] = '\0';
}

void tmp_setup_fixture(void) { (void)tmp_dir(); }

void tmp_teardown_fixture(void) { tmp_cleanup(); }

void write_bytes(const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        ck_abort_msg("cannot create %s: %s", path, strerror(errno));
    if (len > 0 && fwrite(bytes, 1, len, f) != len)
        ck_abort_msg("cannot write %s", path);
    if (fclose(f) != 0)
        ck_abort_msg("cannot close %s", path);
}

unsigned char *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        ck_abort_msg("cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, used = 0;
    unsigned char *buf = malloc(cap + 1);
    ck_assert_ptr_nonnull(buf);
    size_t got;
    while ((got = fread(buf + used, 1, cap - used, f)) > 0) {
        used += got;
        if (used == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            ck_assert_ptr_nonnull(buf);
        }
    }
    fclose(f);
    buf[used] = '\0';
    *len = used;
    return buf;
}

void make_header(unsigned char h[24], uint32_t version, uint32_t dtype, uint64_t count)
{
    memcpy(h, "PPLDATA", 8); /* 7 letters and the terminating zero byte */
    for (int i = 0; i < 4; i++) {
        h[8 + i] = (unsigned char)(version >> (8 * i));
        h[12 + i] = (unsigned char)(dtype >> (8 * i));
    }
    for (int i = 0; i < 8; i++)
        h[16 + i] = (unsigned char)(count >> (8 * i));
}
