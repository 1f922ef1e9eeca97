/*
 * sched.cu - kernels for the schedule tests (tests/sim/core/test_sched.c): barriers with a reduction, a flag and
 * its value published with and without a fence, a wait on another block (forward progress), a race on global
 * memory. The lines marked LINE_* are checked by the tests: keep them where they are or update test_sched.c.
 */

/* out[0..2] = __syncthreads_count / _and / _or of (threadIdx.x % k == 0), as every thread saw them. */
__global__ void barrier_reductions(int *out, int k)
{
    const int p = threadIdx.x % k == 0;
    const int count = __syncthreads_count(p);
    const int all = __syncthreads_and(p);
    const int any = __syncthreads_or(p);
    if (threadIdx.x == blockDim.x - 1) {
        out[0] = count;
        out[1] = all;
        out[2] = any;
    }
}

/* Block b > 0 waits for block b-1's flag, then reads its value; block b publishes value b+1 then its flag.
   out[b] = the value block b read (b for a correct read: block b-1 wrote b). The fence is between value and flag
   when fenced is nonzero. Blocks must start in order (the waits point backward), so this runs in order or
   interleaved, not reversed. */
__global__ void publish(volatile int *value, volatile int *flag, int *out, int fenced)
{
    if (threadIdx.x != 0)
        return;
    const unsigned b = blockIdx.x;
    if (b > 0) {
        while (flag[b - 1] == 0)
            __nanosleep(100);
        __threadfence();
        out[b] = value[b - 1];
    }
    value[b] = (int)b + 1;
    if (fenced)
        __threadfence();
    flag[b] = 1;
}

/* Block b waits for block b+1's flag: a wait on a block that starts later in blockIdx order. */
__global__ void wait_on_later(volatile int *flag)
{
    if (threadIdx.x != 0)
        return;
    const unsigned b = blockIdx.x;
    if (b + 1 < gridDim.x)
        while (flag[b + 1] == 0) /* LINE_WAIT_LATER */
            __nanosleep(100);
    flag[b] = 1;
}

/* Every thread waits for a flag nobody sets. */
__global__ void wait_forever(volatile int *flag)
{
    while (flag[0] == 0)
        __nanosleep(100);
}

/* In-place pairwise sums in global memory with no barrier between the two steps: a race between warps. */
__global__ void global_race(int *data)
{
    const unsigned t = threadIdx.x;
    data[t] += 1;
    data[(t + 32) % blockDim.x] += data[t]; /* LINE_GLOBAL_RACE */
}
