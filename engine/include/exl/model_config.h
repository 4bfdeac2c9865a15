// The model description read from config.json (spec §1.2), Llama family.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "exl/kernels/rope.h"

namespace exl {

struct QuantizationConfig {
  std::string method;      // "exl2", "gptq", ...
  std::string version;
  double bits = 0.0;       // target average bpw
  int head_bits = 0;
  double head_bits_value = 0.0;  // as written (EXL3 heads may be 1.5 / 2.5 / 3.5 bits)
  std::string codebook;          // EXL3: "mul1", "mcg" or "3inst" of newly quantized tensors
};

struct ModelConfig {
  std::filesystem::path dir;
  std::string architecture;   // architectures[0]
  std::string model_type;     // llama, mistral, qwen2
  int vocab_size = 0;
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;
  int max_position_embeddings = 2048;
  float rms_norm_eps = 1e-5f;
  RopeParams rope;            // head_dim, theta, scaling filled in
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q/k/v (and o for Llama-style attention_bias)
  bool o_bias = false;
  bool mlp_bias = false;
  int sliding_window = 0;
  std::optional<int> bos_token_id;
  std::vector<int> eos_token_ids;  // every id config.json / generation_config.json declare
  std::optional<int> pad_token_id;
  std::optional<QuantizationConfig> quantization;
};

// Reads `dir/config.json` (and generation_config.json for extra EOS ids). Throws Error(config)
// naming the file and field on missing/invalid fields, Error(unsupported) for unknown model types.
ModelConfig read_model_config(const std::filesystem::path& dir);
// Parses config.json text (`display_name` is used in errors).
ModelConfig parse_model_config(const std::string& json_text, const std::string& display_name);

}  // namespace exl
