// RMSNorm (spec §4.3): y[r, i] = fp16(x[r, i] * w[i] * rsqrt(mean_j x[r, j]^2 + eps)).
// Memory layout: x fp32 [rows, dim] (the fp32 residual stream), w fp16 [dim], y fp16 [rows, dim].
// Launch shape: one block of 256 threads per row (1024 for the permuted form, which the decode
// step runs twice per layer on the critical path: rms_norm_perm_kernel); sum of squares in fp32 (warp shuffles, then
// shared memory), products in fp32, one rounding to fp16. With a permutation the output is
// gathered: y[r, i] = fp16(x[r, perm[i]] * w[perm[i]] * rsqrt(...)). Without one (prefill chunks),
// rows of a multiple of 4 elements go four elements a thread (rms_norm4_kernel).
#include "cuda_check.h"
#include "exact_acc.cuh"
#include "kernels.h"
#include "launch.cuh"
#include "row_norm.cuh"

namespace exl::cuda {
namespace {

__global__ void rms_norm_kernel(AccIn x, int dim, const __half* __restrict__ w, float eps,
                                __half* __restrict__ y, const std::int32_t* __restrict__ perm) {
  EXL_SHARED_ARRAY(float, warp_sums, [32]);
  pdl_trigger();
  pdl_wait();
  const std::size_t xr = std::size_t(blockIdx.x) * dim;
  __half* yr = y + std::size_t(blockIdx.x) * dim;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = acc_at(x, xr + i);
    ss = fmaf(v, v, ss);
  }
  const float r = rsqrtf(block_sum(ss, warp_sums) / float(dim) + eps);
  if (perm) {
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
      const int p = __ldg(perm + i);
      yr[i] = __float2half_rn(acc_at(x, xr + p) * r * __half2float(w[p]));
    }
  } else {
    for (int i = threadIdx.x; i < dim; i += blockDim.x) yr[i] = __float2half_rn(acc_at(x, xr + i) * r * __half2float(w[i]));
  }
}

// Rows in order, dim a multiple of 4 (rows 16-byte aligned): four elements a thread per step, the
// row read twice (the second time from cache), 8-byte stores.
__global__ void rms_norm4_kernel(AccIn x, int dim, const __half* __restrict__ w, float eps, __half* __restrict__ y) {
  EXL_SHARED_ARRAY(float, warp_sums, [32]);
  pdl_trigger();
  pdl_wait();
  const std::size_t xr = std::size_t(blockIdx.x) * dim;
  const int n4 = dim / 4;
  const float r = rms_inv4(x, xr, dim, eps, warp_sums);  // the EXL3 decode GEMV normalises its input with it too
  const uint2* wr = reinterpret_cast<const uint2*>(w);
  for (int i = threadIdx.x; i < n4; i += blockDim.x) {
    const float4 v = load4(x, xr, std::size_t(i));
    const uint2 wv = wr[i];
    const float2 w01 = __half22float2(*reinterpret_cast<const __half2*>(&wv.x));
    const float2 w23 = __half22float2(*reinterpret_cast<const __half2*>(&wv.y));
    store4(y + xr, std::size_t(i), v.x * r * w01.x, v.y * r * w01.y, v.z * r * w23.x, v.w * r * w23.y);
  }
}

// The permuted form for dim <= 8 * 1024: each thread's R output positions, their permutation
// entries and norm weights are loaded before the PDL wait (none is written by a kernel); after it,
// one contiguous float4 pass for the sum of squares and one round of R independent gathers from
// the (now cached) row.
template <int R>
__global__ void __launch_bounds__(1024) rms_norm_perm_kernel(AccIn x, int dim,
                                                             const __half* __restrict__ w, float eps,
                                                             __half* __restrict__ y,
                                                             const std::int32_t* __restrict__ perm) {
  EXL_SHARED_ARRAY(float, warp_sums, [32]);
  int p[R];
  float wv[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int i = threadIdx.x + r * blockDim.x;
    p[r] = i < dim ? __ldg(perm + i) : 0;
    wv[r] = i < dim ? __half2float(__ldg(w + p[r])) : 0.0f;
  }
  pdl_trigger();
  pdl_wait();
  const std::size_t xr = std::size_t(blockIdx.x) * dim;
  __half* yr = y + std::size_t(blockIdx.x) * dim;
  float ss = 0.0f;
  if ((dim & 3) == 0) {
    for (int i = threadIdx.x; i < dim / 4; i += blockDim.x) {
      const float4 v = load4(x, xr, i);
      ss = fmaf(v.x, v.x, fmaf(v.y, v.y, fmaf(v.z, v.z, fmaf(v.w, v.w, ss))));
    }
  } else {
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
      const float v = acc_at(x, xr + i);
      ss = fmaf(v, v, ss);
    }
  }
  const float inv = rsqrtf(block_sum(ss, warp_sums) / float(dim) + eps);
  float xv[R];
#pragma unroll
  for (int r = 0; r < R; ++r) xv[r] = threadIdx.x + r * blockDim.x < dim ? acc_at(x, xr + p[r]) : 0.0f;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int i = threadIdx.x + r * blockDim.x;
    if (i < dim) yr[i] = __float2half_rn(xv[r] * inv * wv[r]);
  }
}

}  // namespace

void rms_norm(const float* x, int rows, int dim, const __half* w, float eps, __half* y, cudaStream_t s,
              const std::int32_t* perm) {
  rms_norm(AccIn{x}, rows, dim, w, eps, y, s, perm);
}

void rms_norm(AccIn x, int rows, int dim, const __half* w, float eps, __half* y, cudaStream_t s,
              const std::int32_t* perm) {
  if (rows <= 0) return;
  if (perm && dim <= 8 * 1024) {
    const int r = (dim + 1023) / 1024;
    if (r <= 1) launch(rms_norm_perm_kernel<1>, dim3(rows), dim3(1024), 0, s, x, dim, w, eps, y, perm);
    else if (r <= 2) launch(rms_norm_perm_kernel<2>, dim3(rows), dim3(1024), 0, s, x, dim, w, eps, y, perm);
    else if (r <= 4) launch(rms_norm_perm_kernel<4>, dim3(rows), dim3(1024), 0, s, x, dim, w, eps, y, perm);
    else launch(rms_norm_perm_kernel<8>, dim3(rows), dim3(1024), 0, s, x, dim, w, eps, y, perm);
    return;
  }
  if (!perm && dim % 4 == 0 && load4_ok(x) && aligned_to(y, 8) && aligned_to(w, 8)) {
    launch(rms_norm4_kernel, dim3(rows), dim3(256), 0, s, x, dim, w, eps, y);
    return;
  }
  launch(rms_norm_kernel, dim3(rows), dim3(perm ? 1024 : 256), 0, s, x, dim, w, eps, y, perm);
}

}  // namespace exl::cuda
