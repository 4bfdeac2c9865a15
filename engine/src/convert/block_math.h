// The per-layer math of the converter behind one interface, so a CUDA implementation can
// replace the CPU one: running a decoder block (attention or MLP, fp32 activations) on one
// calibration row with given dense weights, accumulating Hessians, and GPTQ of one layer.
//
// A CUDA module would implement the same four operations on device buffers: keep the
// calibration states resident, accumulate X^T X with cuBLAS syrk/gemm, run the block with the
// engine's CUDA kernels, and run GPTQ as in ExLlamaV2 (Cholesky via cuSOLVER, the scale search
// and the in-group sweep as kernels, the lazy update as a GEMM).
#pragma once
#include <memory>
#include <vector>

#include "exl/convert.h"
#include "exl/kernels/rope.h"

namespace exl::convert_detail {

struct BlockShape {
  int hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0;
  float norm_eps = 1e-5f;
  RopeTable rope;
  RopeStyle rope_style = RopeStyle::neox;
};

// Dense fp32 weights of one block in HF layout ([out, in]); biases may be empty.
struct AttentionWeights {
  std::vector<float> norm, q, k, v, o, q_bias, k_bias, v_bias, o_bias;
};
struct MlpWeights {
  std::vector<float> norm, gate, up, down;
};

// Inputs of the block's linears captured during a run (for Hessians): `a` = post-norm input
// (q/k/v or gate/up), `b` = input of o_proj / down_proj. Null pointers: not wanted.
struct BlockTaps {
  std::vector<float>* a = nullptr;
  std::vector<float>* b = nullptr;
};

class BlockMath {
 public:
  virtual ~BlockMath() = default;
  // x: [tokens, hidden], updated in place to the block output (residual included).
  virtual void attention(const BlockShape& s, const AttentionWeights& w, float* x, int tokens, BlockTaps taps) = 0;
  virtual void mlp(const BlockShape& s, const MlpWeights& w, float* x, int tokens, BlockTaps taps) = 0;
  // h[k, k] += x^T x for x [tokens, k].
  virtual void accumulate_hessian(const float* x, int tokens, int k, std::vector<double>& h) = 0;
  virtual QuantizedLinear quantize(const float* w, int n, int k, const PreparedHessian& h, const QuantOption& o) = 0;
};

std::unique_ptr<BlockMath> make_cpu_block_math();

}  // namespace exl::convert_detail
