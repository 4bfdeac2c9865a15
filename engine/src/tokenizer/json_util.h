// Typed access to tokenizer.json fields: every failure is an exl::Error(tokenizer) naming the file
// and the JSON path of the field (e.g. "model.merges[12]"), never an nlohmann exception or abort.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "exl/error.h"

namespace exl::tok {

using json = nlohmann::json;

struct JsonCtx {
  std::string file;
  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw Error(ErrorKind::tokenizer, msg, file, path);
  }
};

inline std::string join_path(const std::string& base, const std::string& key) {
  return base.empty() ? key : base + "." + key;
}

inline const json& want_object(const JsonCtx& c, const json& j, const std::string& path) {
  if (!j.is_object()) c.fail(path, "expected an object");
  return j;
}

// Member or nullptr when absent or null.
inline const json* member(const JsonCtx& c, const json& obj, const char* key, const std::string& path) {
  want_object(c, obj, path);
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

inline const json& required(const JsonCtx& c, const json& obj, const char* key, const std::string& path) {
  const json* m = member(c, obj, key, path);
  if (!m) c.fail(join_path(path, key), "missing field");
  return *m;
}

inline std::string as_string(const JsonCtx& c, const json& j, const std::string& path) {
  if (!j.is_string()) c.fail(path, "expected a string");
  return j.get<std::string>();
}

inline std::string opt_string(const JsonCtx& c, const json& obj, const char* key, const std::string& path,
                              const std::string& def = {}) {
  const json* m = member(c, obj, key, path);
  return m ? as_string(c, *m, join_path(path, key)) : def;
}

inline bool opt_bool(const JsonCtx& c, const json& obj, const char* key, const std::string& path, bool def) {
  const json* m = member(c, obj, key, path);
  if (!m) return def;
  if (!m->is_boolean()) c.fail(join_path(path, key), "expected a boolean");
  return m->get<bool>();
}

inline long long as_int(const JsonCtx& c, const json& j, const std::string& path, long long lo, long long hi) {
  if (!j.is_number_integer()) c.fail(path, "expected an integer");
  long long v = j.is_number_unsigned() ? static_cast<long long>(std::min<unsigned long long>(
                                             j.get<unsigned long long>(), 1ULL << 62))
                                       : j.get<long long>();
  if (v < lo || v > hi) c.fail(path, "integer out of range: " + std::to_string(v));
  return v;
}

inline const json& as_array(const JsonCtx& c, const json& j, const std::string& path) {
  if (!j.is_array()) c.fail(path, "expected an array");
  return j;
}

inline std::string idx_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

}  // namespace exl::tok
