// The cos/sin pair of RoPE dimension pair i at position pos (spec §4.4), shared by the rope
// table and the embedding kernel that computes the table for the decode step.
// Precision: the angle is fp32(pos / divisor * inv_freq[i]) computed in double, cos/sin in
// double times mscale rounded to fp32 (as rope_apply_ref).
#pragma once
#include "kernels.h"

namespace exl::cuda {

__device__ __forceinline__ float2 rope_cos_sin(int pos, const RopeParams& r, int i) {
  const double p = double(pos) / double(r.divisor);
  const double angle = double(float(p * double(r.inv_freq[i])));
  double sd, cd;
  sincos(angle, &sd, &cd);
  return make_float2(float(cd * double(r.mscale)), float(sd * double(r.mscale)));
}

}  // namespace exl::cuda
