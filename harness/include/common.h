/* common.h - small helpers shared by the harness and every lab file. */
#ifndef PPL_COMMON_H
#define PPL_COMMON_H

#include <stddef.h>

#include "cuda_check.h"

/* ceil(a / b) for b > 0. */
static inline __host__ __device__ size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

#endif
