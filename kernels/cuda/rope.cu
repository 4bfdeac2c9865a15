// Rotary position embedding (spec §4.4) fused with the KV-cache write.
// Memory layout: q fp32 [t, nh, d], k/v fp32 [t, nkv, d] (the projections' outputs); q_out fp16
// [t, nh, d]; caches fp16 [capacity, nkv, d], token-major, keys stored after RoPE.
// Launch shape: grid = t tokens, block = 128 threads looping over (head, i < d/2) pairs.
// Precision: the angle is fp32(pos / divisor * inv_freq[i]) computed in double, cos/sin in
// double times mscale rounded to fp32 (as rope_apply_ref), rotation in fp32. The current
// length `past` is read from device memory so a captured decode graph stays valid.
#include "cuda_check.h"
#include "kernels.h"

namespace exl::cuda {
namespace {

__device__ __forceinline__ void rope_cs(int pos, const float* inv_freq, int i, float mscale, float divisor,
                                        float& c, float& s) {
  const double p = double(pos) / double(divisor);
  const double angle = double(float(p * double(inv_freq[i])));
  double sd, cd;
  sincos(angle, &sd, &cd);
  c = float(cd * double(mscale));
  s = float(sd * double(mscale));
}

__device__ __forceinline__ void rope_pair(int d, int i, int style, int& a, int& b) {
  if (style == 0) { a = i; b = i + d / 2; } else { a = 2 * i; b = 2 * i + 1; }
}

__global__ void rope_qkv_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                int nh, int nkv, int d, const int* past, const float* __restrict__ inv_freq,
                                float mscale, float divisor, int style, __half* __restrict__ q_out,
                                __half* __restrict__ k_cache, __half* __restrict__ v_cache) {
  const int t = blockIdx.x;
  const int pos = *past + t;
  const int half = d / 2;
  const std::size_t qo = std::size_t(t) * nh * d;
  const std::size_t ko = std::size_t(t) * nkv * d;
  const std::size_t co = std::size_t(pos) * nkv * d;
  for (int j = threadIdx.x; j < (nh + nkv) * half; j += blockDim.x) {
    const int h = j / half, i = j - h * half;
    float c, s;
    rope_cs(pos, inv_freq, i, mscale, divisor, c, s);
    int a, b;
    rope_pair(d, i, style, a, b);
    if (h < nh) {
      const float* src = q + qo + std::size_t(h) * d;
      const float xa = src[a], xb = src[b];
      q_out[qo + std::size_t(h) * d + a] = __float2half_rn(xa * c - xb * s);
      q_out[qo + std::size_t(h) * d + b] = __float2half_rn(xb * c + xa * s);
    } else {
      const int kh = h - nh;
      const float* src = k + ko + std::size_t(kh) * d;
      const float xa = src[a], xb = src[b];
      k_cache[co + std::size_t(kh) * d + a] = __float2half_rn(xa * c - xb * s);
      k_cache[co + std::size_t(kh) * d + b] = __float2half_rn(xb * c + xa * s);
    }
  }
  for (int j = threadIdx.x; j < nkv * d; j += blockDim.x) v_cache[co + j] = __float2half_rn(v[ko + j]);
}

__global__ void rope_inplace_kernel(float* x, int heads, int d, const int* past, const float* inv_freq,
                                    float mscale, float divisor, int style) {
  const int t = blockIdx.x;
  const int pos = *past + t;
  const int half = d / 2;
  for (int j = threadIdx.x; j < heads * half; j += blockDim.x) {
    const int h = j / half, i = j - h * half;
    float c, s;
    rope_cs(pos, inv_freq, i, mscale, divisor, c, s);
    int a, b;
    rope_pair(d, i, style, a, b);
    float* v = x + (std::size_t(t) * heads + h) * d;
    const float xa = v[a], xb = v[b];
    v[a] = xa * c - xb * s;
    v[b] = xb * c + xa * s;
  }
}

}  // namespace

void rope_qkv_cache(const float* q, const float* k, const float* v, int t, int nh, int nkv, int d, const int* past,
                    const float* inv_freq, float mscale, float pos_divisor, int style, __half* q_out,
                    __half* k_cache, __half* v_cache, cudaStream_t s) {
  if (t <= 0) return;
  rope_qkv_kernel<<<t, 128, 0, s>>>(q, k, v, nh, nkv, d, past, inv_freq, mscale, pos_divisor, style, q_out, k_cache,
                                    v_cache);
  EXL_CUDA_CHECK_LAUNCH();
}

void rope_inplace(float* x, int t, int heads, int d, const int* past, const float* inv_freq, float mscale,
                  float pos_divisor, int style, cudaStream_t s) {
  if (t <= 0) return;
  rope_inplace_kernel<<<t, 128, 0, s>>>(x, heads, d, past, inv_freq, mscale, pos_divisor, style);
  EXL_CUDA_CHECK_LAUNCH();
}

}  // namespace exl::cuda
