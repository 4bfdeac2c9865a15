// Field access and RoPE parameters for config.json (spec §1.2 and §4.4).
#include "config_fields.h"

#include <cmath>
#include <limits>

#include "exl/error.h"
#include "exl/log.h"

namespace exl::format_detail {

using json = nlohmann::json;

json parse_json_config(const std::string& text, const std::string& file) {
  try {
    json j = json::parse(text);
    if (!j.is_object()) throw Error(ErrorKind::config, "top level is not a JSON object", file);
    return j;
  } catch (const json::parse_error& e) {
    throw Error(ErrorKind::config, "malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what(), file);
  }
}

const json* Fields::find(const std::string& key) const {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it != obj.end()) return &*it;
  if (prefix.empty()) {
    auto tc = obj.find("text_config");
    if (tc != obj.end() && tc->is_object()) {
      auto it2 = tc->find(key);
      if (it2 != tc->end()) return &*it2;
    }
  }
  return nullptr;
}

void Fields::fail(const std::string& key, const std::string& what) const {
  throw Error(ErrorKind::config, what, file, prefix + key);
}

std::optional<int> Fields::get_int(const std::string& key) const {
  const json* v = find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  double d = 0.0;
  if (v->is_number_integer()) {
    const auto i = v->get<std::int64_t>();
    if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max()) fail(key, "integer out of range");
    return static_cast<int>(i);
  }
  if (v->is_number_unsigned()) fail(key, "integer out of range");
  if (v->is_number_float()) {
    d = v->get<double>();
    if (std::floor(d) != d || std::fabs(d) > 2147483647.0) fail(key, "must be an integer");
    return static_cast<int>(d);
  }
  fail(key, "must be an integer");
}

std::optional<double> Fields::get_double(const std::string& key) const {
  const json* v = find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_number()) fail(key, "must be a number");
  return v->get<double>();
}

std::optional<bool> Fields::get_bool(const std::string& key) const {
  const json* v = find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_boolean()) fail(key, "must be true or false");
  return v->get<bool>();
}

std::optional<std::string> Fields::get_string(const std::string& key) const {
  const json* v = find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_string()) fail(key, "must be a string");
  return v->get<std::string>();
}

int Fields::require_positive(const std::string& key) const {
  const auto v = get_int(key);
  if (!v) fail(key, "required field is missing");
  if (*v <= 0) fail(key, "must be positive, got " + std::to_string(*v));
  return *v;
}

namespace {

float positive_float(const Fields& s, const std::string& key, std::optional<double> fallback = std::nullopt) {
  auto v = s.get_double(key);
  if (!v) v = fallback;
  if (!v) s.fail(key, "required by this rope type");
  if (!(*v > 0.0) || !std::isfinite(*v)) s.fail(key, "must be positive");
  return static_cast<float>(*v);
}

std::vector<float> factor_list(const Fields& s, const std::string& key) {
  const json* v = s.find(key);
  if (v == nullptr || !v->is_array() || v->empty()) s.fail(key, "required by longrope: a list of positive numbers");
  std::vector<float> out;
  for (const json& x : *v) {
    if (!x.is_number() || !(x.get<double>() > 0.0)) s.fail(key, "must hold positive numbers");
    out.push_back(static_cast<float>(x.get<double>()));
  }
  return out;
}

// LongRoPE (Phi-3): short and long per-frequency factors; the original context from the top
// level (Phi-3 writes it there, and transformers gives it priority) or the scaling object; the
// attention factor as written or derived from factor (default max / original context).
void read_longrope(const Fields& s, const Fields& top, RopeParams& p) {
  p.scaling = RopeScaling::longrope;
  p.longrope_short = factor_list(s, "short_factor");
  p.longrope_long = factor_list(s, "long_factor");
  if (p.longrope_short.size() != p.longrope_long.size())
    s.fail("long_factor", "has " + std::to_string(p.longrope_long.size()) + " entries, short_factor " +
                              std::to_string(p.longrope_short.size()));
  auto orig = top.get_int("original_max_position_embeddings");
  if (!orig) orig = s.get_int("original_max_position_embeddings");
  p.original_max_position = orig.value_or(p.max_seq_len);
  if (p.original_max_position <= 0) top.fail("original_max_position_embeddings", "must be positive");
  const double factor = s.get_double("factor").value_or(double(p.max_seq_len) / double(p.original_max_position));
  if (const auto af = s.get_double("attention_factor")) {
    if (!(*af > 0.0)) s.fail("attention_factor", "must be positive");
    p.attention_factor = static_cast<float>(*af);
  } else {
    p.attention_factor = factor <= 1.0 ? 1.0f
                                       : static_cast<float>(std::sqrt(1.0 + std::log(factor) /
                                                                                std::log(double(p.original_max_position))));
  }
}

void read_scaling(const Fields& s, const Fields& top, RopeParams& p) {
  const auto rope_type = s.get_string("rope_type");
  const auto legacy_type = s.get_string("type");
  if (rope_type && legacy_type && *rope_type != *legacy_type)
    s.fail("rope_type", "rope_type '" + *rope_type + "' and type '" + *legacy_type + "' disagree");
  const std::string type = rope_type ? *rope_type : legacy_type.value_or("default");
  const std::string key = rope_type ? "rope_type" : "type";

  if (type == "default" || type.empty()) return;
  if (type == "linear") {
    p.scaling = RopeScaling::linear;
    p.factor = positive_float(s, "factor");
  } else if (type == "llama3") {
    p.scaling = RopeScaling::llama3;
    p.factor = positive_float(s, "factor");
    p.low_freq_factor = positive_float(s, "low_freq_factor");
    p.high_freq_factor = positive_float(s, "high_freq_factor");
    if (p.high_freq_factor <= p.low_freq_factor) s.fail("high_freq_factor", "must exceed low_freq_factor");
    p.original_max_position = static_cast<int>(positive_float(s, "original_max_position_embeddings"));
  } else if (type == "yarn") {
    p.scaling = RopeScaling::yarn;
    p.factor = positive_float(s, "factor");
    auto orig = s.get_int("original_max_position_embeddings");
    if (!orig) orig = top.get_int("original_max_position_embeddings");
    if (!orig) s.fail("original_max_position_embeddings", "required by this rope type");
    if (*orig <= 0) s.fail("original_max_position_embeddings", "must be positive");
    p.original_max_position = *orig;
    p.yarn_beta_fast = static_cast<float>(s.get_double("beta_fast").value_or(32.0));
    p.yarn_beta_slow = static_cast<float>(s.get_double("beta_slow").value_or(1.0));
  } else if (type == "longrope" || type == "su") {
    read_longrope(s, top, p);
  } else {
    throw Error(ErrorKind::unsupported, "rope type '" + type + "' is not supported (default, linear, llama3, yarn, longrope)",
                s.file, s.prefix + key);
  }
}

}  // namespace

RopeParams read_rope(const Fields& f, int head_dim, int max_position_embeddings) {
  RopeParams p;
  p.head_dim = head_dim;
  p.max_seq_len = max_position_embeddings;
  p.style = RopeStyle::neox;

  const json* params = f.find("rope_parameters");
  if (params != nullptr && !params->is_null() && !params->is_object()) f.fail("rope_parameters", "must be an object");
  const bool has_params = params != nullptr && params->is_object();
  const Fields pf{has_params ? *params : f.obj, f.file, "rope_parameters."};

  const auto top_theta = f.get_double("rope_theta");
  const auto nested_theta = has_params ? pf.get_double("rope_theta") : std::nullopt;
  if (top_theta && nested_theta && *top_theta != *nested_theta)
    log_warning(f.file + ": rope_theta " + std::to_string(*top_theta) + " differs from rope_parameters.rope_theta " +
                std::to_string(*nested_theta) + "; using the top-level value");
  const double theta = top_theta ? *top_theta : nested_theta.value_or(10000.0);
  if (!(theta > 0.0) || !std::isfinite(theta)) f.fail(top_theta ? "rope_theta" : "rope_parameters.rope_theta",
                                                      "must be positive");
  p.theta = static_cast<float>(theta);

  // Partial rotary (Phi-3, Phi-4-mini): top level, or inside rope_parameters (transformers 5.x).
  auto prf = f.get_double("partial_rotary_factor");
  if (!prf && has_params) prf = pf.get_double("partial_rotary_factor");
  if (prf) {
    if (!(*prf > 0.0 && *prf <= 1.0)) f.fail("partial_rotary_factor", "must be in (0, 1]");
    const int rd = static_cast<int>(head_dim * *prf);
    if (rd < 2 || rd % 2 != 0) f.fail("partial_rotary_factor", "gives an odd or empty rotary dimension " + std::to_string(rd));
    if (rd < head_dim) p.rotary_dim = rd;
  }

  const json* scaling = f.find("rope_scaling");
  if (scaling != nullptr && !scaling->is_null()) {
    if (!scaling->is_object()) f.fail("rope_scaling", "must be an object or null");
    read_scaling(Fields{*scaling, f.file, "rope_scaling."}, f, p);
  } else if (has_params) {
    read_scaling(pf, f, p);
  }
  const std::size_t pairs = std::size_t(p.rotary_dim > 0 ? p.rotary_dim : head_dim) / 2;
  if (p.scaling == RopeScaling::longrope && p.longrope_short.size() != pairs)
    f.fail(scaling != nullptr && !scaling->is_null() ? "rope_scaling.short_factor" : "rope_parameters.short_factor",
           "has " + std::to_string(p.longrope_short.size()) + " entries; the rotary dimension needs " + std::to_string(pairs));
  return p;
}

}  // namespace exl::format_detail
