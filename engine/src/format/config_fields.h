// Typed access to config.json fields with errors that name the file and the field. Internal to
// the format code (model_config.cpp, config_rope.cpp).
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "exl/kernels/rope.h"

namespace exl::format_detail {

// Parses JSON text; malformed text gives Error(config) with the file and the parser's position.
nlohmann::json parse_json_config(const std::string& text, const std::string& file);

struct Fields {
  const nlohmann::json& obj;
  std::string file;
  std::string prefix;  // "rope_scaling." etc. for nested objects, so errors name the full path

  // The value of `key` (also looked up under text_config for multimodal wrappers); nullptr if absent.
  const nlohmann::json* find(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;

  // Absent or null -> nullopt; wrong type -> Error(config). Ints accept integral floats and
  // floats accept ints (as transformers writes both).
  std::optional<int> get_int(const std::string& key) const;
  std::optional<double> get_double(const std::string& key) const;
  std::optional<bool> get_bool(const std::string& key) const;
  std::optional<std::string> get_string(const std::string& key) const;
  int require_positive(const std::string& key) const;
};

// Rotary embedding parameters from rope_theta / rope_scaling, falling back to rope_parameters
// (transformers 5.x); warns through the log when both carry a different theta.
RopeParams read_rope(const Fields& f, int head_dim, int max_position_embeddings);

}  // namespace exl::format_detail
