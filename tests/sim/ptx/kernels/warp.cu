// warp.cu - rows of the simulator's PTX table (sim/README.md): warp-level intrinsics. Every kernel takes
// (const unsigned *in, unsigned *out); tests/sim/ptx/rows.c holds each one's launch and its CPU expectation.
// Kernels that need sm_80 (redux.sync) are compiled only for compute_80 and later.
#define ROW(name) extern "C" __global__ void name(const unsigned *in, unsigned *out)
#define FULL 0xffffffffu

// bar.warp.sync: __syncwarp() over the warp, then over each half of it on the two sides of a branch.
ROW(row_syncwarp)
{
    __shared__ unsigned s[64];
    unsigned t = threadIdx.x, lane = t & 31, v;
    s[t] = in[t];
    __syncwarp();
    v = s[t ^ 1];
    if (lane < 16) {
        __syncwarp(0x0000ffffu);
        s[t] = v + 1;
        __syncwarp(0x0000ffffu);
        v = s[t ^ 3];
    } else {
        __syncwarp(0xffff0000u);
        s[t] = v + 2;
        __syncwarp(0xffff0000u);
        v = s[t ^ 3];
    }
    out[t] = v;
}

// shfl.sync.idx/up/down/bfly.b32 with the default width and with widths 16 and 8.
ROW(row_shfl32)
{
    unsigned t = threadIdx.x, v = in[t];
    out[6 * t + 0] = __shfl_sync(FULL, v, (t * 7) & 31);
    out[6 * t + 1] = __shfl_sync(FULL, v, 5, 8);
    out[6 * t + 2] = __shfl_up_sync(FULL, v, 3);
    out[6 * t + 3] = __shfl_up_sync(FULL, v, 3, 16);
    out[6 * t + 4] = __shfl_down_sync(FULL, v, 5, 8);
    out[6 * t + 5] = __shfl_xor_sync(FULL, v, 6);
}

// 64-bit and float shuffles: two shfl.sync.b32 and mov.b64 pack/unpack, and f32 in a b32 register.
ROW(row_shfl64)
{
    unsigned t = threadIdx.x;
    unsigned long long v = (unsigned long long)in[2 * t] << 32 | in[2 * t + 1];
    double d = (double)in[2 * t] * 0.25;
    float f = (float)(in[2 * t + 1] & 0xffff) * 0.5f;
    unsigned long long a = __shfl_down_sync(FULL, v, 1);
    double b = __shfl_xor_sync(FULL, d, 4);
    float c = __shfl_sync(FULL, f, 31 - (t & 31));
    ((unsigned long long *)out)[2 * t] = a;
    ((double *)out)[2 * t + 1] = b;
    ((float *)out)[4 * 64 + t] = c;
}

// shfl.sync under divergence: each half of the warp shuffles within itself with its own member mask.
ROW(row_shfl_diverged)
{
    unsigned t = threadIdx.x, lane = t & 31, v = in[t];
    if (lane & 1)
        out[t] = __shfl_down_sync(0xaaaaaaaau, v, 2); // odd lanes only: lane + 2 (the top one keeps its own)
    else
        out[t] = __shfl_sync(0x55555555u, v, 0) + 1;  // even lanes only: lane 0's value
}

// vote.sync.all/any/uni.pred and vote.sync.ballot.b32, and activemask.b32 of a partial last warp (48 threads).
ROW(row_vote)
{
    unsigned t = threadIdx.x, lane = t & 31, v = in[t] % 100;
    out[5 * t + 0] = __all_sync(__activemask(), v < 100);
    out[5 * t + 1] = __any_sync(__activemask(), v > 90) + 2 * __all_sync(__activemask(), v > 5);
    out[5 * t + 2] = __uni_sync(__activemask(), v & 1) + 2 * __uni_sync(__activemask(), v < 100);
    out[5 * t + 3] = __ballot_sync(__activemask(), v & 1);
    out[5 * t + 4] = __activemask();
    if (lane & 1)
        out[5 * t + 3] ^= __ballot_sync(0xaaaaaaaau & __activemask(), v > 50) << 1;
}

// match.any.sync.b32/b64 and match.all.sync.b32/b64 (sm_70): the lanes holding the same value.
ROW(row_match)
{
    unsigned t = threadIdx.x, v = in[t] % 4;
    int pred = 0;
    out[4 * t + 0] = __match_any_sync(FULL, v);
    out[4 * t + 1] = __match_any_sync(FULL, (unsigned long long)(v & 1) << 40);
    out[4 * t + 2] = __match_all_sync(FULL, v / 4, &pred) ^ (unsigned)pred;
    out[4 * t + 3] = __match_all_sync(FULL, (unsigned long long)v, &pred) + 2 * (unsigned)pred;
}

// match.any.sync under divergence: the odd lanes only.
ROW(row_match_diverged)
{
    unsigned t = threadIdx.x, v = in[t] % 3;
    out[t] = (t & 1) ? __match_any_sync(0xaaaaaaaau, v) : 7;
}

// bar.red.popc.u32 / bar.red.and.pred / bar.red.or.pred: __syncthreads_count, _and, _or over 96 threads.
ROW(row_syncthreads_count)
{
    unsigned t = threadIdx.x, v = in[t] % 10;
    out[3 * t + 0] = __syncthreads_count(v < 3);
    out[3 * t + 1] = __syncthreads_and(v < 10) + 2 * __syncthreads_and(v < 9);
    out[3 * t + 2] = __syncthreads_or(v == 11) + 2 * __syncthreads_or(v == 4);
}

#if __CUDA_ARCH__ >= 800
// redux.sync (sm_80): __reduce_{add,min,max}_sync on unsigned and int, __reduce_{and,or,xor}_sync.
ROW(row_redux)
{
    unsigned t = threadIdx.x, v = in[t];
    int s = (int)v >> 3;
    out[8 * t + 0] = __reduce_add_sync(FULL, v);
    out[8 * t + 1] = (unsigned)__reduce_add_sync(FULL, s);
    out[8 * t + 2] = __reduce_min_sync(FULL, v);
    out[8 * t + 3] = (unsigned)__reduce_min_sync(FULL, s);
    out[8 * t + 4] = __reduce_max_sync(FULL, v);
    out[8 * t + 5] = (unsigned)__reduce_max_sync(FULL, s);
    out[8 * t + 6] = __reduce_and_sync(FULL, v | 0x0f0f0f0fu) ^ __reduce_or_sync(FULL, v & 0xf0f0f0f0u);
    out[8 * t + 7] = __reduce_xor_sync(FULL, v);
}

// redux.sync under divergence: the lanes below 12 only.
ROW(row_redux_diverged)
{
    unsigned t = threadIdx.x, lane = t & 31;
    out[t] = lane < 12 ? __reduce_add_sync(0x00000fffu, in[t]) : 0;
}
#endif
