// EXL2 quantized matmul for small M (decode, speculative verification, M <= 16 per launch):
// y[m, n] += x[m, k] . W, weights dequantised on the fly from the backend's own repacked
// layout (built at load by exl2_repack below, from the on-disk layout of spec §2.4).
//
// Repacked layout ("tiles"): columns are cut into 64-column tiles (tiles = ceil(n_pad / 64)),
// rows into the 32-row units of the on-disk groups. Tile j holds all its units back to back
// (q_rows * 64 words from j * q_rows * 64, exl2_unit_words): unit u (bits B, first packed row
// R = sum of the widths of the units before it) is the 64 * B words from R * 64, stored as
// 32 lanes x 2B words in slabs so that every load
// instruction of a warp reads 512 (or 256) contiguous bytes: slab i < 2B/4 is [lane][4 words],
// a last half slab (B odd) is [lane][2 words]. Lane l (g = l / 4, t = l % 4) holds the 32
// value pairs p = mt * 8 + ks * 4 + r that form its A fragments of mma.m16n8k16 (A = W^T):
// pair p = values at (column mt*16 + g + 8*(r&1), rows ks*16 + 2t + 8*(r>>1) + {0, 1}).
// A pair sits in one word at the same offset of both 16-bit halves (low half: the even row),
// so one mask + OR 0x64006400 makes an fp16 pair 1024 + v * 2^o (spec §2.9) and one HFMA2
// makes v - z exactly. Widths 2, 4, 8 are one plane (16/B pairs per word); 3 = 2 + 1,
// 5 = 4 + 1, 6 = 4 + 2 are a low plane (2L words) and a high plane (2H words) whose bits are
// shifted into place and ORed before the HFMA2. Scales: [tiles][groups][8] uint32
// (exl2_scale_words), word g of a tile's group holds the 4-bit codes of the lane group's 8 columns
// (nibble mt*2 + h: column mt*16 + g + 8h). So both a tile's units and its groups are one
// contiguous range.
//
// Launch shape: 256 threads = 8 warps per block, one 64-column tile per block and a range of
// units (split K, choose_ksplit); warp w takes a contiguous share of the block's units, so widths
// and groups come in runs. Each run of one width B goes through a loop specialised for B
// (run_units: no per-unit width switch, the units back to back in memory): each lane copies
// its own words of the next units with cp.async into the warp's ring in shared memory (5 KB,
// 20/B units of B bits for MT <= 2), the mma of a whole group accumulate before the group's scales
// (decoded once per block into shared memory as fp16) are applied. Before griddepcontrol.wait
// (PDL, launch.cuh) a block loads the unit table, decodes the scales, loads its rows'
// permutation (as uint16) and issues each warp's first ring copies of weights: all of that
// overlaps the previous kernel. After the wait it writes the launch's init regions (the next layer's accumulators),
// then gathers its rows' activations through the permutation (or, for an input that already
// comes in stored row order, GemvInput::permuted, reads them as one contiguous range, each warp
// the rows of its own units) into shared memory as fp16: from
// fp16 x, from the fp32 residual with RMSNorm folded in (each block recomputes the rows' 1/rms),
// or as silu(gate) * up. Warp partials are summed in shared memory in warp order; a block that
// covers all of K adds its sums to y (an earlier kernel initialised it), a block of a split-K
// tile writes them to its slot of the workspace, and the tile's last block to finish (a ticket
// counter per tile) adds the slots to y in split order. An output kept as an exact accumulator
// (int64 fixed point, exact_acc.cuh; the decode step's) takes every block's sums through integer
// atomics instead: exact, so in any order the same, with no ticket and no second read. Several
// layers that share one input run in one launch (q/k/v, gate/up).
// Precision: the products (v - z) * x are exact (tensor cores, fp16 inputs, fp32
// accumulation); each group's fp32 sum is scaled by the exact fp16 scale in fp32.
// With the workspace (or exact accumulators) a launch repeats its results bit for bit; without
// either, split-K partials meet in fp32 atomics and the last bits vary.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "async_copy.cuh"
#include "cuda_check.h"
#include "exl2_common.cuh"
#include "exl2_tile.cuh"
#include "kernels.h"
#include "launch.cuh"

namespace exl::cuda {
namespace {

constexpr int k_threads = 256;
constexpr int k_warps = k_threads / 32;
constexpr int k_max_jobs = k_gemv_max_layers;
constexpr int k_max_inits = k_gemv_max_inits;

struct GemvJobs {
  GemvJob job[k_max_jobs];
  int count = 0;
  GemvInit init[k_max_inits];
  int inits = 0;
  GemvWorkspace ws;
  int skip = 0;  // experiments only (EXL_GEMV_SKIP): stages left out to place time, see gemv_knobs
  int prefetch_units = 0;            // L2 prefetch before the wait: a warp's first units
  int prefetch_blocks = 1 << 30;     // ... in blocks below this index only
  int warp_gather = 1;               // direct vector gathers: each warp its own rows
  int prime = 1;                     // first ring slots issued: 0 in the main loop, 1 before the wait, 2 before the gather
};

// Tuning experiments, read once from the environment (unset in normal use): EXL_GEMV_UPB forces
// the units per block; EXL_GEMV_SKIP leaves stages out (1 main loop, 2 activation gather, 4 scale
// decode, 8 L2 prefetch, 16 the RMSNorm pass) so that timing differences place the kernel's time. Results are wrong
// with any stage left out; 32 and 64 (results right) gather a direct fp16 (32) or SiLU (64) input
// element by element.
// EXL_GEMV_SLOTS caps the blocks per multiprocessor the split assumes (fewer leave room for the
// next launch's blocks to become resident early and prefetch their weights under PDL).
// EXL_GEMV_OVERHEAD sets choose_ksplit's cost of a block's fixed part (in units of a warp).
// EXL_GEMV_PREFETCH: units per warp asked of L2 before the wait (default none: with the first ring
// slots issued before the wait, EXL_GEMV_PRIME=1, the default, the prefetch only competes with the
// previous kernel's reads; bench/RESULTS.md, session 14); EXL_GEMV_PREFETCH_WAVE=1: only the
// launch's first wave asks; EXL_GEMV_PRIME: 0 the ring's first slots issued in the main loop, 2
// after the wait but before the activation gather (bench/RESULTS.md, session 30: issuing them
// before the prologue, each warp reading its table entries itself, measured slower on tinyllama).
// EXL_GEMV_WARP_GATHER=0: the block gathers all its rows (direct vector form) and its warps start
// after a block barrier, instead of each warp gathering its own units' rows behind a __syncwarp.
struct GemvKnobs {
  int upb = 0, skip = 0, slots = 0, prefetch = 0, prefetch_wave = 0, prime = 1, warp_gather = 1;
  double overhead = 3.0;
};
const GemvKnobs& gemv_knobs() {
  static const GemvKnobs k = [] {
    GemvKnobs r;
    if (const char* v = std::getenv("EXL_GEMV_SLOTS")) r.slots = std::atoi(v);
    if (const char* v = std::getenv("EXL_GEMV_UPB")) r.upb = std::atoi(v);
    if (const char* v = std::getenv("EXL_GEMV_SKIP")) r.skip = std::atoi(v);
    if (const char* v = std::getenv("EXL_GEMV_OVERHEAD")) r.overhead = std::atof(v);
    if (const char* v = std::getenv("EXL_GEMV_PREFETCH")) r.prefetch = std::atoi(v);
    if (const char* v = std::getenv("EXL_GEMV_PREFETCH_WAVE")) r.prefetch_wave = std::atoi(v);
    if (const char* v = std::getenv("EXL_GEMV_PRIME")) r.prime = std::atoi(v);
    if (const char* v = std::getenv("EXL_GEMV_WARP_GATHER")) r.warp_gather = std::atoi(v);
    return r;
  }();
  return k;
}

__device__ __forceinline__ void prefetch_l2(const void* p) {
#ifdef EXL_CUDA_EMU
  (void)p;
#else
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p));
#endif
}

// A lane's share of one unit-tile (slabs of 16 bytes, then 8 bytes for odd B): from the
// weights into a ring slot of the same layout (so a lane reads back only what it copied).
// Both given as the lane's places sl = slot + 4 lane, tl = t + 4 lane (read_unit_at's).
template <int B>
__device__ __forceinline__ void copy_unit_at(std::uint32_t* sl, const std::uint32_t* __restrict__ tl, int lane) {
  constexpr int nq = (2 * B) / 4;
#pragma unroll
  for (int i = 0; i < nq; ++i) cp_async16(sl + i * 128, tl + i * 128);
  if constexpr ((2 * B) % 4 != 0) cp_async8(sl + nq * 128 - 2 * lane, tl + nq * 128 - 2 * lane);
}

// Each warp's cp.async ring in shared memory: 5 KB (4 KB for MT >= 4, whose activations take
// more room), i.e. 20 / B (16 / B) units of B bits, less one, in flight. With 80 registers
// (launch bounds) three blocks of 8 warps fit on a multiprocessor (H100/H200: 228 KB).
template <int MT> struct RingOf {
  static constexpr int words = MT <= 2 ? 1280 : 1024;
};

// The block's scales and the warps' partials keep a tile's 64 columns in lane order: the 8
// columns mt * 16 + g + 8 h that the lanes of group g = lane / 4 hold in their accumulators sit
// together, at g * 8 + mt * 2 + h, so that a lane reads its 8 scales in one load and its partials
// in two.
__host__ __device__ constexpr int lane_order(int col) { return (col & 7) * 8 + (col >> 4) * 2 + ((col >> 3) & 1); }

// Where a warp's scaled group sums go: for up to 2 batch rows, registers (acc[q][cl][h]: the
// lane's entries part[.][q][2h + cl] of batch row 2t + cl, column q*16 + g + 8h), written to the
// warp's partials once after its last unit (store_group_sums); for more rows (whose accumulators
// already fill the registers) the partials in shared memory directly (red_w [MT][64], lane order;
// each (row, column) belongs to one lane). Either way each entry is the same chain of fmaf over
// the groups in order from 0, so both forms give the same bits.
template <int MT>
struct GroupSums {
  static constexpr bool in_regs = MT <= 2;
  float* red_w;
  float acc[in_regs ? 4 : 1][in_regs ? MT : 1][2];
  __device__ __forceinline__ explicit GroupSums(float* r) : red_w(r) {
#pragma unroll
    for (int q = 0; q < (in_regs ? 4 : 1); ++q)
#pragma unroll
      for (int cl = 0; cl < (in_regs ? MT : 1); ++cl) acc[q][cl][0] = acc[q][cl][1] = 0.0f;
  }
};

// Adds a finished group's partial sums, scaled per column (sc: the group's 64 fp16 scales, lane
// order), into the warp's group sums.
template <int MT>
__device__ __forceinline__ void flush_group(const float (&part)[RowBlocks<MT>::n][4][4], const __half* sc, int lane,
                                            GroupSums<MT>& gs) {
  const int g = lane >> 2;
  const uint4 sv = *reinterpret_cast<const uint4*>(sc + g * 8);
  const float2 s01 = __half22float2(*reinterpret_cast<const __half2*>(&sv.x));
  const float2 s23 = __half22float2(*reinterpret_cast<const __half2*>(&sv.y));
  const float2 s45 = __half22float2(*reinterpret_cast<const __half2*>(&sv.z));
  const float2 s67 = __half22float2(*reinterpret_cast<const __half2*>(&sv.w));
  if constexpr (GroupSums<MT>::in_regs) {
    const float2 sq[4] = {s01, s23, s45, s67};
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int cl = 0; cl < MT; ++cl) {
        gs.acc[q][cl][0] = fmaf(part[0][q][cl], sq[q].x, gs.acc[q][cl][0]);
        gs.acc[q][cl][1] = fmaf(part[0][q][2 + cl], sq[q].y, gs.acc[q][cl][1]);
      }
  } else {
    const int t = lane & 3;
#pragma unroll
    for (int nb = 0; nb < RowBlocks<MT>::n; ++nb)
#pragma unroll
      for (int cl = 0; cl < 2; ++cl) {  // accumulator entries c = 2 h + cl: batch row 2 t + cl
        const int mm = nb * 8 + 2 * t + cl;
        if (mm < MT) {
          float4* r = reinterpret_cast<float4*>(gs.red_w + mm * k_tile_cols + g * 8);
          float4 a = r[0], b = r[1];
          a.x = fmaf(part[nb][0][cl], s01.x, a.x);
          a.y = fmaf(part[nb][0][2 + cl], s01.y, a.y);
          a.z = fmaf(part[nb][1][cl], s23.x, a.z);
          a.w = fmaf(part[nb][1][2 + cl], s23.y, a.w);
          b.x = fmaf(part[nb][2][cl], s45.x, b.x);
          b.y = fmaf(part[nb][2][2 + cl], s45.y, b.y);
          b.z = fmaf(part[nb][3][cl], s67.x, b.z);
          b.w = fmaf(part[nb][3][2 + cl], s67.y, b.w);
          r[0] = a;
          r[1] = b;
        }
      }
  }
}

// The register form's sums into the warp's partials (lane order), once after its last unit.
template <int MT>
__device__ __forceinline__ void store_group_sums(const GroupSums<MT>& gs, int lane) {
  if constexpr (GroupSums<MT>::in_regs) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int cl = 0; cl < MT; ++cl) {
      if (2 * t + cl < MT) {
        float4* r = reinterpret_cast<float4*>(gs.red_w + (2 * t + cl) * k_tile_cols + g * 8);
        r[0] = make_float4(gs.acc[0][cl][0], gs.acc[0][cl][1], gs.acc[1][cl][0], gs.acc[1][cl][1]);
        r[1] = make_float4(gs.acc[2][cl][0], gs.acc[2][cl][1], gs.acc[3][cl][0], gs.acc[3][cl][1]);
      }
    }
  }
}

// A run of n consecutive units of one width B (back to back in the tile layout, 64 * B words
// each, the first at wp), streamed through the warp's cp.async ring (RW words); the mma accumulate a whole
// group (units of one group share their scales) before it is scaled into the warp's partials
// red_w. info, xs: the run's first unit in the block's tables; s_scale [group - g0][64]: the
// block's scales; grp_end: bit l set where the run's unit l is the last of its group.
// The run's first D - 1 ring slots (one commit group each): run_units does this itself unless the
// caller did it earlier (gemv_prime, before the PDL wait: weights are never written).
template <int B, int RW>
__device__ __forceinline__ void prime_units(const std::uint32_t* __restrict__ wp, int n, int lane,
                                            std::uint32_t* ring) {
  constexpr int D = RW / (64 * B);
#pragma unroll
  for (int d = 0; d < D - 1; ++d) {
    if (d < n) copy_unit_at<B>(ring + 4 * lane + d * 64 * B, wp + 4 * lane + d * 64 * B, lane);
    cp_async_commit();
  }
}

template <int B, int MT, int RW>
__device__ __forceinline__ void run_units(const std::uint32_t* __restrict__ wp, int n, unsigned grp_end,
                                          const int2* info, const __half* s_scale, int g0, const __half* xs,
                                          int xs_stride, int lane, GroupSums<MT>& gs, std::uint32_t* ring, bool primed) {
  constexpr int D = RW / (64 * B);  // ring slots
  static_assert(D >= 2, "ring too small");
  constexpr int SW = 64 * B;  // words of a unit-tile (and of a ring slot)
  if (!primed) prime_units<B, RW>(wp, n, lane, ring);
  // The lane's places: in the next unit to copy, in the ring (fill: the slot being filled, use: the
  // one being read, word offsets) and in the unit's activations; all only advanced in the loop.
  const std::uint32_t* next = wp + (D - 1) * SW + 4 * lane;
  std::uint32_t* ring_l = ring + 4 * lane;
  int fill = (D - 1) * SW, use = 0;
  const __half* xl = unit_x_lane<MT>(xs, xs_stride, lane);
  for (int i = 0; i < n;) {
    // One group (units of one group share their scales): its mma accumulate in part. Bit l of
    // grp_end: the run's unit l ends its group (warp_runs).
    const int grp = info[i].y >> 4;
    const int e = min(n, i + __ffs(int(grp_end >> i)));
    float part[RowBlocks<MT>::n][4][4];
#pragma unroll
    for (int nb = 0; nb < RowBlocks<MT>::n; ++nb)
#pragma unroll
      for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int c = 0; c < 4; ++c) part[nb][mt][c] = 0.0f;
    for (; i < e; ++i) {
      if (i + D - 1 < n) copy_unit_at<B>(ring_l + fill, next, lane);
      cp_async_commit();
      next += SW;
      fill = fill == (D - 1) * SW ? 0 : fill + SW;
      cp_async_wait<D - 1>();  // unit i has landed (this lane's part, which is all it reads)
      std::uint32_t w[16];
      read_unit_at<B>(ring_l + use, lane, w);
      use = use == (D - 1) * SW ? 0 : use + SW;
      mma_unit_at<B, MT>(w, xl, xs_stride, part);
      xl += 32;
    }
    flush_group<MT>(part, s_scale + (grp - g0) * k_tile_cols, lane, gs);
  }
  cp_async_wait<0>();
}

constexpr int k_gather_unroll = 4;  // independent activation loads per thread

// Most units one block takes: its rows' activations (fp16, MT rows) and permutation (uint16) sit
// in shared memory.
constexpr int max_units_per_block(int mt) { return std::min(120, 16384 / (mt * 32)); }
static_assert(max_units_per_block(1) / k_warps < 32, "warp_runs: a warp's units in one ballot");

constexpr int pad4(int n) { return (n + 3) & ~3; }

template <int MT>
constexpr std::size_t gemv_smem_bytes(int upb) {
  return std::size_t(k_warps) * RingOf<MT>::words * 4          // cp.async rings
         + std::size_t(pad4(upb)) * (8 + 128)                  // unit table, scales (fp16, per group)
         + std::size_t(k_warps) * MT * k_tile_cols * 4           // warp partials
         + std::size_t(upb) * 32 * 2                             // permutation (uint16)
         + std::size_t(MT) * upb * 32 * 2                        // activations (fp16)
         + std::size_t(1 + k_warps) * MT * 4;                    // row norms ([MT] + [warps][MT])
}

// One block's share of a launch: job, column tile, K range, and the
// contiguous range [wa, wb) of the block's units each warp takes (so groups and widths come in runs).
struct BlockPlan {
  int j = 0, tile = 0, kb = 0, u0 = 0, u1 = 0, nb = 0, wa = 0, wb = 0, g0 = 0, ngr = 0;
};

__device__ __forceinline__ BlockPlan plan_block(const GemvJobs& jobs, int bx) {
  BlockPlan p;
  const SplitPlan sp = split_plan(jobs.job, jobs.count, bx);
  p.j = sp.j; p.tile = sp.tile; p.kb = sp.kb; p.u0 = sp.u0; p.u1 = sp.u1;
  const GemvJob& job = jobs.job[p.j];
  p.nb = p.u1 - p.u0;
  const int warp = threadIdx.x >> 5;
  p.wa = p.nb * warp / k_warps;
  p.wb = p.nb * (warp + 1) / k_warps;
  p.g0 = p.nb > 0 ? job.w.units[p.u0].y >> 4 : 0;
  p.ngr = p.nb > 0 ? (job.w.units[p.u1 - 1].y >> 4) - p.g0 + 1 : 0;
  return p;
}

// Shared memory of a block: the warp's ring, unit table, scales [groups of the block][64] fp16,
// warp partials [warps][MT][64], permutation [rows] uint16, x [MT][rows] fp16, norms.
template <int MT>
struct BlockSmem {
  std::uint32_t* ring;
  int2* info;
  __half* scale;
  float* red;
  std::uint16_t* perm;
  __half* xs;
  float* norm;
  int rows;
  __device__ __forceinline__ BlockSmem(uint4* base, int upb) {
    const int warp = threadIdx.x >> 5;
    rows = upb * 32;
    ring = reinterpret_cast<std::uint32_t*>(base) + warp * RingOf<MT>::words;
    info = reinterpret_cast<int2*>(reinterpret_cast<std::uint32_t*>(base) + k_warps * RingOf<MT>::words);
    scale = reinterpret_cast<__half*>(info + pad4(upb));
    red = reinterpret_cast<float*>(scale + pad4(upb) * k_tile_cols);  // 16-byte aligned from here on
    perm = reinterpret_cast<std::uint16_t*>(red + k_warps * MT * k_tile_cols);
    xs = reinterpret_cast<__half*>(perm + rows);
    norm = reinterpret_cast<float*>(xs + MT * rows);  // [MT] + [warps][MT]
  }
};

// Everything a block can do before its input exists (weights, tables and permutations are never
// written by a kernel): ask L2 for its units, load the unit table, decode the scales and load the
// permutation into shared memory, clear the warp partials.
template <int MT>
__device__ __forceinline__ void gemv_prologue(const GemvJobs& jobs, bool direct, const BlockPlan& p,
                                              const BlockSmem<MT>& sm, int bx) {
  const GemvJob& job = jobs.job[p.j];
  const Exl2Device& w = job.w;
  const int lane = threadIdx.x & 31;
  if (lane < min(p.wb - p.wa, jobs.prefetch_units) && bx < jobs.prefetch_blocks && !(jobs.skip & 8)) {
    const int2 info = w.units[p.u0 + p.wa + lane];
    const int bits = info.y & 15;
    const char* q = reinterpret_cast<const char*>(w.q_weight + exl2_unit_words(w, info.x, p.tile));
    for (int l = 0; l < 2 * bits; ++l) prefetch_l2(q + l * 128);
  }
  for (int i = threadIdx.x; i < p.nb; i += k_threads) sm.info[i] = w.units[p.u0 + i];
  // The scales of the block's groups (units come in whole, consecutive groups), decoded once: a
  // thread per scale word, whose 8 codes are columns mt * 16 + word + 8 h (nibble mt * 2 + h),
  // i.e. lane order's 8 consecutive places (lane_order): one 16-byte store.
  // (One word and one maximum loaded per 8 scales: groups of 32 rows have four times as many.)
  for (int i = threadIdx.x; i < ((jobs.skip & 4) ? 0 : p.ngr * 8); i += k_threads) {
    const int gi = i >> 3, wd = i & 7, grp = p.g0 + gi;
    const std::uint32_t sw = __ldg(w.q_scale + exl2_scale_words(w, grp, p.tile) + wd);
    const __half smax = w.q_scale_max[grp];
    std::uint32_t h2[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const __half2 v = __halves2half2(__float2half_rn(exl2_scale(smax, (sw >> (8 * k)) & 15u)),
                                       __float2half_rn(exl2_scale(smax, (sw >> (8 * k + 4)) & 15u)));
      h2[k] = *reinterpret_cast<const std::uint32_t*>(&v);
    }
    *reinterpret_cast<uint4*>(sm.scale + gi * k_tile_cols + wd * 8) = make_uint4(h2[0], h2[1], h2[2], h2[3]);
  }
  if (!direct) {
    const int4* perm4 = reinterpret_cast<const int4*>(w.perm + p.u0 * 32);
    for (int i = threadIdx.x; i < p.nb * 8; i += k_threads) {
      const int4 v = __ldg(perm4 + i);
      reinterpret_cast<ushort4*>(sm.perm)[i] =
          make_ushort4(std::uint16_t(v.x), std::uint16_t(v.y), std::uint16_t(v.z), std::uint16_t(v.w));
    }
  }
  for (int i = threadIdx.x; i < k_warps * MT * k_tile_cols; i += k_threads) sm.red[i] = 0.0f;
  __syncthreads();
}

// Where the warp's units end their width runs and their groups: bit l set where unit wa + l is
// the last of its run (run_end) or of its group (grp_end). One unit-table read per lane and two
// ballots, so that the loops find a run's or a group's end in one step instead of walking the
// table unit by unit (a shared-memory round trip each). A warp has at most 15 units
// (max_units_per_block / k_warps).
struct WarpRuns {
  unsigned run_end = 0, grp_end = 0;
};
template <int MT>
__device__ __forceinline__ WarpRuns warp_runs(const BlockSmem<MT>& sm, const BlockPlan& p, int lane) {
  const int nw = p.wb - p.wa;
  const int y = lane < nw ? sm.info[p.wa + lane].y : 0;
  const int yn = __shfl_down_sync(0xffffffffu, y, 1);
  const bool last = lane + 1 >= nw;
  WarpRuns r;
  r.run_end = __ballot_sync(0xffffffffu, lane < nw && (last || ((y ^ yn) & 15) != 0));
  r.grp_end = __ballot_sync(0xffffffffu, lane < nw && (last || ((y ^ yn) >> 4) != 0));
  return r;
}

// The first ring slots of the warp's first run (issued before the PDL wait: the weights are on
// their way while the previous kernel finishes).
template <int MT>
__device__ __forceinline__ void gemv_prime(const GemvJobs& jobs, const BlockPlan& p, const BlockSmem<MT>& sm) {
  if (p.wa >= p.wb || (jobs.skip & 1)) return;
  const Exl2Device& w = jobs.job[p.j].w;
  const int lane = threadIdx.x & 31;
  const int bits = sm.info[p.wa].y & 15;
  const int e = p.wa + __ffs(int(warp_runs(sm, p, lane).run_end));
  const std::uint32_t* wp = w.q_weight + exl2_unit_words(w, sm.info[p.wa].x, p.tile);
  switch (bits) {
    case 2: prime_units<2, RingOf<MT>::words>(wp, e - p.wa, lane, sm.ring); break;
    case 3: prime_units<3, RingOf<MT>::words>(wp, e - p.wa, lane, sm.ring); break;
    case 4: prime_units<4, RingOf<MT>::words>(wp, e - p.wa, lane, sm.ring); break;
    case 5: prime_units<5, RingOf<MT>::words>(wp, e - p.wa, lane, sm.ring); break;
    case 6: prime_units<6, RingOf<MT>::words>(wp, e - p.wa, lane, sm.ring); break;
    default: prime_units<8, RingOf<MT>::words>(wp, e - p.wa, lane, sm.ring); break;
  }
}

// Entry i (row i / 64, column i % 64) of a block's sums: the warps' partials added in warp order.
template <int MT>
__device__ __forceinline__ float warp_sum(const BlockSmem<MT>& sm, int i) {
  const int mm = i / k_tile_cols, c = i - mm * k_tile_cols;
  float sum = 0.0f;
#pragma unroll
  for (int wi = 0; wi < k_warps; ++wi) sum += sm.red[(wi * MT + mm) * k_tile_cols + lane_order(c)];
  return sum;
}

// Elements 2 j and 2 j + 1 of a SiLU input at p (16- or 8-byte aligned) as fp32.
__device__ __forceinline__ float2 pair_at(const long long* p) {
  const longlong2 v = *reinterpret_cast<const longlong2*>(p);
  return make_float2(from_exact(v.x), from_exact(v.y));
}
__device__ __forceinline__ float2 pair_at(const float* p) { return *reinterpret_cast<const float2*>(p); }

// Whether the gather's direct form can read the input in vectors: rows in stored order starting
// at r0 (a multiple of 32), 16-byte aligned fp16 rows or 8-byte (fp32) / 16-byte (exact) aligned
// SiLU inputs. Never for the norm form.
template <int MODE>
__device__ __forceinline__ bool direct_vectors(const GemvInput& in, int r0) {
  if constexpr (MODE == k_x_half) {
    return !((reinterpret_cast<std::uintptr_t>(in.x) & 15u) || (in.ldx & 7) || (r0 & 7));
  } else if constexpr (MODE == k_x_silu) {
    const bool q = in.xq != nullptr;
    const std::uintptr_t a = q ? (reinterpret_cast<std::uintptr_t>(in.xq) | reinterpret_cast<std::uintptr_t>(in.upq)) & 15u
                               : (reinterpret_cast<std::uintptr_t>(in.xf) | reinterpret_cast<std::uintptr_t>(in.up)) & 7u;
    return !(a || (in.ldx & 1) || (r0 & 1));
  } else {
    return false;
  }
}

// The gather's direct form (GemvInput::permuted: the rows are one contiguous range of each batch
// row, starting at r0) with vector loads: 8 fp16 values, or 2 SiLU inputs (gate and up, fp32 or
// exact), per load, all of an iteration's loads issued before any store. One dependent round
// trip for up to 8192 fp16 rows where the element-wise form takes one per 1024 (the SiLU inputs
// stay at 1024 rows a round trip: more in flight spills registers). Done by NT threads (thread
// tid of them): the block's 256 for all its rows, or one warp for its own units' rows (then only a
// __syncwarp, not a block barrier, stands between the gather and the warp's first mma). Only where
// direct_vectors holds. Rows of the tile past m are zero, as in the element-wise form.
template <int MT, int MODE, int NT>
__device__ __forceinline__ void gather_direct(const GemvInput& in, int m, int m0, int r0, int rows, __half* xs,
                                              int rows_blk, int tid) {
  constexpr int U = 4;
  const int mv = min(MT, m - m0);
  if constexpr (MODE == k_x_half) {
    const int per = rows / 8, total = mv * per;
    for (int base = tid; base < total; base += NT * U) {
      uint4 v[U];
#pragma unroll
      for (int e = 0; e < U; ++e) {
        const int i = base + e * NT, mm = MT == 1 ? 0 : i / per;
        if (i < total) v[e] = *reinterpret_cast<const uint4*>(in.x + std::size_t(m0 + mm) * in.ldx + r0 + (i - mm * per) * 8);
      }
#pragma unroll
      for (int e = 0; e < U; ++e) {
        const int i = base + e * NT, mm = MT == 1 ? 0 : i / per;
        if (i < total) *reinterpret_cast<uint4*>(xs + mm * rows_blk + (i - mm * per) * 8) = v[e];
      }
    }
  } else if constexpr (MODE == k_x_silu) {
    // Two SiLU inputs per load (gate and up: 16 or 32 bytes), U2 loads of each in flight.
    constexpr int U2 = 2;
    const int per = rows / 2, total = mv * per;
    // Gate and up as exact accumulators (long long) or fp32: all loads of an iteration, then the products.
    auto pairs = [&](const auto* gp, const auto* upp) {
      for (int base = tid; base < total; base += NT * U2) {
        float2 g[U2], u[U2];
#pragma unroll
        for (int e = 0; e < U2; ++e) {
          const int i = base + e * NT, mm = MT == 1 ? 0 : i / per;
          if (i < total) {
            const std::size_t off = std::size_t(m0 + mm) * in.ldx + r0 + (i - mm * per) * 2;
            g[e] = pair_at(gp + off);
            u[e] = pair_at(upp + off);
          }
        }
#pragma unroll
        for (int e = 0; e < U2; ++e) {
          const int i = base + e * NT, mm = MT == 1 ? 0 : i / per;
          if (i < total)
            *reinterpret_cast<__half2*>(xs + mm * rows_blk + (i - mm * per) * 2) =
                __floats2half2_rn(silu_times(g[e].x, u[e].x), silu_times(g[e].y, u[e].y));
        }
      }
    };
    if (in.xq) pairs(in.xq, in.upq);
    else pairs(in.xf, in.up);
  }
  for (int i = mv * rows + tid; i < MT * rows; i += NT) {
    const int mm = i / rows;
    xs[mm * rows_blk + i - mm * rows] = __float2half_rn(0.0f);
  }
}

// What a block does once its input exists: the norm pass, the activation gather, the weight
// stream with its mma, and the block's sums into y (or the split-K workspace, the tile's last
// block adding the slots in split order). `primed`: gemv_prime issued the first run's slots.
template <int MT, int MODE>
__device__ __forceinline__ void gemv_body(const GemvJobs& jobs, const GemvInput& in, int m, int m0,
                                          const BlockPlan& p, const BlockSmem<MT>& sm, int bx, bool primed) {
  const GemvJob& job = jobs.job[p.j];
  const Exl2Device& w = job.w;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int rows_blk = sm.rows;
  __half* xs = sm.xs;
  if constexpr (MODE == k_x_norm) {
    // RMSNorm folded in: each block recomputes the rows' 1 / rms from the fp32 residual (or its
    // exact accumulator).
    // All rows' loads of an iteration are issued together (one latency per iteration, not per row).
    float ss[MT];
#pragma unroll
    for (int mm = 0; mm < MT; ++mm) ss[mm] = 0.0f;
    const int mv = min(MT, m - m0);
    auto add_ss = [](float s, const float4& v) { return fmaf(v.x, v.x, fmaf(v.y, v.y, fmaf(v.z, v.z, fmaf(v.w, v.w, s)))); };
    for (int i = threadIdx.x; i < ((jobs.skip & 16) ? 0 : w.k / 4); i += k_threads) {
      if (in.xq) {  // an exact accumulator (int64): row by row, twice the bytes
#pragma unroll
        for (int mm = 0; mm < MT; ++mm)
          if (mm < mv) ss[mm] = add_ss(ss[mm], load4(AccIn{nullptr, in.xq}, std::size_t(m0 + mm) * in.ldx, i));
        continue;
      }
      float4 v[MT];
#pragma unroll
      for (int mm = 0; mm < MT; ++mm)
        v[mm] = mm < mv ? reinterpret_cast<const float4*>(in.xf + std::size_t(m0 + mm) * in.ldx)[i]
                        : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
      for (int mm = 0; mm < MT; ++mm) ss[mm] = add_ss(ss[mm], v[mm]);
    }
#pragma unroll
    for (int mm = 0; mm < MT; ++mm) {
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) ss[mm] += __shfl_xor_sync(0xffffffffu, ss[mm], o);
      if (lane == 0) sm.norm[MT + warp * MT + mm] = ss[mm];
    }
    __syncthreads();
    if (threadIdx.x < MT) {
      float t = 0.0f;
#pragma unroll
      for (int wi = 0; wi < k_warps; ++wi) t += sm.norm[MT + wi * MT + threadIdx.x];
      sm.norm[threadIdx.x] = rsqrtf(t / float(w.k) + in.eps);
    }
    __syncthreads();
  }
  // Activation gather through the permutation: all MT rows of RU permuted rows per thread are
  // loaded before any is stored (independent loads in flight).
  constexpr int RU = MT <= 2 ? k_gather_unroll : MT <= 8 ? 2 : 1;
  const int rows_valid = p.nb * 32;
  const bool direct = in.permuted;  // rows in stored order: the block's are one contiguous range
  const bool vec = direct && !(jobs.skip & (MODE == k_x_silu ? 66 : 34)) && direct_vectors<MODE>(in, p.u0 * 32);
  // Each warp its own rows (the default), or the block all of them (EXL_GEMV_WARP_GATHER=0).
  const bool by_warp = vec && jobs.warp_gather;
  if (by_warp)
    gather_direct<MT, MODE, 32>(in, m, m0, (p.u0 + p.wa) * 32, (p.wb - p.wa) * 32, xs + p.wa * 32, rows_blk, lane);
  else if (vec)
    gather_direct<MT, MODE, k_threads>(in, m, m0, p.u0 * 32, rows_valid, xs, rows_blk, int(threadIdx.x));
  for (int base = threadIdx.x; base < ((jobs.skip & 2) || vec ? 0 : rows_valid); base += k_threads * RU) {
    __half v[MT][RU];
#pragma unroll
    for (int e = 0; e < RU; ++e) {
      const int row = base + e * k_threads;
      const int q = row < rows_valid ? (direct ? p.u0 * 32 + row : int(sm.perm[row])) : 0;
#pragma unroll
      for (int mm = 0; mm < MT; ++mm) {
        v[mm][e] = __float2half_rn(0.0f);
        if (m0 + mm < m && row < rows_valid) {
          const std::size_t off = std::size_t(m0 + mm) * in.ldx;
          if constexpr (MODE == k_x_silu) {
            v[mm][e] = __float2half_rn(silu_times(acc_at(AccIn{in.xf, in.xq}, off + q), acc_at(AccIn{in.up, in.upq}, off + q)));
          } else if constexpr (MODE == k_x_norm) {
            v[mm][e] = __float2half_rn(acc_at(AccIn{in.xf, in.xq}, off + q) * sm.norm[mm] * __half2float(__ldg(in.norm_w + q)));
          } else {
            v[mm][e] = in.x[off + q];
          }
        }
      }
    }
#pragma unroll
    for (int e = 0; e < RU; ++e) {
      const int row = base + e * k_threads;
      if (row < rows_valid) {
#pragma unroll
        for (int mm = 0; mm < MT; ++mm) xs[mm * rows_blk + row] = v[mm][e];
      }
    }
  }
  if (by_warp) __syncwarp();
  else __syncthreads();

  GroupSums<MT> gs(sm.red + warp * MT * k_tile_cols);
  // The warp's units in runs of one width: one specialised loop per run.
  const WarpRuns runs = warp_runs(sm, p, lane);
  for (int i = p.wa; i < ((jobs.skip & 1) ? p.wa : p.wb);) {
    const int bits = sm.info[i].y & 15;
    const int l = i - p.wa;
    const int e = i + __ffs(int(runs.run_end >> l));
    const std::uint32_t* wp = w.q_weight + exl2_unit_words(w, sm.info[i].x, p.tile);
    const bool pr = primed && i == p.wa;
#define EXL_RUN(B)                                                                                                \
  run_units<B, MT, RingOf<MT>::words>(wp, e - i, runs.grp_end >> l, sm.info + i, sm.scale, p.g0, xs + i * 32, \
                                      rows_blk, lane, gs, sm.ring, pr)
    switch (bits) {
      case 2: EXL_RUN(2); break;
      case 3: EXL_RUN(3); break;
      case 4: EXL_RUN(4); break;
      case 5: EXL_RUN(5); break;
      case 6: EXL_RUN(6); break;
      default: EXL_RUN(8); break;
    }
#undef EXL_RUN
    i = e;
  }
  store_group_sums<MT>(gs, lane);
  __syncthreads();
  // The block's sums (warps in order). Without split K they go straight into y; with it, into
  // the block's slot of the workspace, and the tile's last block to finish adds the slots in
  // split order: the result does not depend on which block finished first.
  // Without a workspace (exl_cuda_options.fast_reduce) the blocks add their sums with fp32
  // atomics, in whatever order they finish.
  if (job.yq) {  // an exact accumulator: every block adds its sums (integer atomics, any order)
    for (int i = threadIdx.x; i < MT * k_tile_cols; i += k_threads) {
      const int mm = i / k_tile_cols, col = p.tile * k_tile_cols + i - mm * k_tile_cols;
      if (m0 + mm < m && col < w.n) add_exact(job.yq + std::size_t(m0 + mm) * job.ldy + col, warp_sum(sm, i));
    }
    return;
  }
  const int ks = job.ksplit;
  const bool ordered = jobs.ws.partials != nullptr;
  float* slots = jobs.ws.partials + std::size_t(bx - p.kb) * (MT * k_tile_cols);
  for (int i = threadIdx.x; i < MT * k_tile_cols; i += k_threads) {
    const int mm = i / k_tile_cols, c = i - mm * k_tile_cols;
    const float sum = warp_sum(sm, i);
    const int col = p.tile * k_tile_cols + c;
    float* yp = job.y + std::size_t(m0 + mm) * job.ldy + col;
    if (!ordered) {
      if (m0 + mm < m && col < w.n) atomicAdd(yp, sum);
    } else if (ks == 1) {
      if (m0 + mm < m && col < w.n) __stcg(yp, *yp + sum);
    } else {
      __stcg(slots + std::size_t(p.kb) * (MT * k_tile_cols) + i, sum);
    }
  }
  if (!ordered || ks == 1) return;
  unsigned* counter = jobs.ws.counters + job.tile_begin + p.tile;
  if (!last_block_arrival(counter, unsigned(ks))) return;
  for (int i = threadIdx.x; i < MT * k_tile_cols; i += k_threads) {
    const int mm = i / k_tile_cols, c = i - mm * k_tile_cols;
    const int col = p.tile * k_tile_cols + c;
    if (m0 + mm >= m || col >= w.n) continue;
    float sum = 0.0f;
    for (int k = 0; k < ks; ++k) sum += __ldcg(slots + std::size_t(k) * (MT * k_tile_cols) + i);
    float* yp = job.y + std::size_t(m0 + mm) * job.ldy + col;
    __stcg(yp, *yp + sum);
  }
  if (threadIdx.x == 0) *counter = 0u;  // ready for the next launch (which waits for this one)
}

template <int MT, int MODE>
__global__ void __launch_bounds__(k_threads, MT > 8 ? 2 : 3) exl2_gemv_kernel(GemvJobs jobs, GemvInput in, int m) {
  EXL_DYNAMIC_SMEM(uint4, smem4);
  pdl_trigger();
  const BlockPlan p = plan_block(jobs, int(blockIdx.x));
  const BlockSmem<MT> sm(smem4, jobs.job[p.j].upb);
  gemv_prologue<MT>(jobs, in.permuted, p, sm, int(blockIdx.x));
  if (jobs.prime == 1) gemv_prime<MT>(jobs, p, sm);
  pdl_wait();  // the activations (and the outputs' initial values) come from earlier kernels
  // The init regions (zero or bias), spread over all blocks of the launch.
  write_inits(jobs.init, jobs.inits, int(blockIdx.y * gridDim.x + blockIdx.x) * k_threads + int(threadIdx.x),
              int(gridDim.x * gridDim.y) * k_threads);
  if (jobs.prime == 2) gemv_prime<MT>(jobs, p, sm);
  gemv_body<MT, MODE>(jobs, in, m, int(blockIdx.y) * MT, p, sm, int(blockIdx.x), jobs.prime != 0);
}

// Repack: one warp per (tile, unit); lane l builds its 2B words from the on-disk layout.
template <int B>
__device__ void repack_unit(const std::uint32_t* __restrict__ src, int n_pad, int first_row, int tile, int lane,
                            std::uint32_t* __restrict__ dst, const std::int32_t* __restrict__ col_map) {
  constexpr int L = Planes<B>::L, H = Planes<B>::H;
  std::uint32_t out[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) out[i] = 0;
  auto value = [&](int col, int row) -> std::uint32_t {
    if (col >= n_pad) return 0u;
    if (col_map) col = col_map[col];
    const int p = row * B, wi = p >> 5, sh = p & 31;
    const std::uint32_t lo = src[std::size_t(first_row + wi) * n_pad + col];
    std::uint32_t v = lo >> sh;
    if (sh + B > 32) v |= src[std::size_t(first_row + wi + 1) * n_pad + col] << (32 - sh);
    return v & ((1u << B) - 1u);
  };
  for (int p = 0; p < 32; ++p) {
    const int col = tile * k_tile_cols + pair_col(lane, p);
    const int row = pair_row(lane, p);
    const std::uint32_t v0 = value(col, row), v1 = value(col, row + 1);
    constexpr int PL = 16 / L;
    const int o = (p % PL) * L;
    const std::uint32_t lmask = (1u << L) - 1u;
    out[p / PL] |= ((v0 & lmask) << o) | ((v1 & lmask) << (16 + o));
    if constexpr (H > 0) {
      constexpr int PH = 16 / H;
      const int ho = (p % PH) * H;
      out[2 * L + p / PH] |= ((v0 >> L) << ho) | ((v1 >> L) << (16 + ho));
    }
  }
  for (int i = 0; i < 2 * B; ++i) dst[slab_offset<B>(lane, i)] = out[i];
}

__global__ void exl2_repack_kernel(Exl2Device w, const std::uint32_t* __restrict__ src, std::uint32_t* __restrict__ dst,
                                   const std::int32_t* __restrict__ col_map) {
  const int tile = blockIdx.x, u = blockIdx.y, lane = threadIdx.x;
  const int2 info = w.units[u];
  const int bits = info.y & 15;
  std::uint32_t* d = dst + exl2_unit_words(w, info.x, tile);
  switch (bits) {
    case 2: repack_unit<2>(src, w.n_pad, info.x, tile, lane, d, col_map); break;
    case 3: repack_unit<3>(src, w.n_pad, info.x, tile, lane, d, col_map); break;
    case 4: repack_unit<4>(src, w.n_pad, info.x, tile, lane, d, col_map); break;
    case 5: repack_unit<5>(src, w.n_pad, info.x, tile, lane, d, col_map); break;
    case 6: repack_unit<6>(src, w.n_pad, info.x, tile, lane, d, col_map); break;
    default: repack_unit<8>(src, w.n_pad, info.x, tile, lane, d, col_map); break;
  }
}

// Reconstruct from the repacked layout: 8 warps per block, one (tile, unit) per warp:
// fp16((v - z) * scale) (bit-exact with spec §2.7) into the warp's 32 x 64 tile in shared memory,
// then each row goes out as 128 contiguous bytes to out [k, n_pad] at the original row perm[row].
constexpr int k_rc_warps = 8;
constexpr int k_rc_ld = k_tile_cols + 8;  // shared row stride (halves)

template <int B>
__device__ void reconstruct_unit(const std::uint32_t* t, int lane, const float (&scale)[8], __half* tile_s) {
  std::uint32_t wv[16];
  load_unit<B>(t, lane, wv);
  std::uint32_t pr[32];
#define EXL_DP(P) pr[P] = decode_pair<B, P>(wv);
  EXL_DP(0) EXL_DP(1) EXL_DP(2) EXL_DP(3) EXL_DP(4) EXL_DP(5) EXL_DP(6) EXL_DP(7)
  EXL_DP(8) EXL_DP(9) EXL_DP(10) EXL_DP(11) EXL_DP(12) EXL_DP(13) EXL_DP(14) EXL_DP(15)
  EXL_DP(16) EXL_DP(17) EXL_DP(18) EXL_DP(19) EXL_DP(20) EXL_DP(21) EXL_DP(22) EXL_DP(23)
  EXL_DP(24) EXL_DP(25) EXL_DP(26) EXL_DP(27) EXL_DP(28) EXL_DP(29) EXL_DP(30) EXL_DP(31)
#undef EXL_DP
#pragma unroll
  for (int p = 0; p < 32; ++p) {
    const int cl = pair_col(lane, p);
    const int row = pair_row(lane, p);
    const float s = scale[(p >> 3) * 2 + (p & 1)];
    const __half2 h = *reinterpret_cast<const __half2*>(&pr[p]);
    tile_s[row * k_rc_ld + cl] = __float2half_rn(__low2float(h) * s);
    tile_s[(row + 1) * k_rc_ld + cl] = __float2half_rn(__high2float(h) * s);
  }
}

__global__ void __launch_bounds__(k_rc_warps * 32) exl2_reconstruct_kernel(Exl2Device w, __half* __restrict__ out) {
  EXL_SHARED_ARRAY(__align__(16) __half, s_tile, [k_rc_warps][32 * k_rc_ld]);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int tile = blockIdx.x, u = blockIdx.y * k_rc_warps + warp;
  if (u >= w.k / 32) return;
  const int2 info = w.units[u];
  const int bits = info.y & 15, group = info.y >> 4;
  const std::uint32_t sw = __ldg(w.q_scale + exl2_scale_words(w, group, tile) + (lane >> 2));
  float scale[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) scale[i] = exl2_scale(w.q_scale_max[group], (sw >> (4 * i)) & 15u);
  const std::uint32_t* t = w.q_weight + exl2_unit_words(w, info.x, tile);
  __half* ts = s_tile[warp];
  switch (bits) {
    case 2: reconstruct_unit<2>(t, lane, scale, ts); break;
    case 3: reconstruct_unit<3>(t, lane, scale, ts); break;
    case 4: reconstruct_unit<4>(t, lane, scale, ts); break;
    case 5: reconstruct_unit<5>(t, lane, scale, ts); break;
    case 6: reconstruct_unit<6>(t, lane, scale, ts); break;
    default: reconstruct_unit<8>(t, lane, scale, ts); break;
  }
  __syncwarp();
  const int col = tile * k_tile_cols + 2 * lane;
  if (col >= w.n_pad) return;  // a last tile of 32 columns (n_pad is a multiple of 32)
#pragma unroll 8
  for (int r = 0; r < 32; ++r) {
    const __half2 v = *reinterpret_cast<const __half2*>(ts + r * k_rc_ld + 2 * lane);
    *reinterpret_cast<__half2*>(out + std::size_t(w.perm[u * 32 + r]) * w.n_pad + col) = v;
  }
}

int mt_for(int m) { return m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : m <= 8 ? 8 : 16; }

std::size_t smem_bytes_for(int mt, int upb) {
  switch (mt) {
    case 1: return gemv_smem_bytes<1>(upb);
    case 2: return gemv_smem_bytes<2>(upb);
    case 4: return gemv_smem_bytes<4>(upb);
    case 8: return gemv_smem_bytes<8>(upb);
    default: return gemv_smem_bytes<16>(upb);
  }
}

// Most units per block that the device's per-block shared memory allows (64 KB on sm_75, where
// the largest blocks of the H100/H200 would not fit).
int upb_limit(int mt) {
  const int optin = device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>();
  int u = max_units_per_block(mt);
  while (u > 1 && smem_bytes_for(mt, u) > std::size_t(optin)) --u;
  return u;
}

// Split K of one layer: `ksplit` blocks per tile (choose_ksplit), at least as many as keep a
// block's rows in shared memory.
void plan_job(GemvJob& j, int mt, int ksplit, int upb_force) {
  const int units = j.w.k / 32;
  int upb = upb_force > 0 ? upb_force : (units + std::max(1, ksplit) - 1) / std::max(1, ksplit);
  upb = std::max(1, std::min({upb, upb_limit(mt), units}));
  j.ksplit = (units + upb - 1) / upb;
  j.upb = (units + j.ksplit - 1) / j.ksplit;  // even split
}

// Checks a call; returns its column tiles (all layers).
int check_call(const GemvCall& c) {
  if (c.count > k_max_jobs) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv: at most 3 fused layers");
  if (c.inits > k_max_inits) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv: at most 6 init regions");
  for (int i = 0; i < c.count; ++i) {
    if (c.w[i]->k != c.w[0]->k) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv: fused layers differ in k");
    if (c.w[i]->k > 65536) throw_status(EXL_CUDA_ERR_UNSUPPORTED, "exl2_gemv: more than 65536 input features");
  }
  if (c.mode == k_x_norm && c.w[0]->k % 4 != 0) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv: norm input needs k % 4 == 0");
  int tiles = 0;
  for (int i = 0; i < c.count; ++i) tiles += c.w[i]->tiles;
  if (tiles > k_gemv_counters) throw_status(EXL_CUDA_ERR_UNSUPPORTED, "exl2_gemv: more than 65536 column tiles");
  return tiles;
}

// Lays out the jobs of one launch: block and counter offsets; returns the blocks.
int layout_jobs(GemvJobs& jobs, int mt, int m, int* max_upb) {
  int blocks = 0, tiles = 0;
  bool split = false;
  for (int i = 0; i < jobs.count; ++i) {
    jobs.job[i].block_begin = blocks;
    jobs.job[i].tile_begin = tiles;
    blocks += jobs.job[i].w.tiles * jobs.job[i].ksplit;
    tiles += jobs.job[i].w.tiles;
    *max_upb = std::max(*max_upb, jobs.job[i].upb);
    split = split || (jobs.job[i].ksplit > 1 && !jobs.job[i].yq);
  }
  if (split && jobs.ws.partials) {
    if (!jobs.ws.counters) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv: workspace without counters");
    if (std::size_t(blocks) * mt * k_tile_cols > k_gemv_partial_floats || tiles > k_gemv_counters || m > mt)
      throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv: the launch's split-K partials exceed the GEMV workspace");
  }
  return blocks;
}

template <int MT, int MODE>
void launch_mt(GemvJobs& jobs, const GemvInput& in, int m, cudaStream_t s) {
  int max_upb = 0;
  const int blocks = layout_jobs(jobs, MT, m, &max_upb);
  const std::size_t smem = gemv_smem_bytes<MT>(max_upb);
  opt_in_smem<exl2_gemv_kernel<MT, MODE>>(gemv_smem_bytes<MT>(upb_limit(MT)));
  launch(exl2_gemv_kernel<MT, MODE>, dim3(blocks, (m + MT - 1) / MT), dim3(k_threads), smem, s, jobs, in, m);
}

// Blocks of the kernel (MT rows, k_x_half form) that registers alone let one multiprocessor hold.
int blocks_by_registers(int mt) {
  static int cached[17] = {};
  if (!cached[mt]) {
    cudaFuncAttributes a{};
    switch (mt) {
      case 1: EXL_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(&exl2_gemv_kernel<1, k_x_half>))); break;
      case 2: EXL_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(&exl2_gemv_kernel<2, k_x_half>))); break;
      case 4: EXL_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(&exl2_gemv_kernel<4, k_x_half>))); break;
      case 8: EXL_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(&exl2_gemv_kernel<8, k_x_half>))); break;
      default: EXL_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(&exl2_gemv_kernel<16, k_x_half>))); break;
    }
    const int regs = std::max(1, (a.numRegs + 7) / 8 * 8);
    cached[mt] = std::max(1, std::min(64 / (k_threads / 32), 65536 / (regs * k_threads)));
  }
  return cached[mt];
}

// The fewest blocks over K per tile that keep a block's rows in shared memory.
int min_ksplit(int k, int mt) {
  const int units = k / 32;
  return (units + upb_limit(mt) - 1) / upb_limit(mt);
}

// Whether the split-K partials of `tiles` tiles split `ks` ways, mt rows, fit the workspace.
bool partials_fit(int tiles, int ks, int mt) {
  return ks == 1 || std::size_t(tiles) * std::size_t(ks) * mt * k_tile_cols <= k_gemv_partial_floats;
}

// Blocks over K per tile for all fused layers together. A block costs a fixed part (prologue,
// gather, reduction: about GemvKnobs::overhead = 3 units of a warp) plus its warps' units; the split
// with the fewest waves (resident block slots: registers and shared memory) times block cost
// wins, the smaller split on ties (fewer atomics and activation gathers).
int choose_ksplit(const GemvCall& c, int mt, int tiles) {
  const int smem_per_sm = device_attribute<cudaDevAttrMaxSharedMemoryPerMultiprocessor>();
  const int by_regs = blocks_by_registers(mt);
  const int units = c.w[0]->k / 32;
  const int ks_min = min_ksplit(c.w[0]->k, mt);
  int best = ks_min;
  double best_cost = 1e30;
  for (int ks = ks_min; ks <= std::max(ks_min, std::min(units, 32)); ++ks) {
    const int upb = (units + ks - 1) / ks;
    if (c.ws.partials && ks > ks_min && !partials_fit(tiles, ks, mt)) break;  // the workspace holds no more
    const std::size_t smem = smem_bytes_for(mt, upb) + 1024;  // + the driver's reserve
    int per_sm = std::max(1, std::min(by_regs, int(std::size_t(smem_per_sm) / smem)));
    if (gemv_knobs().slots > 0) per_sm = std::min(per_sm, gemv_knobs().slots);
    const double capacity = double(per_sm) * std::max(1, c.sm_count);
    const double blocks = double(tiles) * ((units + upb - 1) / upb);
    const double waves = std::ceil(blocks / capacity);
    const double cost = waves * (gemv_knobs().overhead + std::ceil(double(upb) / k_warps));
    if (cost < best_cost - 1e-9) { best_cost = cost; best = ks; }
  }
  return best;
}

template <int MODE>
void run_jobs(const GemvCall& c, int upb_force, cudaStream_t s) {
  if (c.m <= 0 || c.count <= 0) return;
  const int tiles = check_call(c);
  for (int r = 0; r < c.m;) {
    int mt = mt_for(std::min(16, c.m - r));
    // Fewer rows per launch where the workspace cannot hold the partials of the least split
    // (a wide head over a long k): the split shrinks with the rows, down to one row.
    while (c.ws.partials && mt > 1 && !partials_fit(tiles, min_ksplit(c.w[0]->k, mt), mt)) mt /= 2;
    if (c.ws.partials && !partials_fit(tiles, min_ksplit(c.w[0]->k, mt), mt))
      throw_status(EXL_CUDA_ERR_UNSUPPORTED, "exl2_gemv: layer too large for the split-K workspace");
    const int mr = std::min(mt, c.m - r);
    GemvJobs jobs;
    jobs.count = c.count;
    jobs.ws = c.ws;
    jobs.skip = gemv_knobs().skip;
    jobs.prefetch_units = gemv_knobs().prefetch;
    jobs.prime = gemv_knobs().prime;
    jobs.warp_gather = gemv_knobs().warp_gather;
    if (gemv_knobs().prefetch_wave) jobs.prefetch_blocks = blocks_by_registers(mt) * std::max(1, c.sm_count);
    if (upb_force <= 0) upb_force = gemv_knobs().upb;
    const int ksplit = choose_ksplit(c, mt, tiles);
    for (int i = 0; i < c.count; ++i) {
      jobs.job[i].w = *c.w[i];
      jobs.job[i].y = c.y[i] ? c.y[i] + std::size_t(r) * c.ldy[i] : nullptr;
      jobs.job[i].yq = c.yq[i] ? c.yq[i] + std::size_t(r) * c.ldy[i] : nullptr;
      jobs.job[i].ldy = c.ldy[i];
      plan_job(jobs.job[i], mt, ksplit, upb_force);
    }
    if (r == 0) {  // the init regions go with the first row tile (later ones run after it)
      jobs.inits = c.inits;
      for (int i = 0; i < c.inits; ++i) jobs.init[i] = c.init[i];
    }
    GemvInput in = c.in;
    const std::size_t off = std::size_t(r) * in.ldx;
    if (in.x) in.x += off;
    if (in.xf) in.xf += off;
    if (in.up) in.up += off;
    if (in.xq) in.xq += off;
    if (in.upq) in.upq += off;
    switch (mt) {
      case 1: launch_mt<1, MODE>(jobs, in, mr, s); break;
      case 2: launch_mt<2, MODE>(jobs, in, mr, s); break;
      case 4: launch_mt<4, MODE>(jobs, in, mr, s); break;
      case 8: launch_mt<8, MODE>(jobs, in, mr, s); break;
      default: launch_mt<16, MODE>(jobs, in, mr, s); break;
    }
    r += mr;
  }
}

}  // namespace

int exl2_tiles(int n_pad) { return (n_pad + k_tile_cols - 1) / k_tile_cols; }

void exl2_repack(const Exl2Device& w, const std::uint32_t* src, std::uint32_t* dst, cudaStream_t s,
                 const std::int32_t* col_map) {
  const dim3 grid(w.tiles, w.k / 32);
  launch_ex(false, exl2_repack_kernel, grid, dim3(32), 0, s, w, src, dst, col_map);
}

void exl2_reconstruct(const Exl2Device& w, __half* out, cudaStream_t s) {
  const dim3 grid(w.tiles, (w.k / 32 + k_rc_warps - 1) / k_rc_warps);
  launch_ex(false, exl2_reconstruct_kernel, grid, dim3(k_rc_warps * 32), 0, s, w, out);
}

void exl2_gemv_run(const GemvCall& c, cudaStream_t s, int units_per_block) {
  switch (c.mode) {
    case k_x_half: run_jobs<k_x_half>(c, units_per_block, s); break;
    case k_x_norm: run_jobs<k_x_norm>(c, units_per_block, s); break;
    case k_x_silu: run_jobs<k_x_silu>(c, units_per_block, s); break;
    default: throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv: unknown input mode");
  }
}

void exl2_gemv(const Exl2Device& w, const __half* x, int m, int ldx, float* y, int ldy, int sm_count,
               const GemvWorkspace& ws, int units_per_block, cudaStream_t s) {
  GemvCall c;
  c.ws = ws;
  c.add(w, y, ldy);
  c.mode = k_x_half; c.in.x = x; c.in.ldx = ldx; c.m = m; c.sm_count = sm_count;
  exl2_gemv_run(c, s, units_per_block);
}

void exl2_gemv_multi(const Exl2Device* const* w, float* const* y, const int* ldy, int count, const __half* x, int m,
                     int ldx, int sm_count, const GemvWorkspace& ws, cudaStream_t s) {
  GemvCall c;
  c.ws = ws;
  for (int i = 0; i < count; ++i) c.add(*w[i], y[i], ldy[i]);
  c.mode = k_x_half; c.in.x = x; c.in.ldx = ldx; c.m = m; c.sm_count = sm_count;
  exl2_gemv_run(c, s);
}

void exl2_gemv_silu(const Exl2Device& w, const float* gate, const float* up, int m, int ld_in, float* y, int ldy,
                    int sm_count, const GemvWorkspace& ws, cudaStream_t s) {
  GemvCall c;
  c.ws = ws;
  c.add(w, y, ldy);
  c.mode = k_x_silu; c.in.xf = gate; c.in.up = up; c.in.ldx = ld_in; c.m = m; c.sm_count = sm_count;
  exl2_gemv_run(c, s);
}

}  // namespace exl::cuda
