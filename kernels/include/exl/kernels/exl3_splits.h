// The GPU EXL3 GEMV's split count, shared by kernels/cuda/exl3.cu and the planner (header-only,
// no dependencies, so nvcc and the engine both include it).
#pragma once

namespace exl {

// Rows per pass of an EXL3 linear's prefill path (input transform, cuBLAS on W-hat, output
// transform): each pass reads all of W-hat, so passes are long (a 2048-token chunk in 4), at the
// price of scratch for 512 rows of the widest k (fp16) and n (fp32). Shared by the CUDA backend's
// scratch and the planner's.
constexpr int exl3_pass_rows = 512;

// Blocks of the GPU's EXL3 decode GEMV one multiprocessor holds at once (8 warps each; registers
// are the limit: measured with cudaOccupancyMaxActiveBlocksPerMultiprocessor on sm_90, checked by
// the test cuda_kernels.exl3_gemv_occupancy).
constexpr int exl3_gemv_blocks_per_sm = 4;
// Columns of one GEMV block (four 16-column strips).
constexpr int exl3_gemv_block_columns = 64;

// K splits of the GPU's EXL3 GEMV for a k x n layer on sm_count multiprocessors (1..32). A block
// covers exl3_gemv_block_columns columns of one split; blocks of equal work run in waves of
// blocks_per_sm * sm_count, so the last, partly filled wave idles part of the GPU for a whole
// block's time (0.68 waves: a third of it idle). The candidates are the split counts of whole
// 128-feature blocks of K a split (the fused decode form's unit, so every split has work); the
// answer is the smallest whose waves are at least 85 % filled on average (blocks / (whole waves *
// capacity)), else the best filled one. Shared by kernels/cuda/exl3.cu and the planner's scratch.
inline int exl3_gemv_splits(int k, int n, int sm_count, int blocks_per_sm = exl3_gemv_blocks_per_sm) {
  const int per_split = n / exl3_gemv_block_columns > 1 ? n / exl3_gemv_block_columns : 1, groups = k / 128 > 1 ? k / 128 : 1;
  const long capacity = long(blocks_per_sm > 1 ? blocks_per_sm : 1) * long(sm_count > 1 ? sm_count : 1);
  int best = 1;
  double best_fill = 0.0;
  for (int g = groups; g >= 1; --g) {  // 128-feature blocks a split, so splits rise
    const int s = (groups + g - 1) / g;
    if (s > 32) break;
    const long blocks = long(s) * per_split, waves = (blocks + capacity - 1) / capacity;
    const double fill = double(blocks) / double(waves * capacity);
    if (fill >= 0.85) return s;
    if (fill > best_fill + 1e-9) best = s, best_fill = fill;
  }
  return best;
}

}  // namespace exl
