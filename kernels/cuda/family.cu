// The model families' element-wise and row-wise kernels (ABI 10, issue 47): RMSNorm with fp32
// weights (Gemma's (1 + w) computed in fp32 at load, the q/k head norms, the sandwich norms that
// norm a block's output before the residual add), GeGLU with tanh GELU, scaling and soft-capping.
// Memory layout: flat fp32 rows [rows, dim] (the residual stream, a projection's output, q/k
// [t * heads, head_dim]); norm weights fp32 [dim]; fp16 outputs [rows, dim].
// Launch shape: RMSNorm one block of 128 threads per row; the element-wise ones grid-stride loops
// of 256 threads.
// Precision: as the CPU backend (kernels/cpu/ops_cpu.cpp): sum of squares in fp32 (the CPU sums in
// double), y = x * inv * w in fp32, one rounding where the output is fp16; tanh GELU and the caps
// in fp32 with tanhf.
#include <algorithm>

#include "cuda_check.h"
#include "exl2_common.cuh"
#include "kernels.h"
#include "launch.cuh"
#include "row_norm.cuh"

namespace exl::cuda {
namespace {

int elem_blocks(std::int64_t n) { return int(std::max<std::int64_t>(1, std::min<std::int64_t>((n + 255) / 256, 4096))); }

// One row per block. y16: fp16 output; y32: fp32 output (may be x); add: add[r, :] += the normed row.
__global__ void __launch_bounds__(128) rms_norm_w32_kernel(const float* x, int dim, const float* __restrict__ w,
                                                           float eps, __half* __restrict__ y16, float* y32, float* add) {
  EXL_SHARED_ARRAY(float, warp_sums, [4]);
  pdl_trigger();
  pdl_wait();
  const std::size_t r0 = std::size_t(blockIdx.x) * dim;
  const float inv = rms_inv_w32(x + r0, dim, eps, warp_sums);  // 128 threads (the EXL3 decode GEMV uses it too)
  for (int i = threadIdx.x; i < dim; i += blockDim.x) {
    const float y = x[r0 + i] * inv * w[i];
    if (y16) y16[r0 + i] = __float2half_rn(y);
    if (y32) y32[r0 + i] = y;
    if (add) add[r0 + i] += y;
  }
}

__global__ void gelu_tanh_mul_kernel(const float* __restrict__ g, const float* __restrict__ u, std::int64_t n,
                                     __half* __restrict__ out) {
  pdl_trigger();
  pdl_wait();
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = __float2half_rn(gelu_tanh_times(g[i], u[i]));
}

// softcap false: x *= c; true: x = c * tanh(x / c).
__global__ void scale_kernel(float* x, std::int64_t n, float c, bool softcap) {
  pdl_trigger();
  pdl_wait();
  const float inv = 1.0f / c;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    x[i] = softcap ? c * tanhf(x[i] * inv) : x[i] * c;
}

}  // namespace

void rms_norm_w32(const float* x, int rows, int dim, const float* w, float eps, __half* y16, float* y32, float* add,
                  cudaStream_t s) {
  if (rows <= 0) return;
  if (!x || !w || dim <= 0 || (!y16 && !y32 && !add))
    throw_status(EXL_CUDA_ERR_INVALID, "rms_norm_w32: missing input, weight or output");
  launch(rms_norm_w32_kernel, dim3(rows), dim3(128), 0, s, x, dim, w, eps, y16, y32, add);
}

void gelu_tanh_mul(const float* gate, const float* up, std::int64_t n, __half* out, cudaStream_t s) {
  if (n <= 0) return;
  launch(gelu_tanh_mul_kernel, dim3(elem_blocks(n)), dim3(256), 0, s, gate, up, n, out);
}

void scale_inplace(float* x, std::int64_t n, float c, cudaStream_t s) {
  if (n <= 0) return;
  launch(scale_kernel, dim3(elem_blocks(n)), dim3(256), 0, s, x, n, c, false);
}

void softcap_inplace(float* x, std::int64_t n, float cap, cudaStream_t s) {
  if (n <= 0) return;
  if (!(cap > 0.0f)) throw_status(EXL_CUDA_ERR_INVALID, "softcap_inplace: the cap must be positive");
  launch(scale_kernel, dim3(elem_blocks(n)), dim3(256), 0, s, x, n, cap, true);
}

}  // namespace exl::cuda
