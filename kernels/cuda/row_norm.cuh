// Row RMSNorm scales shared by the norm kernels and the kernels that normalise their own input
// (the EXL3 decode GEMV): one definition of the reduction order, so that a kernel normalising a row
// itself gets the bits the separate norm launch would have written.
#pragma once
#include "exact_acc.cuh"
#include "kernels.h"

namespace exl::cuda {

// The sum of every thread's ss over the block (warp shuffles, then the first warp), returned to all.
__device__ __forceinline__ float block_sum(float ss, float* warp_sums) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) warp_sums[0] = v;
  }
  __syncthreads();
  return warp_sums[0];
}

// 1 / rms of the row at element `off` of x (fp32 or exact accumulators, exact_acc.cuh) as rms_norm's
// four-wide kernel computes it: dim a multiple of 4, the row 16-byte aligned, every thread of the
// block (blockDim.x a multiple of 32, at most 1024) four elements a step. warp_sums: 32 floats of
// shared memory.
__device__ __forceinline__ float rms_inv4(const AccIn& x, std::size_t off, int dim, float eps, float* warp_sums) {
  float ss = 0.0f;
  for (int i = threadIdx.x; i < dim / 4; i += blockDim.x) {
    const float4 v = load4(x, off, std::size_t(i));
    ss = fmaf(v.x, v.x, fmaf(v.y, v.y, fmaf(v.z, v.z, fmaf(v.w, v.w, ss))));
  }
  return rsqrtf(block_sum(ss, warp_sums) / float(dim) + eps);
}

// 1 / rms of x[0 .. dim) as the fp32-weight norm (rms_norm_w32) computes it: the block's first 128
// threads (blockDim.x >= 128) strided by 128, four warp sums added in pairs. warp_sums: 4 floats.
__device__ __forceinline__ float rms_inv_w32(const float* x, int dim, float eps, float* warp_sums) {
  float ss = 0.0f;
  if (threadIdx.x < 128) {
    for (int i = threadIdx.x; i < dim; i += 128) {
      const float v = x[i];
      ss = fmaf(v, v, ss);
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if (threadIdx.x < 128 && (threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = ss;
  __syncthreads();
  const float total = (warp_sums[0] + warp_sums[1]) + (warp_sums[2] + warp_sums[3]);
  return 1.0f / sqrtf(total / float(dim) + eps);
}

}  // namespace exl::cuda
