// The seven linears of a synthetic decoder layer in module order (q, k, v, o, gate, up, down),
// with their in / out features and bias, after the shape checks both plans share.
#pragma once
#include <array>

#include "exl/error.h"
#include "exl/model_config.h"

namespace exl::synth {

struct Proj {
  const char* name;
  int k, n;
  bool bias;
};

// Throws Error(config) for an incomplete shape.
inline std::array<Proj, 7> decoder_projections(const ModelConfig& c) {
  const int h = c.hidden_size, q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim,
            in = c.intermediate_size;
  if (c.num_layers <= 0 || h <= 0 || q <= 0 || kv <= 0 || in <= 0 || c.vocab_size <= 0)
    throw Error(ErrorKind::config, "incomplete model shape");
  return {{{"self_attn.q_proj", h, q, c.attention_bias}, {"self_attn.k_proj", h, kv, c.attention_bias},
           {"self_attn.v_proj", h, kv, c.attention_bias}, {"self_attn.o_proj", q, h, c.o_bias},
           {"mlp.gate_proj", h, in, c.mlp_bias},         {"mlp.up_proj", h, in, c.mlp_bias},
           {"mlp.down_proj", in, h, c.mlp_bias}}};
}

}  // namespace exl::synth
