// config.json parsing: architectures, RoPE variants (top-level keys and the rope_parameters
// fallback), biases, token ids, and typed errors naming the file and the field.
#include <string>

#include "exl/error.h"
#include "exl/log.h"
#include "exl/model_config.h"
#include "exl_test.h"

namespace {

// A minimal valid Llama config with `extra` members spliced in (extra starts with a comma).
std::string llama(const std::string& extra = "", const std::string& type = "\"model_type\": \"llama\",") {
  return "{" + type +
         R"( "vocab_size": 32000, "hidden_size": 4096, "num_hidden_layers": 32,
             "num_attention_heads": 32, "intermediate_size": 11008)" +
         extra + "}";
}

// Captures warnings for the duration of a test and restores the default sink afterwards.
struct WarningCapture {
  std::vector<std::string> lines;
  WarningCapture() {
    exl::set_log_sink([this](exl::LogLevel l, std::string_view m) {
      if (l == exl::LogLevel::warning) lines.emplace_back(m);
    });
  }
  ~WarningCapture() { exl::set_log_sink({}); }
};

}  // namespace

EXL_TEST(format, config_defaults_and_derived_fields) {
  const auto c = exl::parse_model_config(llama(), "config.json");
  CHECK_EQ(c.architecture, std::string("LlamaForCausalLM"));
  CHECK_EQ(c.num_kv_heads, 32);
  CHECK_EQ(c.head_dim, 128);
  CHECK_EQ(c.max_position_embeddings, 2048);
  CHECK_NEAR(c.rope.theta, 10000.0, 0.0);
  CHECK(c.rope.scaling == exl::RopeScaling::none);
  CHECK_EQ(c.rope.max_seq_len, 2048);
  CHECK(!c.bos_token_id && c.eos_token_ids.empty() && !c.pad_token_id);
  CHECK(!c.quantization);
}

EXL_TEST(format, config_architectures_only_and_variants) {
  auto c = exl::parse_model_config(llama("", R"("architectures": ["MistralForCausalLM"],)"), "config.json");
  CHECK_EQ(c.model_type, std::string("mistral"));
  c = exl::parse_model_config(llama(R"(, "sliding_window": 4096, "num_key_value_heads": 8)",
                                    R"("model_type": "mistral",)"),
                              "config.json");
  CHECK_EQ(c.sliding_window, 4096);
  CHECK_EQ(c.num_kv_heads, 8);
  c = exl::parse_model_config(llama(R"(, "attention_bias": false, "sliding_window": 4096)",
                                    R"("model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"],)"),
                              "config.json");
  CHECK(c.attention_bias);
  CHECK(!c.o_bias);
  CHECK_EQ(c.sliding_window, 0);  // Qwen2 only honours it with use_sliding_window
  c = exl::parse_model_config(llama(R"(, "attention_bias": true, "mlp_bias": true)"), "config.json");
  CHECK(c.attention_bias && c.o_bias && c.mlp_bias);
}

EXL_TEST(format, config_token_ids) {
  const auto c = exl::parse_model_config(
      llama(R"(, "bos_token_id": 1, "eos_token_id": [2, 32000, 32001], "pad_token_id": null)"), "config.json");
  CHECK(c.bos_token_id && *c.bos_token_id == 1);
  CHECK_EQ(c.eos_token_ids.size(), std::size_t(3));
  CHECK_EQ(c.eos_token_ids[2], 32001);
  CHECK(!c.pad_token_id);
  CHECK_THROWS_ERROR(exl::parse_model_config(llama(R"(, "eos_token_id": "x")"), "config.json"),
                     exl::ErrorKind::config, "eos_token_id");
}

EXL_TEST(format, config_rope_parameters_fallback) {
  WarningCapture w;
  auto c = exl::parse_model_config(
      llama(R"(, "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
            "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})"),
      "config.json");
  CHECK_NEAR(c.rope.theta, 500000.0, 0.0);
  CHECK(c.rope.scaling == exl::RopeScaling::llama3);
  CHECK_NEAR(c.rope.factor, 8.0, 0.0);
  CHECK_NEAR(c.rope.high_freq_factor, 4.0, 0.0);
  CHECK_EQ(c.rope.original_max_position, 8192);
  CHECK(w.lines.empty());

  c = exl::parse_model_config(llama(R"(, "rope_theta": 10000, "rope_parameters": {"rope_theta": 20000.0})"),
                              "cfg/config.json");
  CHECK_NEAR(c.rope.theta, 10000.0, 0.0);
  CHECK_EQ(w.lines.size(), std::size_t(1));
  CHECK(w.lines[0].find("cfg/config.json") != std::string::npos);
  CHECK(w.lines[0].find("rope_theta") != std::string::npos);
}

EXL_TEST(format, config_rope_scaling_types) {
  auto c = exl::parse_model_config(llama(R"(, "rope_scaling": {"type": "linear", "factor": 4})"), "config.json");
  CHECK(c.rope.scaling == exl::RopeScaling::linear);
  CHECK_NEAR(c.rope.factor, 4.0, 0.0);
  c = exl::parse_model_config(
      llama(R"(, "max_position_embeddings": 32768,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192})"),
      "config.json");
  CHECK(c.rope.scaling == exl::RopeScaling::yarn);
  CHECK_EQ(c.rope.original_max_position, 8192);
  CHECK_EQ(c.rope.max_seq_len, 32768);
  c = exl::parse_model_config(llama(R"(, "rope_scaling": null)"), "config.json");
  CHECK(c.rope.scaling == exl::RopeScaling::none);
  CHECK_THROWS_ERROR(exl::parse_model_config(llama(R"(, "rope_scaling": {"rope_type": "dynamic", "factor": 2})"),
                                             "config.json"),
                     exl::ErrorKind::unsupported, "rope_scaling.rope_type");
  CHECK_THROWS_ERROR(exl::parse_model_config(llama(R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8})"),
                                             "config.json"),
                     exl::ErrorKind::config, "rope_scaling.low_freq_factor");
  CHECK_THROWS_ERROR(exl::parse_model_config(llama(R"(, "rope_scaling": {"type": "linear", "factor": -1})"),
                                             "config.json"),
                     exl::ErrorKind::config, "rope_scaling.factor");
}

EXL_TEST(format, config_quantization_block) {
  const auto c = exl::parse_model_config(
      llama(R"(, "quantization_config": {"quant_method": "exl2", "version": "0.2.7", "bits": 4.65, "head_bits": 6})"),
      "config.json");
  CHECK(c.quantization.has_value());
  CHECK_EQ(c.quantization->method, std::string("exl2"));
  CHECK_NEAR(c.quantization->bits, 4.65, 1e-12);
  CHECK_EQ(c.quantization->head_bits, 6);
}

EXL_TEST(format, config_validation_errors) {
  using exl::ErrorKind;
  CHECK_THROWS_ERROR(exl::parse_model_config(llama("", R"("model_type": "gpt2",)"), "m/config.json"),
                     ErrorKind::unsupported, "m/config.json: model_type");
  CHECK_THROWS_ERROR(exl::parse_model_config(llama("", R"("architectures": ["GPT2LMHeadModel"],)"), "config.json"),
                     ErrorKind::unsupported, "architectures");
  CHECK_THROWS_ERROR(exl::parse_model_config(llama("", ""), "config.json"), ErrorKind::config, "model_type");
  CHECK_THROWS_ERROR(exl::parse_model_config(R"({"model_type": "llama", "hidden_size": 64})", "config.json"),
                     ErrorKind::config, "vocab_size");
  CHECK_THROWS_ERROR(exl::parse_model_config(llama(R"(, "num_key_value_heads": 5)"), "config.json"),
                     ErrorKind::config, "num_key_value_heads");
  CHECK_THROWS_ERROR(exl::parse_model_config(llama(R"(, "num_key_value_heads": 0)"), "config.json"),
                     ErrorKind::config, "num_key_value_heads");
  CHECK_THROWS_ERROR(exl::parse_model_config(llama(R"(, "hidden_size": 4100)"), "config.json"), ErrorKind::config,
                     "hidden_size (4100) is not a multiple");
  CHECK_THROWS_ERROR(exl::parse_model_config(llama(R"(, "intermediate_size": -3)"), "config.json"),
                     ErrorKind::config, "intermediate_size");
  CHECK_THROWS_ERROR(exl::parse_model_config(llama(R"(, "num_hidden_layers": "32")"), "config.json"),
                     ErrorKind::config, "num_hidden_layers");
  CHECK_THROWS_ERROR(exl::parse_model_config(llama(R"(, "tie_word_embeddings": 1)"), "config.json"),
                     ErrorKind::config, "tie_word_embeddings");
  // head_dim present makes a non-dividing hidden size fine (e.g. Mistral Nemo).
  const auto c = exl::parse_model_config(llama(R"(, "hidden_size": 5120, "head_dim": 128)"), "config.json");
  CHECK_EQ(c.head_dim, 128);
  CHECK_THROWS_ERROR(exl::parse_model_config("[1, 2]", "config.json"), ErrorKind::config, "not a JSON object");
}

EXL_TEST(format, config_text_config_wrapper) {
  const auto c = exl::parse_model_config(
      R"({"model_type": "llama", "text_config": {"vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 2,
          "num_attention_heads": 4, "intermediate_size": 128}})",
      "config.json");
  CHECK_EQ(c.hidden_size, 64);
  CHECK_EQ(c.head_dim, 16);
}
