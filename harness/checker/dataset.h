/*
 * dataset.h - the kit's on-disk dataset format (host code, no CUDA).
 *
 * A dataset file is a 24-byte header followed by the elements, all little-endian:
 *
 *   offset  size  field
 *        0     8  magic, the bytes "PPLDATA" and a zero byte
 *        8     4  version, uint32, = 1
 *       12     4  dtype, uint32: 1 = float32, 2 = float64, 3 = int32, 4 = uint8
 *       16     8  count, uint64, number of elements (>= 1)
 *       24   ...  count elements of dtype
 *
 * The file's size must be exactly 24 + count * sizeof(dtype); anything else is an error. datasets/README.md
 * documents the same format for people.
 */
#ifndef PPL_DATASET_H
#define PPL_DATASET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PPL_DATASET_MAGIC "PPLDATA"
#define PPL_DATASET_VERSION 1u
#define PPL_DATASET_HEADER_BYTES 24u

typedef enum { PPL_F32 = 1, PPL_F64 = 2, PPL_I32 = 3, PPL_U8 = 4 } ppl_dtype;

typedef struct {
    ppl_dtype dtype;
    uint64_t count; /* elements */
    void *data;     /* count elements of dtype, malloc'd; ppl_dataset_free releases it */
} ppl_dataset;

/* Bytes per element of dtype, or 0 for an unknown dtype. */
size_t ppl_dtype_size(ppl_dtype dtype);

/* "float32", "float64", "int32", or "unknown". */
const char *ppl_dtype_name(ppl_dtype dtype);

/*
 * Reads the dataset at path into *out. Returns 0 on success; on any error (missing file, bad magic, unknown
 * version or dtype, count 0, a size that does not match the header, out of memory) returns -1, leaves *out empty
 * and writes a one-line message naming the file and the problem into err (err_len bytes).
 */
int ppl_dataset_read(const char *path, ppl_dataset *out, char *err, size_t err_len);

/* Writes count elements of dtype to path. Returns 0, or -1 with a message in err. */
int ppl_dataset_write(const char *path, ppl_dtype dtype, uint64_t count, const void *data, char *err,
                      size_t err_len);

/* Frees the data of *ds and empties it; safe on an empty dataset. */
void ppl_dataset_free(ppl_dataset *ds);

#ifdef __cplusplus
}
#endif
#endif
