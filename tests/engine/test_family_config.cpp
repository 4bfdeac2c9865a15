// config.json of the model families as their checkpoints write it (older transformers' field
// names as well as 5.x's), the defaults transformers applies to omitted fields, and the errors
// for architectures and fields the engine does not support.
#include <string>

#include "exl/error.h"
#include "exl/model_config.h"
#include "exl_test.h"

using namespace exl;

namespace {

std::string config(const std::string& type, const std::string& arch, const std::string& extra) {
  return R"({"architectures": [")" + arch + R"("], "model_type": ")" + type +
         R"(", "vocab_size": 256, "hidden_size": 64, "num_hidden_layers": 12, "num_attention_heads": 4,
            "num_key_value_heads": 2, "intermediate_size": 128, "max_position_embeddings": 4096)" + extra + "}";
}

}  // namespace

EXL_TEST(family_config, unknown_architecture_lists_supported) {
  for (const std::string text : {config("gpt_neox", "GPTNeoXForCausalLM", ""),
                                 std::string(R"({"architectures": ["FalconForCausalLM"], "vocab_size": 2})")}) {
    try {
      (void)parse_model_config(text, "m/config.json");
      CHECK_MSG(false, "no error for an unknown architecture");
    } catch (const Error& e) {
      const std::string w = e.what();
      CHECK(e.kind() == ErrorKind::unsupported);
      CHECK_MSG(w.find("m/config.json") != std::string::npos, w);
      CHECK_MSG(w.find("ForCausalLM' ") != std::string::npos || w.find("gpt_neox") != std::string::npos, w);
      for (const char* a : {"LlamaForCausalLM", "Qwen3ForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM",
                            "Phi3ForCausalLM", "MistralForCausalLM"})
        CHECK_MSG(w.find(a) != std::string::npos, w);
    }
  }
}

// Gemma 3 as the Hub's checkpoints write it (transformers 4.5x): rope_theta with rope_scaling for
// the global layers, rope_local_base_freq for the local ones, the pattern from sliding_window_pattern.
EXL_TEST(family_config, gemma3_older_fields) {
  const auto c = parse_model_config(
      config("gemma3_text", "Gemma3ForCausalLM",
             R"(, "head_dim": 32, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
                 "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "sliding_window": 1024,
                 "sliding_window_pattern": 6, "query_pre_attn_scalar": 32)"),
      "config.json");
  CHECK(c.family.qk_norm && c.family.sandwich_norms && c.family.norm == NormKind::rms_one_plus);
  CHECK_EQ(c.family.attn_logit_softcap, 0.0f);
  CHECK_EQ(c.rope.theta, 1000000.0f);
  CHECK(c.rope.scaling == RopeScaling::linear);
  CHECK_EQ(c.rope_local.theta, 10000.0f);
  CHECK(c.rope_local.scaling == RopeScaling::none);
  for (int i = 0; i < 12; ++i) {
    const bool global = i == 5 || i == 11;
    CHECK_EQ(c.layer_attention[std::size_t(i)].window, global ? 0 : 1024);
    CHECK_EQ(c.layer_attention[std::size_t(i)].local_rope, !global);
  }
  // The multimodal wrapper keeps the text model's fields in text_config.
  const auto m = parse_model_config(
      R"({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "text_config": {
          "model_type": "gemma3_text", "vocab_size": 256, "hidden_size": 64, "num_hidden_layers": 6,
          "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "head_dim": 32,
          "sliding_window": 512}})",
      "config.json");
  CHECK_EQ(m.num_layers, 6);
  CHECK_EQ(m.layer_attention[0].window, 512);
  CHECK_EQ(m.layer_attention[5].window, 0);
}

// Gemma 2 without the soft-capping fields gets transformers' defaults (50 and 30); null turns them off.
EXL_TEST(family_config, gemma2_defaults) {
  const auto c = parse_model_config(config("gemma2", "Gemma2ForCausalLM", R"(, "head_dim": 16)"), "config.json");
  CHECK_EQ(c.family.attn_logit_softcap, 50.0f);
  CHECK_EQ(c.family.final_logit_softcap, 30.0f);
  CHECK_NEAR(c.family.attention_scale, 1.0 / 16.0, 1e-7);  // query_pre_attn_scalar 256
  CHECK_NEAR(c.family.embedding_scale, 8.0, 1e-6);
  CHECK_EQ(c.layer_attention[0].window, 4096);
  CHECK_EQ(c.layer_attention[1].window, 0);
  const auto off = parse_model_config(
      config("gemma2", "Gemma2ForCausalLM", R"(, "attn_logit_softcapping": null, "final_logit_softcapping": null)"),
      "config.json");
  CHECK_EQ(off.family.attn_logit_softcap, 0.0f);
  CHECK_EQ(off.family.final_logit_softcap, 0.0f);
  CHECK_THROWS_ERROR(parse_model_config(config("gemma2", "Gemma2ForCausalLM", R"(, "hidden_activation": "relu")"),
                                        "config.json"),
                     ErrorKind::unsupported, "hidden_activation");
}

EXL_TEST(family_config, qwen3_window_layers_and_layer_types) {
  const auto c = parse_model_config(
      config("qwen3", "Qwen3ForCausalLM", R"(, "use_sliding_window": true, "sliding_window": 64, "max_window_layers": 8)"),
      "config.json");
  CHECK(c.family.qk_norm && !c.attention_bias);
  for (int i = 0; i < 12; ++i) CHECK_EQ(c.layer_attention[std::size_t(i)].window, i >= 8 ? 64 : 0);
  const auto plain = parse_model_config(config("qwen3", "Qwen3ForCausalLM", R"(, "sliding_window": 64)"), "config.json");
  CHECK_EQ(plain.layer_attention[11].window, 0);
  CHECK_THROWS_ERROR(parse_model_config(config("mistral", "MistralForCausalLM",
                                               R"(, "sliding_window": 8, "layer_types": ["full_attention"])"),
                                        "config.json"),
                     ErrorKind::config, "layer_types");
  std::string types = R"(, "sliding_window": 8, "layer_types": [)";
  for (int i = 0; i < 12; ++i) types += std::string(i ? "," : "") + (i == 3 ? "\"chunked_attention\"" : "\"full_attention\"");
  CHECK_THROWS_ERROR(parse_model_config(config("mistral", "MistralForCausalLM", types + "]"), "config.json"),
                     ErrorKind::config, "chunked_attention");
}

// Phi-3 as Phi-3.5 / Phi-4-mini write it: rope_scaling {"type": "longrope" or "su"} and a
// top-level partial_rotary_factor.
EXL_TEST(family_config, phi3_longrope_fields) {
  const std::string f4 = "[1.0, 1.5, 2.0, 2.5, 3.0, 3.5]";
  const auto c = parse_model_config(
      config("phi3", "Phi3ForCausalLM", R"(, "partial_rotary_factor": 0.75, "original_max_position_embeddings": 1024,
             "rope_scaling": {"type": "su", "short_factor": )" + f4 + R"(, "long_factor": )" + f4 + "}"),
      "config.json");
  CHECK(c.family.fused_qkv && c.family.fused_gate_up);
  CHECK_EQ(c.rope.rotary_dim, 12);
  CHECK(c.rope.scaling == RopeScaling::longrope);
  CHECK_EQ(c.rope.original_max_position, 1024);
  CHECK_NEAR(c.rope.attention_factor, std::sqrt(1.0 + std::log(4.0) / std::log(1024.0)), 1e-6);
  CHECK_THROWS_ERROR(parse_model_config(config("phi3", "Phi3ForCausalLM",
                                               R"(, "rope_scaling": {"type": "longrope", "short_factor": [1.0, 2.0],
                                                  "long_factor": [1.0, 2.0]})"),
                                        "config.json"),
                     ErrorKind::config, "short_factor");
  CHECK_THROWS_ERROR(parse_model_config(config("phi3", "Phi3ForCausalLM", R"(, "partial_rotary_factor": 1.5)"), "config.json"),
                     ErrorKind::config, "partial_rotary_factor");
}
