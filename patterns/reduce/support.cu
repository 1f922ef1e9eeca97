/* patterns/reduce/support.cu - the harness helpers declared in reduce.h, for the runner and the device program
 * alike. */
#include "reduce.h"

#include <stdio.h>
#include <stdlib.h>

size_t reduce_work_elems(size_t n) { return n / 32 + 1024; }

void reduce_tree_of_blocks(float *d_in, float *d_out, size_t n, float *d_work, size_t elems_per_block,
                           reduce_pass_fn pass)
{
    if (elems_per_block < 64) { /* the halves of d_work hold n/64 + 512 partial sums */
        fprintf(stderr, "reduce_tree_of_blocks: elems_per_block is %zu; it must be at least 64\n", elems_per_block);
        exit(PPL_EXIT_USAGE);
    }
    const size_t half = reduce_work_elems(n) / 2;
    float *src = d_in;
    size_t count = n;
    for (int level = 0; count > 1; level++) {
        float *dst = d_work + (level % 2) * half;
        const size_t grid_dim = ceil_div(count, elems_per_block);
        pass(src, dst, count, (unsigned)grid_dim);
        CUDA_CHECK_LAUNCH();
        src = dst;
        count = grid_dim;
    }
    CUDA_CHECK(cudaMemcpyAsync(d_out, src, sizeof(float), cudaMemcpyDeviceToDevice));
}
