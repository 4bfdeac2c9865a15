// EXL2 "reconstruct": dequantises a whole layer to fp16 W [k, n_pad] in the ORIGINAL row order
// (scattered through q_perm), bit-exact with spec §2.7 and exl2_dequant_ref. The prefill path
// then multiplies with cuBLAS.
// Memory layout: q_weight [q_rows, n_pad] uint32 (on-disk), out [k, n_pad] fp16 row-major.
// Launch shape: one thread per column and 32-row unit; block = 128 columns, grid = (n_pad/128,
// k/32). Loads and stores are coalesced across the columns of a warp.
// Precision: (q - z) * scale is exact in fp32 (<= 8-bit integer times an 11-bit mantissa) and
// rounded once to fp16, which equals the single fp16 multiply of the spec.
#include "cuda_check.h"
#include "exl2_common.cuh"
#include "kernels.h"

namespace exl::cuda {
namespace {

template <int B>
__device__ __forceinline__ void reconstruct_unit(const std::uint32_t* wp, int n_pad, const std::int32_t* perm,
                                                 float scale, __half* out, int col) {
  std::uint32_t wv[B];
#pragma unroll
  for (int i = 0; i < B; ++i) wv[i] = __ldg(wp + std::size_t(i) * n_pad);
  constexpr int z = 1 << (B - 1);
#pragma unroll
  for (int r = 0; r < 32; ++r) {
    const float q = float(int(exl2_value<B>(wv, r)) - z);
    out[std::size_t(perm[r]) * n_pad + col] = __float2half_rn(q * scale);
  }
}

__global__ void exl2_reconstruct_kernel(Exl2Device w, __half* __restrict__ out) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int u = blockIdx.y;
  if (col >= w.n_pad) return;
  const int2 info = w.units[u];
  const int bits = info.y & 15, group = info.y >> 4;
  const std::uint32_t sw = __ldg(w.q_scale + std::size_t(group) * (w.n_pad / 8) + col / 8);
  const float scale = exl2_scale(w.q_scale_max[group], (sw >> ((col & 7) * 4)) & 15u);
  const std::uint32_t* wp = w.q_weight + std::size_t(info.x) * w.n_pad + col;
  const std::int32_t* perm = w.perm + u * 32;
  switch (bits) {
    case 2: reconstruct_unit<2>(wp, w.n_pad, perm, scale, out, col); break;
    case 3: reconstruct_unit<3>(wp, w.n_pad, perm, scale, out, col); break;
    case 4: reconstruct_unit<4>(wp, w.n_pad, perm, scale, out, col); break;
    case 5: reconstruct_unit<5>(wp, w.n_pad, perm, scale, out, col); break;
    case 6: reconstruct_unit<6>(wp, w.n_pad, perm, scale, out, col); break;
    default: reconstruct_unit<8>(wp, w.n_pad, perm, scale, out, col); break;
  }
}

}  // namespace

void exl2_reconstruct(const Exl2Device& w, __half* out, cudaStream_t s) {
  const dim3 grid((w.n_pad + 127) / 128, w.k / 32);
  exl2_reconstruct_kernel<<<grid, 128, 0, s>>>(w, out);
  EXL_CUDA_CHECK_LAUNCH();
}

}  // namespace exl::cuda
