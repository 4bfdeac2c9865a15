// The EXL2 GEMV's repacked unit-tiles (exl2_gemv.cu's header comment describes the layout):
// how a lane finds, loads and decodes its words, and the mma of one unit.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "async_copy.cuh"
#include "kernels.h"

namespace exl::cuda {

constexpr int k_tile_cols = 64;

template <int B> struct Planes {
  static constexpr int L = B == 3 ? 2 : (B == 5 || B == 6) ? 4 : B;
  static constexpr int H = B - L;
};

// ---- layout helpers shared by repack and the kernels ----

// Word offset of lane word w (0 .. 2B-1) inside a unit-tile.
template <int B>
__device__ __forceinline__ int slab_offset(int lane, int w) {
  constexpr int nq = (2 * B) / 4;
  return w < 4 * nq ? (w >> 2) * 128 + lane * 4 + (w & 3) : nq * 128 + lane * 2 + (w - 4 * nq);
}

__device__ __forceinline__ int pair_col(int lane, int p) { return (p >> 3) * 16 + (lane >> 2) + 8 * (p & 1); }
__device__ __forceinline__ int pair_row(int lane, int p) { return ((p >> 2) & 1) * 16 + 2 * (lane & 3) + 8 * ((p >> 1) & 1); }

template <int B>
__device__ __forceinline__ void load_unit(const std::uint32_t* __restrict__ t, int lane, std::uint32_t (&w)[16]) {
  constexpr int nq = (2 * B) / 4;
#pragma unroll
  for (int i = 0; i < nq; ++i) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(t + i * 128 + lane * 4));
    w[4 * i] = v.x; w[4 * i + 1] = v.y; w[4 * i + 2] = v.z; w[4 * i + 3] = v.w;
  }
  if constexpr ((2 * B) % 4 != 0) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(t + nq * 128 + lane * 2));
    w[4 * nq] = v.x; w[4 * nq + 1] = v.y;
  }
}

// fp16 bits of a positive integer below 2048 (exact).
constexpr std::uint32_t half_int_bits(int v) {
  int e = 0;
  while ((2 << e) <= v) ++e;
  return std::uint32_t(((e + 15) << 10) | ((v << (10 - e)) - 1024));
}

// Pair p of a lane as fp16 (v - z) for both halves, exact.
template <int B, int P>
__device__ __forceinline__ std::uint32_t decode_pair(const std::uint32_t (&w)[16]) {
  constexpr int L = Planes<B>::L, H = Planes<B>::H;
  constexpr int PL = 16 / L;
  constexpr int o = (P % PL) * L;
  constexpr bool hi8 = o + B > 10;
  constexpr int op = hi8 ? o - 8 : o;
  std::uint32_t lw = w[P / PL];
  if constexpr (hi8) lw >>= 8;
  std::uint32_t r = and_or<(((1u << L) - 1u) << op) * 0x10001u, 0x64006400u>(lw);
  if constexpr (H > 0) {
    constexpr int PH = 16 / H;
    constexpr int ho = (P % PH) * H;
    constexpr int sh = ho - (L + op);
    std::uint32_t hv = w[2 * L + P / PH];
    if constexpr (sh > 0) hv >>= sh;
    if constexpr (sh < 0) hv <<= -sh;
    r |= hv & ((((1u << H) - 1u) << (L + op)) * 0x10001u);
  }
  // r = 1024 + v * 2^op in both halves: v - z = r * 2^-op - (1024 * 2^-op + z).
  constexpr std::uint32_t mul = std::uint32_t(15 - op) << 10;                      // 2^-op
  constexpr std::uint32_t add = 0x8000u | half_int_bits((1024 >> op) + (1 << (B - 1)));  // -(1024 / 2^op + z)
  return hfma2_bits(r, mul * 0x10001u, add * 0x10001u);
}

// Row blocks of 8 (the mma's n) in a tile of MT rows: 16 rows take two mma per A fragment.
template <int MT> struct RowBlocks { static constexpr int n = MT > 8 ? 2 : 1; };

// The A fragments of one k-step of one 16-column slice, decoded once, and its mma with every
// row block: part[nb] += W_unit^T . x_unit.
template <int B, int NB, int KS, int MTI>
__device__ __forceinline__ void mma_tile(const std::uint32_t (&w)[16], const std::uint32_t (&b)[NB][4],
                                         float (&part)[NB][4][4]) {
  const std::uint32_t a0 = decode_pair<B, MTI * 8 + KS * 4 + 0>(w);
  const std::uint32_t a1 = decode_pair<B, MTI * 8 + KS * 4 + 1>(w);
  const std::uint32_t a2 = decode_pair<B, MTI * 8 + KS * 4 + 2>(w);
  const std::uint32_t a3 = decode_pair<B, MTI * 8 + KS * 4 + 3>(w);
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) mma16816(part[nb][MTI], a0, a1, a2, a3, b[nb][2 * KS], b[nb][2 * KS + 1]);
}

// The mma of one unit (its 32 rows of x at xs, rows of the batch xs_stride apart). xl: the lane's
// own place in them, unit_x_lane(xs, xs_stride, lane), so that a loop over units only advances it.
template <int MT>
__device__ __forceinline__ const __half* unit_x_lane(const __half* xs, int xs_stride, int lane) {
  // B column g of the mma is batch row g; lanes of a column past the tile's MT rows read row MT - 1
  // instead (their products land in accumulator columns nobody reads), so no lane needs a branch.
  return xs + min(lane >> 2, MT - 1) * xs_stride + 2 * (lane & 3);
}
template <int B, int MT>
__device__ __forceinline__ void mma_unit_at(const std::uint32_t (&w)[16], const __half* xl, int xs_stride,
                                            float (&part)[RowBlocks<MT>::n][4][4]) {
  constexpr int NB = RowBlocks<MT>::n;  // 2 only for 16 rows: the second block's rows all exist
  std::uint32_t b[NB][4];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    const __half* xr = xl + nb * 8 * xs_stride;
    b[nb][0] = *reinterpret_cast<const std::uint32_t*>(xr);
    b[nb][1] = *reinterpret_cast<const std::uint32_t*>(xr + 8);
    b[nb][2] = *reinterpret_cast<const std::uint32_t*>(xr + 16);
    b[nb][3] = *reinterpret_cast<const std::uint32_t*>(xr + 24);
  }
  mma_tile<B, NB, 0, 0>(w, b, part);
  mma_tile<B, NB, 0, 1>(w, b, part);
  mma_tile<B, NB, 0, 2>(w, b, part);
  mma_tile<B, NB, 0, 3>(w, b, part);
  mma_tile<B, NB, 1, 0>(w, b, part);
  mma_tile<B, NB, 1, 1>(w, b, part);
  mma_tile<B, NB, 1, 2>(w, b, part);
  mma_tile<B, NB, 1, 3>(w, b, part);
}

// A lane's words of a unit-tile from the place `l` = slot + 4 lane: slabs at l + 128 i, the half
// slab of an odd width at slot + 128 nq + 2 lane = l + 128 nq - 2 lane.
template <int B>
__device__ __forceinline__ void read_unit_at(const std::uint32_t* l, int lane, std::uint32_t (&w)[16]) {
  constexpr int nq = (2 * B) / 4;
#pragma unroll
  for (int i = 0; i < nq; ++i) {
    const uint4 v = *reinterpret_cast<const uint4*>(l + i * 128);
    w[4 * i] = v.x; w[4 * i + 1] = v.y; w[4 * i + 2] = v.z; w[4 * i + 3] = v.w;
  }
  if constexpr ((2 * B) % 4 != 0) {
    const uint2 v = *reinterpret_cast<const uint2*>(l + nq * 128 - 2 * lane);
    w[4 * nq] = v.x; w[4 * nq + 1] = v.y;
  }
#pragma unroll
  for (int j = 2 * B; j < 16; ++j) w[j] = 0u;
}

// One layer of a GEMV launch: its column tiles are split over K into
// `ksplit` blocks of `upb` units each.
struct GemvJob {
  Exl2Device w;
  float* y = nullptr;
  long long* yq = nullptr;  // an exact accumulator instead of y (kernels.h): no ordered split-K pass
  int ldy = 0;
  int upb = 0;          // units per block
  int ksplit = 0;       // blocks over K per tile
  int block_begin = 0;  // first linear block index of this job
  int tile_begin = 0;   // first split-K counter of this job
};

// Which job, column tile, split and unit range [u0, u1) block `idx` of a launch takes.
struct SplitPlan {
  int j = 0, tile = 0, kb = 0, u0 = 0, u1 = 0;
};
__device__ __forceinline__ SplitPlan split_plan(const GemvJob* jobs, int count, int idx) {
  SplitPlan p;
#pragma unroll
  for (int i = 1; i < k_gemv_max_layers; ++i)
    if (i < count && idx >= jobs[i].block_begin) p.j = i;
  const GemvJob& job = jobs[p.j];
  const int id = idx - job.block_begin;
  p.tile = id / job.ksplit;
  p.kb = id - p.tile * job.ksplit;
  p.u0 = p.kb * job.upb;
  p.u1 = min(job.w.k / 32, p.u0 + job.upb);
  return p;
}

}  // namespace exl::cuda
