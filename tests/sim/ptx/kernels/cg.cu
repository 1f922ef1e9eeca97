// cg.cu - rows of the simulator's PTX table (sim/README.md): cooperative groups' tiles, reductions and scans (what
// they compile to: shfl.sync, vote.sync, match.sync, bar.warp.sync with a tile's mask, and redux.sync for 32-bit
// integer reductions on sm_80). Kernels take (const unsigned *in, unsigned *out); tests/sim/ptx/rows.c holds the
// launches and the CPU expectations.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;
#define ROW(name) extern "C" __global__ void name(const unsigned *in, unsigned *out)

// thread_block_tile<N>: sizes, ranks, shfl/shfl_up/shfl_down/shfl_xor and sync on tiles of 32, 16, 8 and 4.
ROW(row_cg_tiles)
{
    cg::thread_block block = cg::this_thread_block();
    unsigned t = block.thread_rank(), v = in[t];
    cg::thread_block_tile<32> t32 = cg::tiled_partition<32>(block);
    cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
    cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(block);
    cg::thread_block_tile<4> t4 = cg::tiled_partition<4>(block);
    out[6 * t + 0] = t16.thread_rank() | t16.meta_group_rank() << 8 | t8.size() << 16 | t4.meta_group_size() << 24;
    out[6 * t + 1] = t32.shfl(v, 7);
    out[6 * t + 2] = t16.shfl_up(v, 2);
    out[6 * t + 3] = t8.shfl_down(v, 3);
    t8.sync();
    out[6 * t + 4] = t4.shfl_xor(v, 1);
    out[6 * t + 5] = t16.shfl(v, 15);
}

// tile.any / all / ballot and match_any / match_all on tiles of 32 and 8.
ROW(row_cg_votes)
{
    cg::thread_block block = cg::this_thread_block();
    unsigned t = block.thread_rank(), v = in[t] % 8;
    cg::thread_block_tile<32> t32 = cg::tiled_partition<32>(block);
    cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(block);
    int pred = 0;
    out[4 * t + 0] = t32.any(v == 7) | t8.all(v < 8) << 1 | t8.any(v == 0) << 2;
    out[4 * t + 1] = t32.ballot(v & 1);
    out[4 * t + 2] = t8.ballot(v > 3);
    out[4 * t + 3] = t8.match_any(v & 3) ^ t32.match_all(v < 8, pred) ^ (unsigned)pred << 31;
}

// cg::reduce over tiles of 32, 16 and 8: plus, less, greater, bit_and/or/xor on unsigned (redux.sync on sm_80, a
// shuffle tree before), and plus on float (a shuffle tree everywhere).
ROW(row_cg_reduce)
{
    cg::thread_block block = cg::this_thread_block();
    unsigned t = block.thread_rank(), v = in[t];
    cg::thread_block_tile<32> t32 = cg::tiled_partition<32>(block);
    cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
    cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(block);
    out[8 * t + 0] = cg::reduce(t32, v, cg::plus<unsigned>());
    out[8 * t + 1] = cg::reduce(t16, v, cg::less<unsigned>());
    out[8 * t + 2] = (unsigned)cg::reduce(t8, (int)v, cg::greater<int>());
    out[8 * t + 3] = cg::reduce(t32, v, cg::bit_and<unsigned>());
    out[8 * t + 4] = cg::reduce(t16, v, cg::bit_or<unsigned>());
    out[8 * t + 5] = cg::reduce(t8, v, cg::bit_xor<unsigned>());
    float f = cg::reduce(t32, (float)(v & 0xff), cg::plus<float>());
    out[8 * t + 6] = __float_as_uint(f);
    out[8 * t + 7] = (unsigned)cg::reduce(t16, (unsigned long long)v << 20, cg::plus<unsigned long long>()) >> 20;
}

// cg::inclusive_scan and cg::exclusive_scan over tiles of 32 and 8 (shfl.sync.up).
ROW(row_cg_scan)
{
    cg::thread_block block = cg::this_thread_block();
    unsigned t = block.thread_rank(), v = in[t] % 1000;
    cg::thread_block_tile<32> t32 = cg::tiled_partition<32>(block);
    cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(block);
    out[3 * t + 0] = cg::inclusive_scan(t32, v);
    out[3 * t + 1] = cg::exclusive_scan(t8, v);
    out[3 * t + 2] = cg::inclusive_scan(t8, v, cg::greater<unsigned>());
}

// coalesced_threads() inside a branch (activemask.b32), its size, rank and shfl; labeled_partition (match.any.sync).
ROW(row_cg_coalesced)
{
    cg::thread_block block = cg::this_thread_block();
    unsigned t = block.thread_rank(), v = in[t] % 4;
    out[2 * t + 0] = 0;
    if (v & 1) {
        cg::coalesced_group g = cg::coalesced_threads();
        out[2 * t + 0] = g.size() | g.thread_rank() << 8 | g.shfl(t, 0) << 16;
    }
    cg::thread_block_tile<32> t32 = cg::tiled_partition<32>(block);
    cg::coalesced_group byv = cg::labeled_partition(t32, (int)v);
    out[2 * t + 1] = byv.size() | byv.thread_rank() << 8;
}

// tiled_partition(block, 8): a tile whose size is known only at run time (thread_group), its rank and sync.
ROW(row_cg_dynamic_tile)
{
    __shared__ unsigned s[64];
    cg::thread_block block = cg::this_thread_block();
    unsigned t = block.thread_rank();
    cg::thread_group g = cg::tiled_partition(block, 8);
    s[t] = in[t];
    g.sync();
    out[t] = s[t ^ 7] + g.thread_rank() * 1000 + g.size() * 100000;
    block.sync();
}
