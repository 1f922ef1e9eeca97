/* dataset.c - reading and writing the kit's dataset format (see dataset.h). */
#include "dataset.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_err(char *err, size_t err_len, const char *fmt, ...)
{
    if (!err || err_len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Reverses each element's bytes in place; used only on big-endian hosts. */
static void swap_elements(void *data, uint64_t count, size_t size)
{
    uint8_t *p = (uint8_t *)data;
    for (uint64_t i = 0; i < count; i++, p += size)
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

size_t ppl_dtype_size(ppl_dtype dtype)
{
    switch (dtype) {
    case PPL_F32: return 4;
    case PPL_F64: return 8;
    case PPL_I32: return 4;
    case PPL_U8: return 1;
    }
    return 0;
}

const char *ppl_dtype_name(ppl_dtype dtype)
{
    switch (dtype) {
    case PPL_F32: return "float32";
    case PPL_F64: return "float64";
    case PPL_I32: return "int32";
    case PPL_U8: return "uint8";
    }
    return "unknown";
}

void ppl_dataset_free(ppl_dataset *ds)
{
    if (!ds)
        return;
    free(ds->data);
    ds->data = NULL;
    ds->count = 0;
}

int ppl_dataset_read(const char *path, ppl_dataset *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, err_len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    uint8_t h[PPL_DATASET_HEADER_BYTES];
    if (fread(h, 1, sizeof h, f) != sizeof h) {
        if (ferror(f))
            set_err(err, err_len, "%s: cannot read: %s", path, strerror(errno));
        else
            set_err(err, err_len, "%s: too short for a dataset header (%u bytes)", path, PPL_DATASET_HEADER_BYTES);
        goto fail;
    }
    if (memcmp(h, PPL_DATASET_MAGIC, 8) != 0) {
        set_err(err, err_len, "%s: not a dataset file (bad magic; expected \"%s\")", path, PPL_DATASET_MAGIC);
        goto fail;
    }
    uint32_t version = (uint32_t)get_le(h + 8, 4);
    ppl_dtype dtype = (ppl_dtype)get_le(h + 12, 4);
    uint64_t count = get_le(h + 16, 8);
    size_t size = ppl_dtype_size(dtype);
    if (version != PPL_DATASET_VERSION) {
        set_err(err, err_len, "%s: dataset version %u, this kit reads version %u", path, version,
                PPL_DATASET_VERSION);
        goto fail;
    }
    if (size == 0) {
        set_err(err, err_len, "%s: unknown dtype code %u (1 float32, 2 float64, 3 int32, 4 uint8)", path,
                (unsigned)dtype);
        goto fail;
    }
    if (count == 0) {
        set_err(err, err_len, "%s: holds 0 elements; a dataset needs at least one", path);
        goto fail;
    }
    if (fseek(f, 0, SEEK_END) != 0) {
        set_err(err, err_len, "%s: cannot seek: %s", path, strerror(errno));
        goto fail;
    }
    long long file_bytes = ftell(f);
    if (count > (UINT64_MAX - PPL_DATASET_HEADER_BYTES) / size) {
        set_err(err, err_len, "%s: header says %llu %s elements, more bytes than a file can hold", path,
                (unsigned long long)count, ppl_dtype_name(dtype));
        goto fail;
    }
    unsigned long long want = PPL_DATASET_HEADER_BYTES + (unsigned long long)count * size;
    if (file_bytes < 0 || (unsigned long long)file_bytes != want) {
        set_err(err, err_len, "%s: header says %llu %s elements (%llu bytes) but the file has %lld bytes", path,
                (unsigned long long)count, ppl_dtype_name(dtype), want, file_bytes);
        goto fail;
    }
    void *data = malloc((size_t)(count * size));
    if (!data) {
        set_err(err, err_len, "%s: out of host memory for %llu elements", path, (unsigned long long)count);
        goto fail;
    }
    if (fseek(f, PPL_DATASET_HEADER_BYTES, SEEK_SET) != 0 || fread(data, size, count, f) != count) {
        set_err(err, err_len, "%s: read error", path);
        free(data);
        goto fail;
    }
    fclose(f);
    if (!host_is_little_endian())
        swap_elements(data, count, size);
    out->dtype = dtype;
    out->count = count;
    out->data = data;
    return 0;
fail:
    fclose(f);
    return -1;
}

int ppl_dataset_write(const char *path, ppl_dtype dtype, uint64_t count, const void *data, char *err,
                      size_t err_len)
{
    size_t size = ppl_dtype_size(dtype);
    if (size == 0 || count == 0) {
        set_err(err, err_len, "%s: refusing to write %llu elements of dtype %u", path, (unsigned long long)count,
                (unsigned)dtype);
        return -1;
    }
    uint8_t h[PPL_DATASET_HEADER_BYTES] = {0};
    memcpy(h, PPL_DATASET_MAGIC, 8);
    put_le(h + 8, PPL_DATASET_VERSION, 4);
    put_le(h + 12, (uint64_t)dtype, 4);
    put_le(h + 16, count, 8);
    FILE *f = fopen(path, "wb");
    if (!f) {
        set_err(err, err_len, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    int ok = fwrite(h, 1, sizeof h, f) == sizeof h;
    if (ok && host_is_little_endian()) {
        ok = fwrite(data, size, count, f) == count;
    } else if (ok) {
        const uint8_t *p = (const uint8_t *)data;
        uint8_t tmp[8];
        for (uint64_t i = 0; ok && i < count; i++, p += size) {
            for (size_t b = 0; b < size; b++)
                tmp[b] = p[size - 1 - b];
            ok = fwrite(tmp, 1, size, f) == size;
        }
    }
    if (fclose(f) != 0)
        ok = 0;
    if (!ok) {
        set_err(err, err_len, "%s: write error: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
