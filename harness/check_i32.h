/*
 * check_i32.h - checking int32 outputs: poisoned buffers, element-by-element comparison with the first mismatch
 * named, guard regions past the output, and an unchanged input. Used by the scan and compaction harnesses.
 */
#ifndef PPL_CHECK_I32_H
#define PPL_CHECK_I32_H

#include <stddef.h>

/* Elements of poison after every output buffer: a write there is a write past the output. */
#define PPL_GUARD_ELEMS 4096
/* The poison byte; each poisoned int32 reads 0xA5A5A5A5. */
#define PPL_POISON_BYTE 0xA5
#define PPL_POISON_I32 ((int)0xA5A5A5A5u)

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

/* Returns 1 if d_in[0..n) (device) still equals h_in, else 0 with a message naming the first changed element. */
int ppl_check_input_unchanged_i32(const int *d_in, const int *h_in, size_t n, char *message, size_t message_len);

/* The number of i in [0, n) with d_a[i] != d_b[i] (device arrays), counted on the GPU. Synchronizes. */
unsigned long long ppl_count_mismatches_i32(const int *d_a, const int *d_b, size_t n);

#endif
