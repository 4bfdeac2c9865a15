// The linears of a synthetic decoder layer in module order (q, k, v, o, then gate, up, down; a
// mixture-of-experts layer: the router, then each expert's gate, up and down), with their in / out
// features and bias, after the shape checks both plans share.
#pragma once
#include <string>
#include <vector>

#include "exl/error.h"
#include "exl/model_config.h"

namespace exl::synth {

struct Proj {
  std::string name;   // after "model.layers.N."
  int k, n;
  bool bias;
  bool keep16 = false;  // written in 16 bits, never quantized (the router, as the converters keep it)
};

// Throws Error(config) for an incomplete shape.
inline std::vector<Proj> decoder_projections(const ModelConfig& c, int layer) {
  const int h = c.hidden_size, q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim,
            in = c.intermediate_size;
  if (c.num_layers <= 0 || h <= 0 || q <= 0 || kv <= 0 || in <= 0 || c.vocab_size <= 0)
    throw Error(ErrorKind::config, "incomplete model shape");
  std::vector<Proj> out{{"self_attn.q_proj", h, q, c.attention_bias}, {"self_attn.k_proj", h, kv, c.attention_bias},
                        {"self_attn.v_proj", h, kv, c.attention_bias}, {"self_attn.o_proj", q, h, c.o_bias}};
  if (!c.moe.is_sparse(layer)) {
    out.insert(out.end(), {{"mlp.gate_proj", h, in, c.mlp_bias}, {"mlp.up_proj", h, in, c.mlp_bias},
                           {"mlp.down_proj", in, h, c.mlp_bias}});
    return out;
  }
  // The Hub's expert names: Mixtral's block_sparse_moe.experts.N.w1/w3/w2, Qwen3-MoE's mlp.experts.N.*_proj.
  const bool mixtral = c.model_type == "mixtral";
  const std::string block = mixtral ? "block_sparse_moe." : "mlp.";
  const int ie = c.moe.expert_intermediate;
  out.push_back({block + "gate", h, c.moe.num_experts, false, true});
  for (int e = 0; e < c.moe.num_experts; ++e) {
    const std::string p = block + "experts." + std::to_string(e) + ".";
    out.insert(out.end(), {{p + (mixtral ? "w1" : "gate_proj"), h, ie, false}, {p + (mixtral ? "w3" : "up_proj"), h, ie, false},
                           {p + (mixtral ? "w2" : "down_proj"), ie, h, false}});
  }
  return out;
}

}  // namespace exl::synth
