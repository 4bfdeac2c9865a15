// Device helpers of the one-token attention kernels (attention.cu): how the keys are split, RoPE
// of q, and the online-softmax update.
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

// The online-softmax update of G heads' states (running max m, sum l, unnormalised output acc of
// E elements) with one key: its scores sc and its value elements vf.
template <int G, int E>
__device__ __forceinline__ void decode_update(const float (&sc)[G], const float (&vf)[E], float (&m)[G], float (&l)[G],
                                              float (&acc)[G][E]) {
#pragma unroll
  for (int h = 0; h < G; ++h) {
    const float mn = fmaxf(m[h], sc[h]);
    const float a = __expf(m[h] - mn), p = __expf(sc[h] - mn);
    m[h] = mn;
    l[h] = l[h] * a + p;
#pragma unroll
    for (int i = 0; i < E; ++i) acc[h][i] = fmaf(p, vf[i], acc[h][i] * a);
  }
}

}  // namespace exl::cuda
