/*
 * check_i32.h - checking int32 outputs: poisoned buffers, element-by-element comparison with the first mismatch
 * named, guard regions past the output, and an unchanged input; the compaction's reference. Used by the scan,
 * compaction and histogram harnesses. The host functions over n elements run on an OpenMP team from
 * PPL_PARALLEL_MIN elements on (harness/checker/parallel.h) and give the same results and messages on any number of
 * threads.
 */
#ifndef PPL_CHECK_I32_H
#define PPL_CHECK_I32_H

#include <stddef.h>
#include <stdint.h>

/* Elements of poison after every output buffer: a write there is a write past the output. */
#define PPL_GUARD_ELEMS 4096 /* = PPL_GUARD_WORDS of protocol.h */
/* The poison byte; each poisoned int32 reads 0xA5A5A5A5. */
#define PPL_POISON_BYTE 0xA5
#define PPL_POISON_I32 ((int)0xA5A5A5A5u)

/* The compaction's reference (host): writes the elements of in[0..n) greater than threshold to out, in input order,
 * and returns how many. out has room for n elements; nothing past the kept ones is written. */
size_t ppl_compact_greater_i32(const int *in, int *out, size_t n, int threshold);

/* For each k < count, index[k] = the input index of the element that ppl_compact_greater_i32 would write at out
 * position ranks[k] (host). Every rank must be below the number of elements kept. */
void ppl_kept_indices_i32(const int *in, size_t n, int threshold, const size_t *ranks, size_t count, size_t *index);

/* Returns 1 if got is the keyed checksum (checksum.h) of was[0..n) (host, 32-bit words), else 0 with a message: the
 * input was changed, somewhere (a large input comes back as its checksum only). */
int ppl_check_input_sum(uint64_t got, const void *was, size_t n, uint64_t key, char *message, size_t message_len);

/* The same with the input's checksum already known (want: one the checker computed without a copy, reference.h's
 * ppl_generated_sums), for an input of n elements. */
int ppl_check_input_checksum(uint64_t got, uint64_t want, size_t n, char *message, size_t message_len);

/* Fills d[0..count) (device) with the poison pattern. */
void ppl_poison_i32(int *d, size_t count);

/*
 * Compares got[0..n) with want[0..n) (host). Returns 1 if equal; otherwise 0 with a message naming the first
 * mismatching index, both values, and how many elements differ.
 */
int ppl_compare_i32(const int *got, const int *want, size_t n, char *message, size_t message_len);

/* Returns 1 if got[from..end + PPL_GUARD_ELEMS) (host copy) still holds the poison, else 0 with a message naming
 * the first element written past the output, whose length is from. */
int ppl_check_guard_i32(const int *got, size_t from, size_t end, char *message, size_t message_len);

/* Returns 1 if now[0..n) (a host copy of the input after the run) still equals was, else 0 with a message naming
 * the first changed element. */
int ppl_check_input_unchanged_i32(const int *now, const int *was, size_t n, char *message, size_t message_len);

/* The checksum (checksum.h) of the count 32-bit words at d (device), at positions 0, 1, ..., computed on the GPU.
 * Synchronizes. */
uint64_t ppl_checksum_device(const void *d, size_t count, uint64_t key);

#endif
