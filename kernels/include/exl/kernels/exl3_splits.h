// The GPU EXL3 GEMV's split count, shared by kernels/cuda/exl3.cu and the planner (header-only,
// no dependencies, so nvcc and the engine both include it).
#pragma once

namespace exl {

// Rows per pass of an EXL3 linear's prefill path (input transform, cuBLAS on W-hat, output
// transform): each pass reads all of W-hat, so passes are long (a 2048-token chunk in 4), at the
// price of scratch for 512 rows of the widest k (fp16) and n (fp32). Shared by the CUDA backend's
// scratch and the planner's.
constexpr int exl3_pass_rows = 512;

// K splits of the GPU's EXL3 GEMV for a k x n layer on sm_count multiprocessors (1..32): enough
// blocks of 16 columns for six per multiprocessor (24 warps: the trellis decode needs the
// warps to hide its latency), at least 8 tiles of 16 rows a split. Shared by
// kernels/cuda/exl3.cu and the planner's scratch sizes.
inline int exl3_gemv_splits(int k, int n, int sm_count) {
  const int strips = n / 16 > 1 ? n / 16 : 1, tiles_k = k / 16 > 1 ? k / 16 : 1, sms = sm_count > 1 ? sm_count : 1;
  const int want = (6 * sms + strips - 1) / strips, by_k = tiles_k / 8 > 1 ? tiles_k / 8 : 1;
  const int s = want < by_k ? want : by_k;
  return s < 1 ? 1 : (s > 32 ? 32 : s);
}

}  // namespace exl
