// Device helpers of the one-token attention shared by the decode kernels (attention.cu) and the
// decode pipeline's attention stage (exl2_pipe.cu): how the keys are split, and RoPE of q.
#pragma once
#include <cuda_fp16.h>

namespace exl::cuda {

__device__ __forceinline__ int decode_split_len(int kv_len, int splits) {
  const int per = (kv_len + splits - 1) / splits;
  return max(64, (per + 63) / 64 * 64);  // whole 64-key tiles, at least one: short contexts use few splits
}

// The keys [k0, k1) of one decode split for query token tq (kv_len = past + tq + 1 keys); k0 >= k1
// past the last split with keys (the merge reads only the splits below ceil(kv_len / split_len)).
struct DecodeSplit {
  int kv_len, k0, k1;
};
__device__ __forceinline__ DecodeSplit decode_split(int past, int tq, int split, int splits) {
  DecodeSplit r;
  r.kv_len = past + tq + 1;
  const int split_len = decode_split_len(r.kv_len, splits);
  r.k0 = split * split_len;
  r.k1 = min(r.k0 + split_len, r.kv_len);
  return r;
}

// Element e of a head's q after RoPE (rope_qkv_cache's pairs and arithmetic), from fp32 x.
__device__ __forceinline__ float rope_elem(const float* x, int e, int d, int style, const float2* cs) {
  if (style == 0) {
    const int half = d / 2;
    if (e < half) {
      const float2 c = cs[e];
      return x[e] * c.x - x[e + half] * c.y;
    }
    const float2 c = cs[e - half];
    return x[e] * c.x + x[e - half] * c.y;
  }
  const float2 c = cs[e >> 1];
  return (e & 1) ? x[e] * c.x + x[e - 1] * c.y : x[e] * c.x - x[e + 1] * c.y;
}

}  // namespace exl::cuda
