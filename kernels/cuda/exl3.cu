// EXL3 linears on the GPU (docs/EXL3.md; the reference twin is kernels/reference/exl3_ref.cpp):
//   y = had128(had128(x * suh) . W-hat) * svh
// in four kernels:
//   - input transform: one warp per (row, 128-feature block): fp16 x * suh rounded to fp16, the
//     128-point butterfly in fp32 (lane l holds elements 4l .. 4l+3: a 4-point transform in the
//     lane, then shuffles at distances 1..16), scaled by 1/sqrt(128) and rounded to fp16. The
//     steps and their order are the reference's, so the result is bit for bit the reference's.
//   - GEMV partials (few rows): a block per (four 16-column tile strips, K split); warp w takes tile
//     rows w, w + 8, ... of the split and, in each, the tile of every strip (one lane address serves
//     the four, the next row's words load while a row decodes). A tile is 256 values in the
//     tensor-core order, lane l holding positions 8l .. 8l+7 (rows 2(l%4) + {0,1,8,9}, columns l/4
//     and l/4 + 8). A value's 16-bit state is the 16 stream bits ending at its end bit, decoded by
//     the codebook to fp16 in pairs (exact, as the reference), and the tile is one mma.m16n8k16's A
//     operand against the rows' inputs (fp32 accumulators). Warps are summed through shared memory
//     in a fixed order, splits into their own slice of z (no atomics, so results repeat bit for
//     bit); the block completing a 128-column group applies the output transform (decode).
//   - output transform: the splits summed in order, the butterfly in fp32, * svh, stored or added
//     into y (fp32), columns past out_features dropped.
//   - reconstruct (prefill): W-hat^T as fp16 [n, k], a warp per tile, for cuBLAS.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "cuda_check.h"
#include "exl/kernels/exl3_splits.h"
#include "kernels.h"
#include "async_copy.cuh"
#include "exl2_common.cuh"
#include "launch.cuh"
#include "row_norm.cuh"

namespace exl::cuda {
namespace {

constexpr float k_had_scale = 0.088388347648f;  // 1 / sqrt(128)

// The 16-bit states of lane l's 8 values of a tile (sequence positions 8l .. 8l+7), in two steps
// so that a warp can issue the loads of several tiles before it decodes any. A state is the 16
// stream bits ending at its end bit (cyclic; kernels/reference/exl3_ref.cpp). The lane loads the
// (at most three) 32-bit words holding its states once -- read big-endian, the stream's bit order
// -- aligns that window to its first state with three funnel shifts, and cuts every state at its
// offset from the first, which does not depend on l (8l is even). The GEMV passes the rate as a
// compile-time constant (B2 = bits2), so the offsets and shifts fold to constants there.
// Where lane l's window lies in a tile of rate B2: the words q0, q1, q2 (cyclic) from its first
// state's first bit, and that bit's offset in q0.
struct LaneWindow {
  int q0, q1, q2, off;
};
__device__ __forceinline__ LaneWindow lane_window(int B2, int lane) {
  const int t0 = 8 * lane, nwords = 4 * B2;
  const int end0 = (B2 & 1) ? (t0 >> 1) * B2 + (B2 >> 1) : (t0 + 1) * (B2 >> 1);
  const int first = end0 >= 16 ? end0 - 16 : end0 - 16 + 128 * B2;  // may wrap to the stream's end
  const int q = first >> 5;
  return {q, q + 1 >= nwords ? q + 1 - nwords : q + 1, q + 2 >= nwords ? q + 2 - nwords : q + 2, first & 31};
}
__device__ __forceinline__ void exl3_tile_load(const std::uint32_t* __restrict__ tile, const LaneWindow& lw,
                                               std::uint32_t (&wd)[3]) {
  wd[0] = __ldg(tile + lw.q0);
  wd[1] = __ldg(tile + lw.q1);
  wd[2] = __ldg(tile + lw.q2);
}
__device__ __forceinline__ void exl3_tile_cut(const std::uint32_t (&wd)[3], int B2, int off, std::uint32_t st[8]) {
  // Aligned window: a = stream bits start .. start+31, b the next 32, c the rest.
  const std::uint32_t a = __funnelshift_l(wd[1], wd[0], unsigned(off)), b = __funnelshift_l(wd[2], wd[1], unsigned(off)),
                      c = wd[2] << off;
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    // First bit of position 8l + e relative to that of 8l (at most 56: the window holds 80 - off >= 49 + 16).
    const int pos = (B2 & 1) ? (e >> 1) * B2 + ((e & 1) ? B2 - (B2 >> 1) : 0) : e * (B2 >> 1);
    std::uint32_t v;
    if (pos + 16 <= 32) v = a >> (16 - pos);
    else if (pos < 32) v = __funnelshift_l(b, a, unsigned(pos)) >> 16;
    else if (pos + 16 <= 64) v = b >> (48 - pos);
    else v = __funnelshift_l(c, b, unsigned(pos - 32)) >> 16;
    st[e] = v & 0xFFFFu;
  }
}

// The 128-point butterfly on v[0..3] of each of the warp's lanes (lane l: elements 4l .. 4l+3).
__device__ __forceinline__ void had128_warp(float v[4], int lane) {
  const float s0 = __fadd_rn(v[0], v[1]), d0 = __fsub_rn(v[0], v[1]);
  const float s1 = __fadd_rn(v[2], v[3]), d1 = __fsub_rn(v[2], v[3]);
  v[0] = __fadd_rn(s0, s1);
  v[1] = __fadd_rn(d0, d1);
  v[2] = __fsub_rn(s0, s1);
  v[3] = __fsub_rn(d0, d1);
  for (int dist = 1; dist < 32; dist <<= 1) {
    for (int e = 0; e < 4; ++e) {
      const float other = __shfl_xor_sync(0xffffffffu, v[e], dist);
      v[e] = (lane & dist) ? __fsub_rn(other, v[e]) : __fadd_rn(v[e], other);
    }
  }
  for (int e = 0; e < 4; ++e) v[e] = __fmul_rn(v[e], k_had_scale);
}

// Four fp16 values at p (8-byte aligned) as floats, one load.
__device__ __forceinline__ void load_half4(const __half* p, float (&f)[4]) {
  const uint2 u = *reinterpret_cast<const uint2*>(p);
  const __half2 lo = *reinterpret_cast<const __half2*>(&u.x), hi = *reinterpret_cast<const __half2*>(&u.y);
  f[0] = __low2float(lo);
  f[1] = __high2float(lo);
  f[2] = __low2float(hi);
  f[3] = __high2float(hi);
}

// The input transform of one 128-feature block of one row, by one warp: x * suh rounded to fp16
// (an fp16 product, exact in fp32), the butterfly, rounded to fp16 into out[0 .. 127]. Features
// at or past in_features are zero.
__device__ __forceinline__ void input_block_values(const float (&a)[4], const __half* __restrict__ suh, int c_block,
                                                   int lane, __half* __restrict__ out) {
  const int c0 = c_block + 4 * lane;
  float b[4];
  load_half4(suh + c0, b);
  float v[4];
  for (int e = 0; e < 4; ++e) v[e] = __half2float(__float2half_rn(__fmul_rn(a[e], b[e])));
  had128_warp(v, lane);
  // out: a 128-feature block of xr or of the GEMV's shared memory (4-byte aligned).
  reinterpret_cast<__half2*>(out)[2 * lane] = __floats2half2_rn(v[0], v[1]);
  reinterpret_cast<__half2*>(out)[2 * lane + 1] = __floats2half2_rn(v[2], v[3]);
}

// Lane l's four fp16 inputs c0 .. c0 + 3 of x as floats (zero at or past in_features).
__device__ __forceinline__ void load_x4(const __half* __restrict__ x, int in_features, int c_block, int lane, float (&a)[4]) {
  const int c0 = c_block + 4 * lane;
  if (c_block + 128 <= in_features && (reinterpret_cast<std::uintptr_t>(x + c0) & 7u) == 0) {
    load_half4(x + c0, a);
  } else {
    for (int e = 0; e < 4; ++e) a[e] = c0 + e < in_features ? __half2float(x[c0 + e]) : 0.0f;
  }
}

__device__ __forceinline__ void input_block(const __half* __restrict__ x, int in_features, const __half* __restrict__ suh,
                                            int c_block, int lane, __half* __restrict__ out) {
  float a[4];
  load_x4(x, in_features, c_block, lane, a);
  input_block_values(a, suh, c_block, lane, out);
}

// Lane l's four inputs c0 .. c0 + 3 of a GEMV that forms its own input (Exl3Input), as the fp16
// values the separate launch (rms_norm, rms_norm_w32, silu_mul, gelu_tanh_mul) would have written;
// r: the row's 1 / rms for the norms.
__device__ __forceinline__ void load_input4(const Exl3Input& in, float r, int c_block, int lane, float (&a)[4]) {
  if (in.mode == Exl3Input::half_x) return load_x4(in.x, in.in_features, c_block, lane, a);
  const int c0 = c_block + 4 * lane;
  for (int e = 0; e < 4; ++e) {
    const int c = c0 + e;
    float v = 0.0f;
    if (c < in.in_features) {
      switch (in.mode) {
        case Exl3Input::rms_norm16: v = in.xf[c] * r * __half2float(in.norm16[c]); break;
        case Exl3Input::rms_norm32: v = in.xf[c] * r * in.norm32[c]; break;
        case Exl3Input::silu: v = silu_times(in.xf[c], in.up[c]); break;
        default: v = gelu_tanh_times(in.xf[c], in.up[c]); break;
      }
    }
    a[e] = __half2float(__float2half_rn(v));
  }
}

// Blocks of the transform kernels: 8 warps, a warp per (row, 128-feature block).
constexpr int k_transform_warps = 8;

// grid (ceil(k / 128 / 8), rows), 256 threads: warp w of block b transforms 128-feature block 8b + w.
__global__ void __launch_bounds__(32 * k_transform_warps) exl3_input_kernel(const __half* __restrict__ x, int ldx,
                                                                            int in_features,
                                                                            const __half* __restrict__ suh, int k,
                                                                            __half* __restrict__ xr) {
  pdl_trigger();
  pdl_wait();
  const int r = int(blockIdx.y), blk = int(blockIdx.x) * k_transform_warps + (int(threadIdx.x) >> 5);
  if (blk >= k / 128) return;
  input_block(x + std::size_t(r) * ldx, in_features, suh, blk * 128, int(threadIdx.x) & 31,
              xr + std::size_t(r) * k + blk * 128);
}

// The output transform of one row's 128-column block c_block, by one warp: the splits' partials
// of z [splits][rows][n] summed in split order (their loads issued together: a chain of dependent
// loads was most of the separate kernel's time; `cg`: through L2, for partials other
// multiprocessors wrote during the same kernel), the butterfly, * svh, stored or added into y.
__device__ __forceinline__ void output_block(const float* __restrict__ z, int splits, int rows, int n, int r, int c_block,
                                             int lane, const __half* __restrict__ svh, int out_features,
                                             float* __restrict__ y, int ldy, bool overwrite, bool cg) {
  const int c0 = c_block + 4 * lane;
  float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int q0 = 0; q0 < splits; q0 += 8) {  // the lane's four columns of each split as one 16-byte load
    float4 p[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const float4* a = reinterpret_cast<const float4*>(z + (std::size_t(q0 + u) * rows + r) * n + c0);
      p[u] = q0 + u < splits ? (cg ? __ldcg(a) : *a) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      v[0] += p[u].x;
      v[1] += p[u].y;
      v[2] += p[u].z;
      v[3] += p[u].w;
    }
  }
  had128_warp(v, lane);
  float* dst = y + std::size_t(r) * ldy + c0;
  float sc[4], o[4];
  load_half4(svh + c0, sc);
  for (int e = 0; e < 4; ++e) o[e] = __fmul_rn(v[e], sc[e]);
  if (c0 + 4 <= out_features && (reinterpret_cast<std::uintptr_t>(dst) & 15u) == 0) {
    float4 d = make_float4(o[0], o[1], o[2], o[3]);
    if (!overwrite) {
      const float4 y0 = *reinterpret_cast<const float4*>(dst);
      d = make_float4(y0.x + o[0], y0.y + o[1], y0.z + o[2], y0.w + o[3]);
    }
    *reinterpret_cast<float4*>(dst) = d;
  } else {
    for (int e = 0; e < 4; ++e)
      if (c0 + e < out_features) dst[e] = overwrite ? o[e] : dst[e] + o[e];
  }
}

// The output transform folded into the GEMV (decode): the block that completes a 128-column group
// (its 8 strips times the K splits, counted in tickets[group], which that block sets back to 0)
// applies it. tickets == nullptr: the partials stay in z for exl3_output_kernel.
struct Exl3Out {
  unsigned* tickets = nullptr;
  int out_features = 0;
  float* y = nullptr;
  int ldy = 0;
  bool overwrite = true;
};

constexpr int k_gemv_strips = exl3_gemv_block_columns / 16;  // strips a block: a warp decodes one tile of each per row
constexpr int k_gemv_warps = 8;   // warps a block, each down its own rows of the split (rows warp, warp + 8, ...)

// The fp16 values of states s0 and s1, packed (s0 in the low half), equal bit for bit to the
// reference's (kernels/reference/exl3_ref.cpp):
//   - mul1: v = fp16((1774 * sum - 905216) / 2^18) for the byte sum `sum` (0 .. 1020) of the hash.
//     The half with bits 0x6400 + sum is 1024 + sum, and 1774 / 2^18 (0x1EEE) and 1024 * 1774 / 2^18
//     + 905216 / 2^18 = 10.3828125 (0x4931) are exact fp16 numbers, so one fma.rn.f16x2,
//     (1024 + sum) * c1 - c3, rounds the exact value once: the same fp16 as the reference.
//   - 3INST / MCG: the two fp16 halves of the masked hash lie in [0.125, 2) in magnitude, so their
//     fp32 sum is exact and fp16(lo + hi) is one fp16 addition (fma by 1.0).
// The multiplicative hash of 3INST (codebook 0) and MCG (1): state * mul + add (mul1 has its own).
struct Exl3Hash {
  std::uint32_t mul, add;
};
__device__ __forceinline__ Exl3Hash exl3_hash(int codebook) {
  return codebook == 0 ? Exl3Hash{89226354u, 64248484u} : Exl3Hash{0xCBAC1FEDu, 0u};
}

template <bool MUL1>
__device__ __forceinline__ std::uint32_t exl3_pair(std::uint32_t s0, std::uint32_t s1, Exl3Hash h) {
  if constexpr (MUL1) {
    const std::uint32_t lo = __dp4a(s0 * 0x83DCD12Du, 0x01010101u, 0x6400u);
    const std::uint32_t hi = __dp4a(s1 * 0x83DCD12Du, 0x01010101u, 0x6400u);
    return hfma2_bits(__byte_perm(lo, hi, 0x5410), 0x1EEE1EEEu, 0xC931C931u);  // (lo, hi) as two halves
  } else {
    const std::uint32_t y0 = ((s0 * h.mul + h.add) & 0x8FFF8FFFu) ^ 0x3B603B60u;
    const std::uint32_t y1 = ((s1 * h.mul + h.add) & 0x8FFF8FFFu) ^ 0x3B603B60u;
    return hfma2_bits(__byte_perm(y0, y1, 0x5410), 0x3C003C00u, __byte_perm(y0, y1, 0x7632));
  }
}

// Where a lane's first state starts in its first word, when that does not depend on the lane: for
// even rates lane l's first state begins at bit 4 * B2 * l + B2 / 2 - 16 of the tile's stream, the
// same offset in a 32-bit word for every lane when B2 is a multiple of 8 (4 and 8 bits). -1 else.
template <int B2>
constexpr int fixed_window_offset() {
  return B2 % 8 == 0 ? (B2 / 2 + 16) % 32 : -1;
}

// The 16-bit state at stream bit p (counted from the most significant bit of wd[0]; p is a
// compile-time constant after unrolling): one shift, mask or byte permute where the state lies in
// one word (a byte permute takes bits 8 .. 23 with zeros above), a funnel shift and a shift where it
// crosses into the next.
__device__ __forceinline__ std::uint32_t state_at(const std::uint32_t (&wd)[3], int p) {
  const int w = p >> 5, o = p & 31;
  if (o == 0) return wd[w] >> 16;
  if (o == 16) return wd[w] & 0xFFFFu;
  if (o == 8) return __byte_perm(wd[w], 0u, 0x4421);
  if (o < 16) return (wd[w] >> (16 - o)) & 0xFFFFu;
  return __funnelshift_l(wd[w + 1], wd[w], unsigned(o)) >> 16;
}

// Lane l's 8 states of a tile from its three words.
template <int B2>
__device__ __forceinline__ void exl3_tile_cut_fast(const std::uint32_t (&wd)[3], int off, std::uint32_t st[8]) {
  constexpr int fixed = fixed_window_offset<B2>();
  if constexpr (fixed >= 0) {
#pragma unroll
    for (int e = 0; e < 8; ++e) st[e] = state_at(wd, fixed + e * (B2 / 2));
  } else {
    exl3_tile_cut(wd, B2, off, st);
  }
}

// grid (n / 64, splits), 32 * k_gemv_warps threads: four 16-column strips a block; warp w takes
// rows i0 + w, i0 + w + 8, ... of the split and, in each, the tile of every strip (the four tiles
// of a tile row lie side by side, so one lane address a word serves all four, and the inputs of the
// row are read once for them). rows <= MR <= 8 of xr [rows, k]; rate B2; MUL1: the mul1 codebook,
// else `codebook` (3INST / MCG). A tile is the A operand of one mma.m16n8k16 as it lies in the
// lanes (A's rows are the tile's 16 columns, its k the tile's 16 rows: lane l's values e = 0, 1, 4,
// 5, 2, 3, 6, 7 are a0 .. a3's halves), decoded to fp16 in registers; B is the rows' inputs (column g
// = row g; lanes past the last row repeat it, and their columns of C are not read), C the 16 columns
// x 8 rows in fp32. The next row's words are loaded before the current row is decoded.
// FUSED (one row, tiles_per_split a multiple of 8): xr is the raw input x (in_features wide) and
// the block applies the input transform to its own K range first (the input kernel's arithmetic,
// so bit for bit the same), keeping it in shared memory: one launch less per linear for decode,
// at the price of each block transforming its range again.
constexpr int k_fused_max_k = 8192;  // K range of one split the fused form holds (16 KB)
// The entry of a grouped launch's block b (entries' blocks one after another from first_block):
// its fields selected, not indexed, since a dynamic index would copy the parameters to local memory.
template <class Entry>
__device__ __forceinline__ Entry group_entry(const Entry (&e)[k_exl3_group_max], int count, int b) {
  static_assert(k_exl3_group_max == 3, "group_entry selects among three entries");
  return (count > 2 && b >= e[2].first_block) ? e[2] : (count > 1 && b >= e[1].first_block) ? e[1] : e[0];
}

// A GEMV launch: up to k_exl3_group_max layers over the same input (decode's q, k, v or gate, up),
// their blocks one after another in the 1-D grid; layer e's blocks are (n / 64 column blocks) x
// (its K splits), column block fastest.
struct Exl3GemvEntry {
  Exl3Device w;
  float* z = nullptr;
  int tiles_per_split = 0, splits = 1, first_block = 0, col_blocks = 0;
  Exl3Out out;
};
struct Exl3GemvParams {
  Exl3GemvEntry e[k_exl3_group_max];
  int count = 1;
  const __half* xr = nullptr;  // !FUSED: the transformed rows [rows, k]
  int rows = 1;
  Exl3Input in;  // FUSED: the raw input of the one row
};

template <int MR, int B2, bool MUL1, bool FUSED>
__global__ void __launch_bounds__(32 * k_gemv_warps) exl3_gemv_kernel(const Exl3GemvParams p) {
  static_assert(MR >= 1 && MR <= 8, "rows are the mma's n (8)");
  pdl_trigger();
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int b = int(blockIdx.x);
  const Exl3GemvEntry E = group_entry(p.e, p.count, b);  // this block's layer
  const Exl3Device& w = E.w;
  const int local = b - E.first_block, col_block = local % E.col_blocks, split = local / E.col_blocks;
  const int rows = p.rows, tiles_per_split = E.tiles_per_split;
  float* __restrict__ z = E.z;
  const int j0 = col_block * k_gemv_strips;
  const int tiles_k = w.k / 16, tiles_n = w.n / 16;
  constexpr int tile_words32 = 4 * B2;
  const int i0 = split * tiles_per_split, i1 = min(tiles_k, i0 + tiles_per_split);
  const Exl3Hash hash = exl3_hash(w.codebook);
  pdl_wait();
  EXL_SHARED_ARRAY(__half, xs, [FUSED ? k_fused_max_k : 1]);
  if (FUSED) {
    EXL_SHARED_ARRAY(float, warp_sums, [32]);
    float r = 0.0f;  // 1 / rms of the row, for the norm inputs (the whole block takes part)
    if (p.in.mode == Exl3Input::rms_norm16) r = rms_inv4(AccIn{p.in.xf}, 0, p.in.in_features, p.in.eps, warp_sums);
    else if (p.in.mode == Exl3Input::rms_norm32) r = rms_inv_w32(p.in.xf, p.in.in_features, p.in.eps, warp_sums);
    for (int c = 16 * i0 + 128 * warp; c < 16 * i1; c += 128 * k_gemv_warps) {
      float a[4];
      load_input4(p.in, r, c, lane, a);
      input_block_values(a, w.suh, c, lane, xs + (c - 16 * i0));
    }
    __syncthreads();
  }
  // Row g's inputs at k = 2t, 2t + 1 (b0) and 2t + 8, 2t + 9 (b1) of a tile.
  const __half* xrow = FUSED ? xs + 2 * t : p.xr + std::size_t(min(g, max(rows, 1) - 1)) * w.k + 2 * t;
  const int xi0 = FUSED ? i0 : 0;  // the first tile row xrow holds
  float c[k_gemv_strips][4] = {};
  // The lane's three words in the block's first tile of row 0; tile (i, j0 + s) is i * row_words +
  // s * tile_words32 further.
  const LaneWindow lw = lane_window(B2, lane);
  const std::uint32_t* base = reinterpret_cast<const std::uint32_t*>(w.trellis) + std::size_t(j0) * tile_words32;
  const std::uint32_t *p0 = base + lw.q0, *p1 = base + lw.q1, *p2 = base + lw.q2;
  const std::size_t row_words = std::size_t(tiles_n) * tile_words32;
  auto load_row = [&](int i, std::uint32_t (&wd)[k_gemv_strips][3]) {
    const std::size_t r = std::size_t(i) * row_words;
#pragma unroll
    for (int s = 0; s < k_gemv_strips; ++s) {
      wd[s][0] = __ldg(p0 + r + s * tile_words32);
      wd[s][1] = __ldg(p1 + r + s * tile_words32);
      wd[s][2] = __ldg(p2 + r + s * tile_words32);
    }
  };
  auto row = [&](int i, const std::uint32_t (&wd)[k_gemv_strips][3]) {
    const std::uint32_t b0 = *reinterpret_cast<const std::uint32_t*>(xrow + 16 * (i - xi0));
    const std::uint32_t b1 = *reinterpret_cast<const std::uint32_t*>(xrow + 16 * (i - xi0) + 8);
#pragma unroll
    for (int s = 0; s < k_gemv_strips; ++s) {
      std::uint32_t st[8];
      exl3_tile_cut_fast<B2>(wd[s], lw.off, st);
      const std::uint32_t a0 = exl3_pair<MUL1>(st[0], st[1], hash), a1 = exl3_pair<MUL1>(st[4], st[5], hash);
      const std::uint32_t a2 = exl3_pair<MUL1>(st[2], st[3], hash), a3 = exl3_pair<MUL1>(st[6], st[7], hash);
      mma16816(c[s], a0, a1, a2, a3, b0, b1);
    }
  };
  // Two word buffers in turn: a row's words are loaded while the row before is decoded.
  std::uint32_t wa[k_gemv_strips][3], wb[k_gemv_strips][3];
  int i = i0 + warp;
  if (i < i1) load_row(i, wa);
  while (i < i1) {
    if (i + k_gemv_warps < i1) load_row(i + k_gemv_warps, wb);
    row(i, wa);
    i += k_gemv_warps;
    if (i >= i1) break;
    if (i + k_gemv_warps < i1) load_row(i + k_gemv_warps, wa);
    row(i, wb);
    i += k_gemv_warps;
  }
  // c[s][0], c[s][1]: strip s, column g, rows 2t and 2t + 1; c[s][2], c[s][3]: column g + 8.
  EXL_SHARED_ARRAY(float, red, [k_gemv_warps][k_gemv_strips][MR][16]);
#pragma unroll
  for (int s = 0; s < k_gemv_strips; ++s) {
    if (2 * t < MR) {
      red[warp][s][2 * t][g] = c[s][0];
      red[warp][s][2 * t][g + 8] = c[s][2];
    }
    if (2 * t + 1 < MR) {
      red[warp][s][2 * t + 1][g] = c[s][1];
      red[warp][s][2 * t + 1][g + 8] = c[s][3];
    }
  }
  __syncthreads();
  for (int idx = int(threadIdx.x); idx < k_gemv_strips * MR * 16; idx += blockDim.x) {
    const int sp = idx / (MR * 16), r = idx / 16 % MR, cc = idx % 16;
    if (r >= rows) continue;
    float sum = red[0][sp][r][cc];
    for (int q = 1; q < k_gemv_warps; ++q) sum += red[q][sp][r][cc];
    z[(std::size_t(split) * rows + r) * w.n + 16 * (j0 + sp) + cc] = sum;
  }
  const Exl3Out& out = E.out;
  if (!out.tickets) return;
  EXL_SHARED_ARRAY(unsigned, last, [1]);
  __threadfence();  // this block's partials, before its ticket
  __syncthreads();
  constexpr int blocks_per_group = 8 / k_gemv_strips;  // 128 columns
  const int group = col_block / blocks_per_group;
  if (threadIdx.x == 0) {
    const unsigned arrivals = unsigned(blocks_per_group) * unsigned(E.splits);
    last[0] = atomicAdd(out.tickets + group, 1u) == arrivals - 1u;
    if (last[0]) out.tickets[group] = 0u;  // every other block of the group has arrived: ready for the next launch
  }
  __syncthreads();
  if (!last[0]) return;
  __threadfence();
  for (int r = warp; r < rows; r += k_gemv_warps)
    output_block(z, E.splits, rows, w.n, r, 128 * group, lane, w.svh, out.out_features, out.y, out.ldy,
                 out.overwrite, true);
}

// f(std::integral_constant<int, B2>) for the rate w.bits2 = B2: the rates the format has, 1 .. 8
// bits and 1.5 / 2.5 / 3.5 (mul1), each a compiled form of the kernels.
template <class F>
void with_rate(int bits2, const char* what, F&& f) {
  switch (bits2) {
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 7: return f(std::integral_constant<int, 7>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 10: return f(std::integral_constant<int, 10>{});
    case 12: return f(std::integral_constant<int, 12>{});
    case 14: return f(std::integral_constant<int, 14>{});
    case 16: return f(std::integral_constant<int, 16>{});
    default: EXL_CUDA_REQUIRE(false, std::string(what) + ": bit rate x2 out of range (" + std::to_string(bits2) + ")");
  }
}

// f(std::bool_constant<MUL1>) for w's codebook at rate B2: mul1, or 3INST / MCG (even rates only;
// the odd rates, 1.5 / 2.5 / 3.5 bits, exist for mul1 alone).
template <int B2, class F>
void with_codebook(const Exl3Device& w, F&& f) {
  if constexpr (B2 % 2 == 0) {
    if (w.codebook != 2) return f(std::false_type{});
  }
  f(std::true_type{});
}

// Launches p (its entries' first_block / col_blocks filled here) with the rate and codebook of its
// first layer (a group's layers share them).
template <int MR>
void launch_gemv_rate(Exl3GemvParams& p, cudaStream_t s) {
  int blocks = 0;
  for (int e = 0; e < p.count; ++e) {
    p.e[e].first_block = blocks;
    p.e[e].col_blocks = p.e[e].w.n / 16 / k_gemv_strips;
    blocks += p.e[e].col_blocks * p.e[e].splits;
  }
  const Exl3Device& w = p.e[0].w;
  with_rate(w.bits2, "EXL3 GEMV", [&](auto rate) {
    constexpr int B2 = decltype(rate)::value;
    with_codebook<B2>(w, [&](auto mul1) {  // MR 1 is launched for the fused form only
      launch(exl3_gemv_kernel<MR, B2, decltype(mul1)::value, MR == 1>, dim3(unsigned(blocks)), dim3(32 * k_gemv_warps), 0, s,
             p);
    });
  });
}

// The output transforms (exl3_output_transform, exl3_output_group): grid (blocks, rows), 256 threads;
// layer e's blocks are ceil(n / 128 / 8) after the layers before it, warp w of its block j the
// 128-column block 8j + w. z: [splits][rows][n] per layer.
struct Exl3OutEntry {
  const float* z = nullptr;
  int splits = 1, n = 0, out_features = 0, ldy = 0, first_block = 0;
  const __half* svh = nullptr;
  float* y = nullptr;
  bool overwrite = true;
};
struct Exl3OutGroup {
  Exl3OutEntry e[k_exl3_group_max];
  int count = 1, rows = 1;
};
__global__ void __launch_bounds__(32 * k_transform_warps) exl3_output_kernel(const Exl3OutGroup p) {
  pdl_trigger();
  pdl_wait();
  const int b = int(blockIdx.x);
  const Exl3OutEntry E = group_entry(p.e, p.count, b);
  const int blk = (b - E.first_block) * k_transform_warps + (int(threadIdx.x) >> 5);
  if (blk >= E.n / 128) return;
  output_block(E.z, E.splits, p.rows, E.n, int(blockIdx.y), blk * 128, int(threadIdx.x) & 31, E.svh, E.out_features,
               E.y, E.ldy, E.overwrite, false);
}

// Launches the output transforms of p's entries (first_block filled here) for p.rows rows.
void launch_output(Exl3OutGroup& p, cudaStream_t s) {
  int blocks = 0;
  for (int e = 0; e < p.count; ++e) {
    EXL_CUDA_REQUIRE(p.e[e].n % 128 == 0 && p.e[e].out_features <= p.e[e].n && p.e[e].y && p.e[e].z && p.rows > 0,
                     "EXL3 output transform: bad shape");
    p.e[e].first_block = blocks;
    blocks += (p.e[e].n / 128 + k_transform_warps - 1) / k_transform_warps;
  }
  launch(exl3_output_kernel, dim3(unsigned(blocks), unsigned(p.rows)), dim3(32 * k_transform_warps), 0, s, p);
}

// grid (tiles / 8), 256 threads: a warp per tile, decoded as the GEMV decodes it (fp16 pairs in the
// mma A layout, bit for bit the reference's values) and stored transposed, W-hat^T [n][k] (k
// contiguous, cuBLAS's "T" operand): lane l's pairs are (column g, k 2t and 2t + 1), (g, 2t + 8 ..),
// (g + 8, 2t ..), (g + 8, 2t + 8 ..) of the tile, four 32-bit stores.
template <int B2, bool MUL1>
__global__ void __launch_bounds__(256) exl3_reconstruct_kernel(Exl3Device w, __half* __restrict__ out) {
  pdl_trigger();
  pdl_wait();
  const int lane = int(threadIdx.x) & 31;
  const int tile = int(blockIdx.x) * 8 + (int(threadIdx.x) >> 5);
  const int tiles_n = w.n / 16;
  if (tile >= (w.k / 16) * tiles_n) return;
  const int i = tile / tiles_n, j = tile % tiles_n, g = lane >> 2, t = lane & 3;
  const Exl3Hash hash = exl3_hash(w.codebook);
  const std::uint32_t* words = reinterpret_cast<const std::uint32_t*>(w.trellis) + std::size_t(tile) * 4 * B2;
  const LaneWindow lw = lane_window(B2, lane);
  std::uint32_t wd[3], st[8];
  exl3_tile_load(words, lw, wd);
  exl3_tile_cut_fast<B2>(wd, lw.off, st);
  std::uint32_t* o = reinterpret_cast<std::uint32_t*>(out);
  const std::size_t at = (std::size_t(16 * j + g) * std::size_t(w.k) + std::size_t(16 * i + 2 * t)) / 2;
  const std::size_t at8 = at + std::size_t(w.k) * 4;  // column g + 8
  o[at] = exl3_pair<MUL1>(st[0], st[1], hash);
  o[at + 4] = exl3_pair<MUL1>(st[2], st[3], hash);
  o[at8] = exl3_pair<MUL1>(st[4], st[5], hash);
  o[at8 + 4] = exl3_pair<MUL1>(st[6], st[7], hash);
}

}  // namespace

// EXL_CUDA_EXL3_BPS=N: assume N resident GEMV blocks a multiprocessor in the split rule (for
// benchmarks: the module's scratch follows it, the planner keeps the default).
static int gemv_blocks_per_sm() {
  static const int v = [] {
    const char* e = std::getenv("EXL_CUDA_EXL3_BPS");
    const int n = e ? std::atoi(e) : 0;
    return n > 0 && n <= 64 ? n : exl3_gemv_blocks_per_sm;
  }();
  return v;
}

int exl3_gemv_splits(const Exl3Device& w, int sm_count) {
  return ::exl::exl3_gemv_splits(w.k, w.n, sm_count, gemv_blocks_per_sm());
}

void exl3_input_transform(const Exl3Device& w, const __half* x, int rows, int ldx, int in_features, __half* xr,
                          cudaStream_t s) {
  EXL_CUDA_REQUIRE(w.k % 128 == 0 && in_features <= w.k && rows > 0, "EXL3 input transform: bad shape");
  const unsigned bx = unsigned((w.k / 128 + k_transform_warps - 1) / k_transform_warps);
  launch(exl3_input_kernel, dim3(bx, unsigned(rows)), dim3(32 * k_transform_warps), 0, s, x, ldx, in_features, w.suh, w.k,
         xr);
}

void exl3_gemv_partials(const Exl3Device& w, const __half* xr, int rows, float* z, int splits, cudaStream_t s) {
  EXL_CUDA_REQUIRE(rows > 0 && rows <= k_exl3_gemv_rows && splits >= 1 && w.n % 128 == 0 && w.k % 128 == 0,
                   "EXL3 GEMV: bad shape");
  Exl3GemvParams p;
  p.e[0].w = w;
  p.e[0].z = z;
  p.e[0].splits = splits;
  p.e[0].tiles_per_split = (w.k / 16 + splits - 1) / splits;
  p.xr = xr;
  p.rows = rows;
  launch_gemv_rate<8>(p, s);
}

// Tiles of 16 rows per split for the fused form: whole 128-feature blocks.
static int fused_tiles_per_split(const Exl3Device& w, int splits) { return ((w.k / 16 + splits - 1) / splits + 7) / 8 * 8; }

bool exl3_gemv_fusable(const Exl3Device& w, int splits) { return 16 * fused_tiles_per_split(w, splits) <= k_fused_max_k; }

bool exl3_input_ok(const Exl3Input& in) {
  switch (in.mode) {
    case Exl3Input::half_x: return in.x != nullptr;
    case Exl3Input::rms_norm16:  // the four-wide norm's precondition (rms_norm4_kernel)
      return in.xf && in.norm16 && in.in_features % 4 == 0 && reinterpret_cast<std::uintptr_t>(in.xf) % 16 == 0;
    case Exl3Input::rms_norm32: return in.xf && in.norm32;
    case Exl3Input::silu:
    case Exl3Input::gelu: return in.xf && in.up;
    default: return false;
  }
}

bool exl3_gemv_groupable(const Exl3Target* t, int count) {
  if (count < 1 || count > k_exl3_group_max) return false;
  for (int e = 0; e < count; ++e) {
    const Exl3Device& w = *t[e].w;
    if (!exl3_gemv_fusable(w, t[e].splits) || w.bits2 != t[0].w->bits2 || w.codebook != t[0].w->codebook ||
        w.n % 128 != 0 || w.k % 128 != 0)
      return false;
  }
  return true;
}

void exl3_gemv_group(const Exl3Target* t, int count, const Exl3Input& in, cudaStream_t s) {
  EXL_CUDA_REQUIRE(exl3_gemv_groupable(t, count) && exl3_input_ok(in), "EXL3 GEMV group: layers or input not groupable");
  Exl3GemvParams p;
  p.count = count;
  p.in = in;
  for (int e = 0; e < count; ++e) {
    const Exl3Device& w = *t[e].w;
    EXL_CUDA_REQUIRE(t[e].splits >= 1 && in.in_features <= w.k && (!t[e].tickets || (t[e].y && t[e].out_features <= w.n)),
                     "EXL3 fused GEMV: bad shape");
    p.e[e].w = w;
    p.e[e].z = t[e].z;
    p.e[e].splits = t[e].splits;
    p.e[e].tiles_per_split = fused_tiles_per_split(w, t[e].splits);
    p.e[e].out = Exl3Out{t[e].tickets, t[e].out_features, t[e].y, t[e].ldy, t[e].overwrite};
  }
  launch_gemv_rate<1>(p, s);
}

void exl3_gemv_fused(const Exl3Device& w, const __half* x, int in_features, float* z, int splits, cudaStream_t s,
                     unsigned* tickets, int out_features, float* y, int ldy, bool overwrite) {
  Exl3Input in;
  in.x = x;
  in.in_features = in_features;
  const Exl3Target t{&w, z, splits, tickets, out_features, y, ldy, overwrite};
  exl3_gemv_group(&t, 1, in, s);
}

void exl3_output_transform(const Exl3Device& w, const float* z, int splits, int rows, int out_features, float* y, int ldy,
                           bool overwrite, cudaStream_t s) {
  Exl3OutGroup p;
  p.rows = rows;
  p.e[0] = Exl3OutEntry{z, splits, w.n, out_features, ldy, 0, w.svh, y, overwrite};
  launch_output(p, s);
}

void exl3_output_group(const Exl3Target* t, int count, cudaStream_t s) {
  EXL_CUDA_REQUIRE(count >= 1 && count <= k_exl3_group_max, "EXL3 output group: 1 .. 3 layers");
  Exl3OutGroup p;
  p.count = count;
  for (int e = 0; e < count; ++e)
    p.e[e] = Exl3OutEntry{t[e].z, t[e].splits, t[e].w->n, t[e].out_features, t[e].ldy, 0, t[e].w->svh, t[e].y,
                          t[e].overwrite};
  launch_output(p, s);
}

void exl3_reconstruct_t(const Exl3Device& w, __half* out, cudaStream_t s) {
  const dim3 grid(unsigned(((w.k / 16) * (w.n / 16) + 7) / 8));
  with_rate(w.bits2, "EXL3 reconstruct", [&](auto rate) {
    constexpr int B2 = decltype(rate)::value;
    with_codebook<B2>(w, [&](auto mul1) {
      launch(exl3_reconstruct_kernel<B2, decltype(mul1)::value>, grid, dim3(256), 0, s, w, out);
    });
  });
}

}  // namespace exl::cuda
