// Jinja2's built-in filters on strings and scalars as chat templates use them, with transformers'
// tojson (json.dumps with ensure_ascii=False: no HTML escaping, insertion-ordered keys); the
// table of all filters and apply_filter. Sequence filters: filters_sequence.cpp.
#include <algorithm>
#include <cmath>

#include "template/errors.h"
#include "template/filters.h"
#include "template/interpreter.h"
#include "template/strings.h"

namespace exl::tpl {
namespace filter {

const Value kNone = Value::none();

Value arg(CallArgs& a, size_t k, const char* name, const Value& def) {
  const Value* v = a.get(k, name);
  return v ? *v : def;
}

int64_t int_arg(CallArgs& a, size_t k, const char* name, int64_t def) {
  const Value* v = a.get(k, name);
  if (!v) return def;
  if (v->kind == Kind::integer) return v->i;
  if (v->kind == Kind::boolean) return v->b;
  fail(std::string("argument '") + name + "' must be an integer");
}

Value attr_path(const Value& v, const std::string& path) {
  Value cur = v;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t dot = path.find('.', pos);
    std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
    if (cur.is_undefined()) return cur;
    cur = digits && part.size() < 10 ? get_item(cur, Value::integer(std::stoll(part))) : get_item(cur, Value::string(part));
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  return cur;
}

namespace {

Value f_tojson(Interpreter&, const Value& v, CallArgs& a) {
  JsonOptions o;
  o.ensure_ascii = truthy(arg(a, 0, "ensure_ascii", Value::boolean(false)));
  const Value& indent = arg(a, 1, "indent", kNone);
  if (indent.kind == Kind::integer) {
    o.indent = int(std::clamp<int64_t>(indent.i, 0, 64));
    o.indent_str = std::string(size_t(o.indent), ' ');
  } else if (indent.is_string()) {
    o.indent = 0;
    o.indent_str = indent.s;
  }
  if (o.indent >= 0) o.item_sep = ",";
  const Value& seps = arg(a, 2, "separators", kNone);
  if (seps.is_list() && seps.list->size() == 2) {
    o.item_sep = str((*seps.list)[0]);
    o.key_sep = str((*seps.list)[1]);
  }
  o.sort_keys = truthy(arg(a, 3, "sort_keys", Value::boolean(false)));
  return Value::string(to_json(v, o));
}

Value f_length(Interpreter&, const Value& v, CallArgs&) {
  switch (v.kind) {
    case Kind::undefined: return Value::integer(0);
    case Kind::string: return Value::integer(int64_t(utf8_length(v.s)));
    case Kind::list: return Value::integer(int64_t(v.list->size()));
    case Kind::dict: return Value::integer(int64_t(v.dict->items.size()));
    default: fail("object of type '" + v.type_name() + "' has no len()");
  }
}

Value f_trim(Interpreter&, const Value& v, CallArgs& a) {
  const Value& chars = arg(a, 0, "chars", kNone);
  return Value::string(py_strip(str(v), chars.is_string() ? &chars.s : nullptr, true, true));
}
Value f_upper(Interpreter&, const Value& v, CallArgs&) { return Value::string(py_upper(str(v))); }
Value f_lower(Interpreter&, const Value& v, CallArgs&) { return Value::string(py_lower(str(v))); }
Value f_title(Interpreter&, const Value& v, CallArgs&) { return Value::string(jinja_title(str(v))); }
Value f_capitalize(Interpreter&, const Value& v, CallArgs&) { return Value::string(py_capitalize(str(v))); }
Value f_string(Interpreter&, const Value& v, CallArgs&) { return Value::string(str(v)); }
Value f_safe(Interpreter&, const Value& v, CallArgs&) { return v; }

Value f_replace(Interpreter& in, const Value& v, CallArgs& a) {
  return Value::string(py_replace(str(v), str(arg(a, 0, "old", kNone)), str(arg(a, 1, "new", kNone)),
                                  int_arg(a, 2, "count", -1), in));
}

Value f_default(Interpreter&, const Value& v, CallArgs& a) {
  bool boolean = truthy(arg(a, 1, "boolean", Value::boolean(false)));
  if (v.is_undefined() || (boolean && !truthy(v))) return arg(a, 0, "default_value", Value::string(""));
  return v;
}

Value f_int(Interpreter&, const Value& v, CallArgs& a) {
  int64_t def = int_arg(a, 0, "default", 0);
  switch (v.kind) {
    case Kind::integer: return v;
    case Kind::boolean: return Value::integer(v.b);
    case Kind::floating:
      if (!std::isfinite(v.f) || std::fabs(v.f) > 9.2e18) return Value::integer(def);
      return Value::integer(int64_t(v.f));
    case Kind::string: {
      std::string s = py_strip(v.s, nullptr, true, true);
      try {
        size_t used = 0;
        long long x = std::stoll(s, &used, 10);
        if (used == s.size()) return Value::integer(x);
        double d = std::stod(s, &used);
        if (used == s.size() && std::isfinite(d) && std::fabs(d) < 9.2e18) return Value::integer(int64_t(d));
      } catch (...) {
      }
      return Value::integer(def);
    }
    default: return Value::integer(def);
  }
}

Value f_float(Interpreter&, const Value& v, CallArgs& a) {
  const Value& def = arg(a, 0, "default", Value::floating(0.0));
  if (v.is_number()) return Value::floating(v.as_double());
  if (v.is_string()) {
    try {
      size_t used = 0;
      std::string s = py_strip(v.s, nullptr, true, true);
      double d = std::stod(s, &used);
      if (used == s.size()) return Value::floating(d);
    } catch (...) {
    }
  }
  return def.is_number() ? Value::floating(def.as_double()) : def;
}

Value f_escape(Interpreter&, const Value& v, CallArgs&) {
  std::string out;
  for (char c : str(v)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return Value::string(std::move(out));
}

Value f_indent(Interpreter& in, const Value& v, CallArgs& a) {
  const Value& width = arg(a, 0, "width", Value::integer(4));
  bool first = truthy(arg(a, 1, "first", Value::boolean(false)));
  bool blank = truthy(arg(a, 2, "blank", Value::boolean(false)));
  std::string ind = width.is_string() ? width.s : std::string(size_t(std::clamp<int64_t>(width.i, 0, 256)), ' ');
  std::vector<std::string> lines = py_splitlines(str(v) + "\n");
  std::string out;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (k > 0) out += "\n";
    bool pad = k == 0 ? first : (blank || !lines[k].empty());
    if (pad) out += ind;
    out += lines[k];
    in.check_size(out.size());
  }
  return Value::string(std::move(out));
}

Value f_abs(Interpreter&, const Value& v, CallArgs&) {
  if (v.kind == Kind::integer) {
    if (v.i == INT64_MIN) fail("integer overflow");
    return Value::integer(v.i < 0 ? -v.i : v.i);
  }
  if (v.kind == Kind::boolean) return Value::integer(v.b);
  if (v.kind == Kind::floating) return Value::floating(std::fabs(v.f));
  fail("bad operand type for abs(): '" + v.type_name() + "'");
}

Value f_round(Interpreter&, const Value& v, CallArgs& a) {
  int64_t precision = std::clamp<int64_t>(int_arg(a, 0, "precision", 0), -20, 20);
  std::string method = str(arg(a, 1, "method", Value::string("common")));
  double x = v.as_double(), scale = std::pow(10.0, double(precision));
  double y = x * scale;
  if (method == "common") y = std::round(y);
  else if (method == "ceil") y = std::ceil(y);
  else if (method == "floor") y = std::floor(y);
  else fail("method must be common, ceil or floor");
  return Value::floating(y / scale);
}

Value f_wordcount(Interpreter&, const Value& v, CallArgs&) {
  int64_t n = 0;
  bool in_word = false;
  for (char32_t c : utf8_decode(str(v))) {
    bool w = (c >= '0' && c <= '9') || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c > 0x7F;
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value::integer(n);
}

Value f_center(Interpreter&, const Value& v, CallArgs& a) {
  std::string s = str(v);
  int64_t width = std::min<int64_t>(int_arg(a, 0, "width", 80), 100000), len = int64_t(utf8_length(s));
  if (width <= len) return Value::string(s);
  int64_t pad = width - len, left = pad / 2 + (pad & width & 1);
  return Value::string(std::string(size_t(left), ' ') + s + std::string(size_t(pad - left), ' '));
}

}  // namespace

const Table& table() {
  static const Table t = [] {
    Table all = {
        {"tojson", f_tojson}, {"length", f_length}, {"count", f_length}, {"trim", f_trim},
        {"upper", f_upper}, {"lower", f_lower}, {"title", f_title}, {"capitalize", f_capitalize},
        {"string", f_string}, {"safe", f_safe}, {"replace", f_replace}, {"default", f_default},
        {"d", f_default}, {"int", f_int}, {"float", f_float}, {"escape", f_escape}, {"e", f_escape},
        {"forceescape", f_escape}, {"indent", f_indent}, {"abs", f_abs}, {"round", f_round},
        {"wordcount", f_wordcount}, {"center", f_center},
    };
    add_sequence_filters(all);
    return all;
  }();
  return t;
}

}  // namespace filter

Value apply_filter(Interpreter& in, const std::string& name, const Value& input, CallArgs& args) {
  in.step();
  auto it = filter::table().find(name);
  if (it == filter::table().end()) fail("no filter named '" + name + "'");
  return it->second(in, input, args);
}

}  // namespace exl::tpl
