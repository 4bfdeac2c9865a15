// EXL2 quantized matmul for small M (decode, speculative verification): y += x . W with the
// weights dequantised on the fly from the on-disk packed layout (spec §2.4, §5.2).
//
// Memory layout: q_weight [q_rows, n_pad] uint32, one bitstream per column; stored rows are
// cut into 32-row "units" (a unit never straddles a group); units[u] gives the unit's first
// packed row, group and bit width. x fp16 [m, k] in original feature order is gathered
// through q_perm into shared memory as fp32.
// Launch shape: 256 threads = 8 warps; a block covers 128 columns (32 lanes x 4 adjacent
// columns, 16-byte loads per packed row) and `upb` consecutive units of K; warp w takes
// units w, w+8, ... of the block's range. grid = (n_pad/128, ceil(units/upb), ceil(m/MT)).
// Warp partials are reduced in shared memory, then one fp32 atomicAdd per (row, column) per
// block into y (split K: the order of the additions, hence the last bits, varies run to run).
// Precision: q - z is formed exactly in fp32 (magic-number 2^23 trick), products and the
// per-unit sums are fp32, each unit's sum is multiplied by the exact fp16 scale in fp32.
#include <algorithm>

#include "cuda_check.h"
#include "exl2_common.cuh"
#include "kernels.h"

namespace exl::cuda {
namespace {

constexpr int k_threads = 256;
constexpr int k_warps = k_threads / 32;
constexpr int k_cols = 128;

template <int B, int MT>
__device__ __forceinline__ void gemv_unit(const std::uint32_t* wp, int n_pad, const float* xs, int xs_stride,
                                          float (&acc)[MT][4], const float (&scale)[4]) {
  std::uint32_t wv[4][B];
#pragma unroll
  for (int i = 0; i < B; ++i) {
    const uint4 t = __ldg(reinterpret_cast<const uint4*>(wp + std::size_t(i) * n_pad));
    wv[0][i] = t.x; wv[1][i] = t.y; wv[2][i] = t.z; wv[3][i] = t.w;
  }
  constexpr float bias = 8388608.0f + float(1 << (B - 1));
  float part[MT][4];
#pragma unroll
  for (int mm = 0; mm < MT; ++mm)
#pragma unroll
    for (int c = 0; c < 4; ++c) part[mm][c] = 0.0f;
#pragma unroll
  for (int r = 0; r < 32; ++r) {
    float xv[MT];
#pragma unroll
    for (int mm = 0; mm < MT; ++mm) xv[mm] = xs[mm * xs_stride + r];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const float f = __uint_as_float(exl2_value<B>(wv[c], r) | 0x4B000000u) - bias;
#pragma unroll
      for (int mm = 0; mm < MT; ++mm) part[mm][c] = fmaf(f, xv[mm], part[mm][c]);
    }
  }
#pragma unroll
  for (int mm = 0; mm < MT; ++mm)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[mm][c] = fmaf(part[mm][c], scale[c], acc[mm][c]);
}

template <int MT>
__global__ void __launch_bounds__(k_threads) exl2_gemv_kernel(Exl2Device w, const __half* __restrict__ x, int m,
                                                              int ldx, float* __restrict__ y, int ldy, int upb) {
  extern __shared__ float smem[];
  const int rows_blk = upb * 32;
  float* xs = smem;                       // [MT][rows_blk]
  float* red = smem + MT * rows_blk;      // [k_warps][MT][k_cols]
  const int units = w.k / 32;
  const int u0 = blockIdx.y * upb;
  const int u1 = min(units, u0 + upb);
  const int m0 = blockIdx.z * MT;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int col0 = blockIdx.x * k_cols + lane * 4;

  // Gather the activation slice through the permutation (rows past m are zero).
  for (int i = threadIdx.x; i < MT * rows_blk; i += k_threads) {
    const int mm = i / rows_blk, r = i - mm * rows_blk;
    const int row = u0 * 32 + r;
    float v = 0.0f;
    if (m0 + mm < m && row < w.k) v = __half2float(x[std::size_t(m0 + mm) * ldx + w.perm[row]]);
    xs[i] = v;
  }
  __syncthreads();

  float acc[MT][4];
#pragma unroll
  for (int mm = 0; mm < MT; ++mm)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[mm][c] = 0.0f;

  if (col0 < w.n_pad) {
    int cached_group = -1;
    float scale[4] = {0, 0, 0, 0};
    for (int u = u0 + warp; u < u1; u += k_warps) {
      const int2 info = w.units[u];
      const int bits = info.y & 15, group = info.y >> 4;
      if (group != cached_group) {
        cached_group = group;
        const std::uint32_t sw = __ldg(w.q_scale + std::size_t(group) * (w.n_pad / 8) + col0 / 8);
        const int shift = (col0 & 7) * 4;
        const __half smax = w.q_scale_max[group];
#pragma unroll
        for (int c = 0; c < 4; ++c) scale[c] = exl2_scale(smax, (sw >> (shift + 4 * c)) & 15u);
      }
      const std::uint32_t* wp = w.q_weight + std::size_t(info.x) * w.n_pad + col0;
      const float* xu = xs + (u - u0) * 32;
      switch (bits) {
        case 2: gemv_unit<2, MT>(wp, w.n_pad, xu, rows_blk, acc, scale); break;
        case 3: gemv_unit<3, MT>(wp, w.n_pad, xu, rows_blk, acc, scale); break;
        case 4: gemv_unit<4, MT>(wp, w.n_pad, xu, rows_blk, acc, scale); break;
        case 5: gemv_unit<5, MT>(wp, w.n_pad, xu, rows_blk, acc, scale); break;
        case 6: gemv_unit<6, MT>(wp, w.n_pad, xu, rows_blk, acc, scale); break;
        default: gemv_unit<8, MT>(wp, w.n_pad, xu, rows_blk, acc, scale); break;
      }
    }
  }
#pragma unroll
  for (int mm = 0; mm < MT; ++mm)
#pragma unroll
    for (int c = 0; c < 4; ++c) red[(warp * MT + mm) * k_cols + lane * 4 + c] = acc[mm][c];
  __syncthreads();
  for (int i = threadIdx.x; i < MT * k_cols; i += k_threads) {
    const int mm = i / k_cols, c = i - mm * k_cols;
    const int col = blockIdx.x * k_cols + c;
    if (m0 + mm >= m || col >= w.n) continue;
    float sum = 0.0f;
#pragma unroll
    for (int wi = 0; wi < k_warps; ++wi) sum += red[(wi * MT + mm) * k_cols + c];
    atomicAdd(y + std::size_t(m0 + mm) * ldy + col, sum);
  }
}

template <int MT>
void launch(const Exl2Device& w, const __half* x, int m, int ldx, float* y, int ldy, int sm_count, int upb,
            cudaStream_t s) {
  const int units = w.k / 32;
  const int col_tiles = (w.n_pad + k_cols - 1) / k_cols;
  const int row_tiles = (m + MT - 1) / MT;
  // Largest units-per-block whose shared memory fits 48 KB.
  const int max_upb = std::max(1, (48 * 1024 / 4 - k_warps * MT * k_cols) / (MT * 32));
  if (upb <= 0) {
    // Aim for about four blocks per multiprocessor, at least one unit per warp.
    const long target = 4L * std::max(1, sm_count);
    const long per_tile = std::max<long>(1, target / (long(col_tiles) * row_tiles));
    upb = int((units + per_tile - 1) / per_tile);
    upb = std::max(upb, k_warps);
  }
  upb = std::min({upb, max_upb, units});
  const dim3 grid(col_tiles, (units + upb - 1) / upb, row_tiles);
  const std::size_t smem = sizeof(float) * std::size_t(MT) * (upb * 32 + k_warps * k_cols);
  exl2_gemv_kernel<MT><<<grid, k_threads, smem, s>>>(w, x, m, ldx, y, ldy, upb);
  EXL_CUDA_CHECK_LAUNCH();
}

}  // namespace

void exl2_gemv(const Exl2Device& w, const __half* x, int m, int ldx, float* y, int ldy, int sm_count,
               int units_per_block, cudaStream_t s) {
  if (m <= 0) return;
  if (m == 1) return launch<1>(w, x, m, ldx, y, ldy, sm_count, units_per_block, s);
  if (m == 2) return launch<2>(w, x, m, ldx, y, ldy, sm_count, units_per_block, s);
  if (m <= 4) return launch<4>(w, x, m, ldx, y, ldy, sm_count, units_per_block, s);
  launch<8>(w, x, m, ldx, y, ldy, sm_count, units_per_block, s);
}

}  // namespace exl::cuda
