// Rotary position embedding (spec §4.4): frequency tables for default/linear/llama3/yarn
// scaling and the rotation itself (NEOX "half split" and GPT-J "interleaved").
#pragma once
#include <cstdint>
#include <vector>

namespace exl {

enum class RopeScaling : std::uint8_t { none, linear, llama3, yarn, longrope };
enum class RopeStyle : std::uint8_t { neox, gptj };

struct RopeParams {
  int head_dim = 0;
  float theta = 10000.0f;
  RopeScaling scaling = RopeScaling::none;
  RopeStyle style = RopeStyle::neox;
  float factor = 1.0f;                 // linear / llama3 / yarn
  float low_freq_factor = 1.0f;        // llama3
  float high_freq_factor = 4.0f;       // llama3
  int original_max_position = 0;       // llama3 / yarn
  int max_seq_len = 0;                 // configured context; yarn uses it (ExLlamaV2 quirk, spec §4.4)
  float alpha = 1.0f;                  // NTK alpha (scale_alpha_value)
  float yarn_beta_fast = 32.0f;
  float yarn_beta_slow = 1.0f;
  // Partial rotary (Phi-3's partial_rotary_factor): only the first rotary_dim of each head rotate,
  // pairs (i, i + rotary_dim / 2); 0 = head_dim.
  int rotary_dim = 0;
  // LongRoPE (Phi-3): per-frequency divisors [rotary_dim / 2], the long ones when the context
  // exceeds original_max_position; cos and sin scaled by attention_factor (0: derived from
  // factor = max_seq_len / original_max_position as sqrt(1 + ln factor / ln original)).
  std::vector<float> longrope_short, longrope_long;
  bool longrope_use_long = false;
  float attention_factor = 0.0f;
};

struct RopeTable {
  std::vector<float> inv_freq;  // [rotary_dim / 2] (rotary_dim = head_dim unless partial)
  float mscale = 1.0f;          // multiplies sin and cos (yarn)
  float position_divisor = 1.0f;  // linear scaling divides positions
};

// Computes the inverse frequencies in fp32 exactly as the spec describes.
RopeTable rope_table(const RopeParams& p);

// Pairs rotated per head: inv_freq's length, at most head_dim / 2.
inline int rope_half(const RopeTable& t, int head_dim) {
  const int n = int(t.inv_freq.size());
  return n < head_dim / 2 ? n : head_dim / 2;
}

// Rotates x in place: x is [tokens, heads, head_dim] fp32, token t at position positions[t].
// Angles are computed in double and rounded to float (the reference).
void rope_apply_ref(float* x, int tokens, int heads, int head_dim, const std::int32_t* positions,
                    const RopeTable& table, RopeStyle style);
void rope_apply_cpu(float* x, int tokens, int heads, int head_dim, const std::int32_t* positions,
                    const RopeTable& table, RopeStyle style);

}  // namespace exl
