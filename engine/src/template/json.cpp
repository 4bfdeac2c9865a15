// JSON in and out of template values: from_json keeps key order; to_json reproduces Python's
// json.dumps(ensure_ascii=False) byte for byte (separators, indent, float repr, escapes).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "template/errors.h"
#include "template/value.h"

namespace exl::tpl {

static Value from_json_at(const nlohmann::ordered_json& j, uint32_t depth);

Value from_json(const nlohmann::ordered_json& j) { return from_json_at(j, 0); }

static Value from_json_at(const nlohmann::ordered_json& j, uint32_t depth) {
  if (depth > max_value_nesting) fail("JSON input nested too deeply");
  auto from_json = [depth](const nlohmann::ordered_json& x) { return from_json_at(x, depth + 1); };
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return Value::integer(int64_t(j.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: return Value::floating(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List items;
      items.reserve(j.size());
      for (const auto& x : j) items.push_back(from_json(x));
      return Value::make_list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Value d = Value::make_dict();
      for (auto it = j.begin(); it != j.end(); ++it) {
        Value v = from_json(it.value());
        d.dict->nest = std::max(d.dict->nest, v.nesting() + 1);
        d.dict->items.emplace_back(Value::string(it.key()), std::move(v));
      }
      if (d.dict->nest > max_value_nesting) fail("JSON input nested too deeply");
      return d;
    }
    default: return Value::none();
  }
}

static void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  size_t k = 0;
  while (k < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[k]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || (ensure_ascii && c >= 0x80)) {
          if (c >= 0x80) {
            // Decode one code point and write \uXXXX (surrogate pairs above the BMP).
            std::u32string cp = utf8_decode(s.substr(k, 4));
            char32_t u = cp.empty() ? 0xFFFD : cp[0];
            size_t len = u < 0x80 ? 1 : u < 0x800 ? 2 : u < 0x10000 ? 3 : 4;
            char b[16];
            if (u >= 0x10000) {
              char32_t v = u - 0x10000;
              std::snprintf(b, sizeof b, "\\u%04x\\u%04x", unsigned(0xD800 + (v >> 10)),
                            unsigned(0xDC00 + (v & 0x3FF)));
            } else {
              std::snprintf(b, sizeof b, "\\u%04x", unsigned(u));
            }
            out += b;
            k += len;
            continue;
          }
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", unsigned(c));
          out += b;
        } else {
          out += char(c);
        }
    }
    ++k;
  }
  out += '"';
}

static void json_value(std::string& out, const Value& v, const JsonOptions& o, int depth) {
  if (depth > 256) fail("tojson: nesting too deep");
  auto newline = [&](int level) {
    out += '\n';
    for (int k = 0; k < level; ++k) out += o.indent_str;
  };
  bool pretty = o.indent >= 0;
  switch (v.kind) {
    case Kind::none: out += "null"; return;
    case Kind::boolean: out += v.b ? "true" : "false"; return;
    case Kind::integer: out += std::to_string(v.i); return;
    case Kind::floating:
      if (std::isnan(v.f)) out += "NaN";
      else if (std::isinf(v.f)) out += v.f > 0 ? "Infinity" : "-Infinity";
      else out += float_repr(v.f);
      return;
    case Kind::string: json_string(out, v.s, o.ensure_ascii); return;
    case Kind::list: {
      if (v.list->empty()) { out += "[]"; return; }
      out += '[';
      for (size_t k = 0; k < v.list->size(); ++k) {
        if (k) out += o.item_sep;
        if (pretty) newline(depth + 1);
        json_value(out, (*v.list)[k], o, depth + 1);
      }
      if (pretty) newline(depth);
      out += ']';
      return;
    }
    case Kind::dict: {
      if (v.is_namespace) fail("Object of type Namespace is not JSON serializable");
      if (v.dict->items.empty()) { out += "{}"; return; }
      std::vector<const std::pair<Value, Value>*> items;
      for (const auto& kv : v.dict->items) items.push_back(&kv);
      if (o.sort_keys)
        std::stable_sort(items.begin(), items.end(),
                         [](auto* a, auto* b) { return compare(a->first, b->first) < 0; });
      out += '{';
      bool first = true;
      for (const auto* kv : items) {
        if (!first) out += o.item_sep;
        first = false;
        if (pretty) newline(depth + 1);
        const Value& key = kv->first;
        if (key.kind == Kind::string) json_string(out, key.s, o.ensure_ascii);
        else if (key.kind == Kind::none) out += "\"null\"";
        else if (key.kind == Kind::boolean) out += key.b ? "\"true\"" : "\"false\"";
        else if (key.kind == Kind::integer || key.kind == Kind::floating) out += '"' + to_str(key) + '"';
        else fail("keys must be str, int, float, bool or None, not " + key.type_name());
        out += o.key_sep;
        json_value(out, kv->second, o, depth + 1);
      }
      if (pretty) newline(depth);
      out += '}';
      return;
    }
    default: fail("Object of type " + v.type_name() + " is not JSON serializable");
  }
}

std::string to_json(const Value& v, const JsonOptions& options) {
  std::string out;
  json_value(out, v, options, 0);
  return out;
}

// ---- UTF-8 ----

std::u32string utf8_decode(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  size_t k = 0;
  while (k < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[k]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || k + size_t(len) > s.size()) {
      out += char32_t(0xDC00 + c);  // invalid byte: keep it (surrogateescape-like)
      ++k;
      continue;
    }
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    bool ok = true;
    for (int m = 1; m < len; ++m) {
      unsigned char d = static_cast<unsigned char>(s[k + size_t(m)]);
      if ((d >> 6) != 2) { ok = false; break; }
      cp = (cp << 6) | (d & 0x3F);
    }
    if (!ok) {
      out += char32_t(0xDC00 + c);
      ++k;
      continue;
    }
    out += cp;
    k += size_t(len);
  }
  return out;
}

void utf8_append(std::string& out, char32_t c) {
  if (c >= 0xDC80 && c <= 0xDCFF) { out += char(c - 0xDC00); return; }  // invalid byte kept
  if (c < 0x80) out += char(c);
  else if (c < 0x800) { out += char(0xC0 | (c >> 6)); out += char(0x80 | (c & 0x3F)); }
  else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12)); out += char(0x80 | ((c >> 6) & 0x3F)); out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18)); out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F)); out += char(0x80 | (c & 0x3F));
  }
}

std::string utf8_encode(const std::u32string& s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) utf8_append(out, c);
  return out;
}

size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

bool is_py_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

}  // namespace exl::tpl
