// The cos/sin pair of RoPE dimension pair i at position pos (spec §4.4), shared by the rope
// table and the embedding kernel that computes the table for the decode step.
// Precision: the angle is fp32(pos / divisor * inv_freq[i]) computed in double, cos/sin in
// double times mscale rounded to fp32 (as rope_apply_ref).
#pragma once
#include <cuda_fp16.h>

#include "exact_acc.cuh"
#include "kernels.h"

namespace exl::cuda {

__device__ __forceinline__ float2 rope_cos_sin(int pos, const RopeParams& r, int i) {
  const double p = double(pos) / double(r.divisor);
  const double angle = double(float(p * double(r.inv_freq[i])));
  double sd, cd;
  sincos(angle, &sd, &cd);
  return make_float2(float(cd * double(r.mscale)), float(sd * double(r.mscale)));
}

// Rotation pair i of a head of d elements: (i, i + d / 2) (style 0, NeoX) or (2 i, 2 i + 1).
__device__ __forceinline__ void rope_pair(int d, int i, int style, int& a, int& b) {
  if (style == 0) { a = i; b = i + d / 2; } else { a = 2 * i; b = 2 * i + 1; }
}

// The pair (xa, xb) rotated by c = (cos, sin), each element rounded to fp16: the one arithmetic
// of every kernel that applies RoPE (the fused multiply-adds spelled out, so two kernels give the
// same bits).
__device__ __forceinline__ void rope_rotate(float xa, float xb, float2 c, __half& ya, __half& yb) {
  ya = __float2half_rn(fmaf(xa, c.x, -(xb * c.y)));
  yb = __float2half_rn(fmaf(xb, c.x, xa * c.y));
}

// Pair i of a KV head's new row (the projections' k and v at element o, rotation pair (a, b), its
// cos/sin c) into fp16 rows kd and vd: K's pair rotated, V's elements 2 i and 2 i + 1 as they are.
__device__ __forceinline__ void rope_kv_pair(const AccIn& k, const AccIn& v, std::size_t o, int i, int a, int b,
                                             float2 c, __half* kd, __half* vd) {
  rope_rotate(acc_at(k, o + a), acc_at(k, o + b), c, kd[a], kd[b]);
  vd[2 * i] = __float2half_rn(acc_at(v, o + 2 * i));
  vd[2 * i + 1] = __float2half_rn(acc_at(v, o + 2 * i + 1));
}

}  // namespace exl::cuda
