// Rotary position embedding (spec §4.4) fused with the KV-cache write.
// The cos/sin pairs of the step's positions are computed once per forward (rope_table, or by
// the embedding kernel in the backend) into a table fp32x2 [t, d/2]; every layer reads it.
// Memory layout: q fp32 [t, nh, d], k/v fp32 [t, nkv, d] (the projections' outputs); q_out fp16
// [t, nh, d]; caches fp16 [capacity, nkv, d], token-major (rows through the page table when
// paged), keys stored after RoPE.
// Launch shape: grid = (t, nh + nkv), block = d/2 threads, one rotation pair per thread; the
// KV-head blocks also convert that head's v row.
// Precision: cos/sin as rope_common.cuh, rotation in fp32. The current
// length `past` is read from device memory so a captured decode graph stays valid.
#include "cuda_check.h"
#include "kernels.h"
#include "kv_pages.cuh"
#include "launch.cuh"
#include "rope_common.cuh"

namespace exl::cuda {

namespace {

__device__ __forceinline__ void rope_pair(int d, int i, int style, int& a, int& b) {
  if (style == 0) { a = i; b = i + d / 2; } else { a = 2 * i; b = 2 * i + 1; }
}

__global__ void rope_table_kernel(RopeParams r, int t) {
  pdl_trigger();
  pdl_wait();
  const int half = r.d / 2;
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < t * half; j += gridDim.x * blockDim.x)
    r.cs[j] = rope_cos_sin(*r.past + j / half, r, j % half);
}

__global__ void rope_qkv_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                int nh, int nkv, int d, const int* past, const float2* __restrict__ cs, int style,
                                __half* __restrict__ q_out, __half* __restrict__ k_cache, __half* __restrict__ v_cache,
                                bool k_staged, bool v_staged, const int* __restrict__ pages) {
  pdl_trigger();
  pdl_wait();
  const int t = blockIdx.x, h = blockIdx.y, i = threadIdx.x;
  const int pos = *past + t;
  const int half = d / 2;
  const float2 c = cs[t * half + i];
  int a, b;
  rope_pair(d, i, style, a, b);
  if (h < nh) {
    const std::size_t o = (std::size_t(t) * nh + h) * d;
    const float xa = q[o + a], xb = q[o + b];
    q_out[o + a] = __float2half_rn(xa * c.x - xb * c.y);
    q_out[o + b] = __float2half_rn(xb * c.x + xa * c.y);
    return;
  }
  const int kh = h - nh;
  const std::size_t o = (std::size_t(t) * nkv + kh) * d;
  const std::size_t co = (std::size_t(kv_row(pages, pos)) * nkv + kh) * d;
  const std::size_t ko = k_staged ? o : co, vo = v_staged ? o : co;
  const float xa = k[o + a], xb = k[o + b];
  k_cache[ko + a] = __float2half_rn(xa * c.x - xb * c.y);
  k_cache[ko + b] = __float2half_rn(xb * c.x + xa * c.y);
  v_cache[vo + 2 * i] = __float2half_rn(v[o + 2 * i]);
  v_cache[vo + 2 * i + 1] = __float2half_rn(v[o + 2 * i + 1]);
}

__global__ void rope_inplace_kernel(float* x, int heads, int d, const float2* __restrict__ cs, int style) {
  pdl_trigger();
  pdl_wait();
  const int t = blockIdx.x;
  const int half = d / 2;
  for (int j = threadIdx.x; j < heads * half; j += blockDim.x) {
    const int h = j / half, i = j - h * half;
    const float2 c = cs[t * half + i];
    int a, b;
    rope_pair(d, i, style, a, b);
    float* v = x + (std::size_t(t) * heads + h) * d;
    const float xa = v[a], xb = v[b];
    v[a] = xa * c.x - xb * c.y;
    v[b] = xb * c.x + xa * c.y;
  }
}

}  // namespace

void rope_table(const RopeParams& r, int t, cudaStream_t s) {
  if (t <= 0) return;
  const int n = t * (r.d / 2);
  launch(rope_table_kernel, dim3(std::min(1024, (n + 127) / 128)), dim3(128), 0, s, r, t);
}

void rope_qkv_cache(const float* q, const float* k, const float* v, int t, int nh, int nkv, int d, const int* past,
                    const float2* cs, int style, __half* q_out, __half* k_cache, __half* v_cache, cudaStream_t s,
                    bool k_staged, bool v_staged, const int* pages) {
  if (t <= 0) return;
  if (d % 2 != 0 || d > 512) throw_status(EXL_CUDA_ERR_UNSUPPORTED, "rope: head_dim " + std::to_string(d));
  launch(rope_qkv_kernel, dim3(t, nh + nkv), dim3(d / 2), 0, s, q, k, v, nh, nkv, d, past, cs, style, q_out, k_cache,
         v_cache, k_staged, v_staged, pages);
}

void rope_inplace(float* x, int t, int heads, int d, const float2* cs, int style, cudaStream_t s) {
  if (t <= 0) return;
  launch(rope_inplace_kernel, dim3(t), dim3(128), 0, s, x, heads, d, cs, style);
}

}  // namespace exl::cuda
