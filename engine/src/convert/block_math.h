// The per-layer math of the converter behind one interface, so a CUDA implementation can
// replace the CPU one: running a decoder block (attention or MLP, fp32 activations) on one
// calibration row with given dense weights, accumulating Hessians, and GPTQ of one layer.
//
// The CUDA implementation (kernels/cuda/convert_math.cu) keeps the block's weights and the
// Hessians on the device: a block's weights are uploaded once per load and once per changed
// projection, the Hessians never leave the device (only the permutation comes back).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exl/convert.h"
#include "exl/kernels/rope.h"

namespace exl::convert_detail {

struct BlockShape {
  int hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0;
  float norm_eps = 1e-5f;
  RopeTable rope;                 // this layer's (Gemma 3's local layers have their own)
  RopeStyle rope_style = RopeStyle::neox;
  // The family's departures from the Llama block (ModelConfig::family, the layer's attention).
  float attention_scale = 0.0f;   // 0: 1/sqrt(head_dim)
  float attn_softcap = 0.0f;
  int window = 0;                 // this layer's sliding window, 0 = full
  bool gelu = false;              // GeGLU (tanh GELU) instead of SwiGLU
  // True when the block is more than the Llama block (the CUDA block math runs only that).
  bool beyond_llama() const {
    return attention_scale > 0.0f || attn_softcap > 0.0f || window > 0 || gelu ||
           int(rope.inv_freq.size()) * 2 != head_dim;  // partial rotary
  }
};

// Dense fp32 weights of one block in HF layout ([out, in]); biases may be empty. Norm weights as
// the block multiplies by them ((1 + w) already added for Gemma). q_norm / k_norm ([head_dim],
// per head before RoPE) and out_norm (the block output's, Gemma) are empty when the family has none.
struct AttentionWeights {
  std::vector<float> norm, q, k, v, o, q_bias, k_bias, v_bias, o_bias;
  std::vector<float> q_norm, k_norm, out_norm;
};
struct MlpWeights {
  std::vector<float> norm, gate, up, down;
  std::vector<float> out_norm;
};

// Hessian slots: A = the block's post-norm input (q/k/v or gate/up), B = o_proj's / down_proj's
// input, C = free (the head).
enum HessianSlot : int { hessian_a = 0, hessian_b = 1, hessian_c = 2 };

class BlockMath {
 public:
  virtual ~BlockMath() = default;
  // The block the next runs use. The weights object must outlive those runs; after replacing one
  // projection's weights in it, call changed() with the projection's name.
  virtual void load(const BlockShape& s, const AttentionWeights& w) = 0;
  virtual void load(const BlockShape& s, const MlpWeights& w) = 0;
  virtual void changed(const std::string& proj) = 0;
  // x: [tokens, hidden], updated in place to the block output (residual included). collect: the
  // linears' inputs are added (x^T x) into Hessians A and B.
  virtual void run(float* x, int tokens, bool collect) = 0;
  // Hessian h[k, k] = 0; += x^T x for x [tokens, k]; prepare for GPTQ after dividing by `rows`
  // (act order, damping, factor: exl::prepare_hessian). Returns the act-order permutation.
  virtual void reset_hessian(int slot, int k) = 0;
  virtual void add_hessian(int slot, const float* x, int tokens) = 0;
  virtual std::vector<std::int32_t> prepare_hessian(int slot, int rows, const std::string& what) = 0;
  // The averaged Hessian of `slot` (sum / rows, [k, k] row-major) for the EXL3 quantizer, instead
  // of prepare_hessian(); the slot is empty afterwards.
  virtual std::vector<double> averaged_hessian(int slot, int rows) = 0;
  // GPTQ of w [n, k] (HF layout) with the prepared Hessian `slot` (exl::gptq_quantize).
  virtual QuantizedLinear quantize(int slot, const float* w, int n, int k, const QuantOption& o) = 0;

  // The measurement pass (§7.4). A candidate is quantize() of a projection's weight as loaded
  // ([n, k], Hessian `slot`), kept by the math object under `id` (the GPU keeps its dequantized
  // weight in device memory, so candidates never travel to the host and back); use_candidate()
  // puts it into the loaded block in place of the projection's weight until the next load() or
  // changed() of that projection. Candidates live until clear_candidates().
  virtual void add_candidate(int id, int slot, const std::string& proj, int n, int k, const QuantOption& o) = 0;
  virtual void use_candidate(const std::string& proj, int id) = 0;
  virtual void clear_candidates() = 0;
  // The rows evaluate() runs the loaded block on: inputs and reference outputs, [tokens, hidden]
  // each (both must outlive the evaluate() calls).
  virtual void set_rows(const std::vector<std::vector<float>>& in, const std::vector<std::vector<float>>& ref) = 0;
  // Mean over the rows of relative_error(block(in[r]), ref[r]); throws on NaN/inf outputs.
  virtual double evaluate() = 0;
};

// A projection's weight by name ("q_proj" … "down_proj"); throws for a name the block lacks.
const std::vector<float>& projection(const AttentionWeights& w, const std::string& proj);
const std::vector<float>& projection(const MlpWeights& w, const std::string& proj);

// ||y - ref||_F / ||ref||_F in fp64 with both clamped to +-65504 (the fp16 range), §7.4, over the
// values after the first `skip` (first_token_skip: a row's first token is left out).
double relative_error(const std::vector<float>& y, const std::vector<float>& ref, std::size_t skip = 0);
// The values of a row's first token, which the measurement leaves out of its error: in many
// models the first position becomes an attention sink whose hidden state is tens of times the norm
// of the others, so from the middle layers on ||ref|| is mostly that one token, and a block's
// relative error shrinks with the row length instead of measuring the other tokens (ExLlamaV2
// includes it; on SmolLM2-135M its measured 4.0 bpw file is +18 / +24 % over FP16, ours with the
// first token left out +16 / +12 %: bench/RESULTS.md, session 17). Rows of one token keep it.
inline std::size_t first_token_skip(int tokens, int hidden) {
  return tokens > 1 ? static_cast<std::size_t>(hidden) : 0;
}

std::unique_ptr<BlockMath> make_cpu_block_math();
// The device implementation (exl_cuda module); throws Error(device) when no usable GPU or module.
std::unique_ptr<BlockMath> make_cuda_block_math(int device);

}  // namespace exl::convert_detail
