// Jinja2's built-in filters and tests as chat templates use them, with transformers' tojson
// (json.dumps with ensure_ascii=False: no HTML escaping, insertion-ordered keys).
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "template/errors.h"
#include "template/interpreter.h"
#include "template/strings.h"

namespace exl::tpl {
namespace {

using FilterFn = Value (*)(Interpreter&, const Value&, CallArgs&);
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
std::string str(const Value& v) { return to_str(v); }

// Attribute path "a.b.0" as Jinja's make_attrgetter resolves it.
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

Value f_list(Interpreter&, const Value& v, CallArgs&) { return Value::make_list(iterate(v)); }

Value f_join(Interpreter& in, const Value& v, CallArgs& a) {
  std::string sep = str(arg(a, 0, "d", Value::string("")));
  const Value& attribute = arg(a, 1, "attribute", kNone);
  std::string out;
  bool first = true;
  for (const auto& x : iterate(v)) {
    if (!first) out += sep;
    first = false;
    out += str(attribute.is_none() ? x : attr_path(x, str(attribute)));
    in.check_size(out.size());
  }
  return Value::string(std::move(out));
}

Value f_first(Interpreter&, const Value& v, CallArgs&) {
  List items = iterate(v);
  return items.empty() ? Value::undefined("first") : items.front();
}
Value f_last(Interpreter&, const Value& v, CallArgs&) {
  List items = iterate(v);
  return items.empty() ? Value::undefined("last") : items.back();
}

Value f_map(Interpreter& in, const Value& v, CallArgs& a) {
  List out;
  if (const Value* attribute = a.get(size_t(-1), "attribute")) {
    const Value& def = arg(a, size_t(-1), "default", Value::undefined());
    for (const auto& x : iterate(v)) {
      Value r = attr_path(x, str(*attribute));
      out.push_back(r.is_undefined() && !def.is_undefined() ? def : r);
    }
    return Value::make_list(std::move(out));
  }
  if (a.pos.empty()) fail("map requires a filter name or attribute=");
  std::string name = str(a.pos[0]);
  CallArgs rest;
  rest.pos.assign(a.pos.begin() + 1, a.pos.end());
  rest.kw = a.kw;
  for (const auto& x : iterate(v)) out.push_back(apply_filter(in, name, x, rest));
  return Value::make_list(std::move(out));
}

// select/reject/selectattr/rejectattr
Value select_impl(Interpreter& in, const Value& v, CallArgs& a, bool by_attr, bool keep) {
  size_t k = 0;
  std::string attribute;
  if (by_attr) {
    if (a.pos.empty()) fail("selectattr needs an attribute name");
    attribute = str(a.pos[k++]);
  }
  std::string test = k < a.pos.size() ? str(a.pos[k++]) : "";
  CallArgs rest;
  rest.pos.assign(a.pos.begin() + long(std::min(k, a.pos.size())), a.pos.end());
  rest.kw = a.kw;
  List out;
  for (const auto& x : iterate(v)) {
    Value subject = by_attr ? attr_path(x, attribute) : x;
    bool ok = test.empty() ? truthy(subject) : apply_test(in, test, subject, rest);
    if (ok == keep) out.push_back(x);
  }
  return Value::make_list(std::move(out));
}
Value f_select(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, true); }
Value f_reject(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, false); }
Value f_selectattr(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, true); }
Value f_rejectattr(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, false); }

Value f_items(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_undefined()) return Value::make_list();
  if (!v.is_dict() || v.is_namespace) fail("items filter needs a mapping");
  List out;
  for (const auto& [k, x] : v.dict->items) out.push_back(Value::make_tuple({k, x}));
  return Value::make_list(std::move(out));
}

Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::string(py_lower(v.s));
  return v;
}

Value f_dictsort(Interpreter&, const Value& v, CallArgs& a) {
  bool cs = truthy(arg(a, 0, "case_sensitive", Value::boolean(false)));
  bool by_value = str(arg(a, 1, "by", Value::string("key"))) == "value";
  bool reverse = truthy(arg(a, 2, "reverse", Value::boolean(false)));
  if (!v.is_dict()) fail("dictsort needs a mapping");
  List out;
  for (const auto& [k, x] : v.dict->items) out.push_back(Value::make_tuple({k, x}));
  std::stable_sort(out.begin(), out.end(), [&](const Value& l, const Value& r) {
    size_t i = by_value ? 1 : 0;
    int c = compare(sort_key((*l.list)[i], cs), sort_key((*r.list)[i], cs));
    return reverse ? c > 0 : c < 0;
  });
  return Value::make_list(std::move(out));
}

Value f_sort(Interpreter&, const Value& v, CallArgs& a) {
  bool reverse = truthy(arg(a, 0, "reverse", Value::boolean(false)));
  bool cs = truthy(arg(a, 1, "case_sensitive", Value::boolean(false)));
  const Value& attribute = arg(a, 2, "attribute", kNone);
  List out = iterate(v);
  std::stable_sort(out.begin(), out.end(), [&](const Value& l, const Value& r) {
    Value x = attribute.is_none() ? l : attr_path(l, str(attribute));
    Value y = attribute.is_none() ? r : attr_path(r, str(attribute));
    int c = compare(sort_key(x, cs), sort_key(y, cs));
    return reverse ? c > 0 : c < 0;
  });
  return Value::make_list(std::move(out));
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

Value f_unique(Interpreter&, const Value& v, CallArgs& a) {
  bool cs = truthy(arg(a, 0, "case_sensitive", Value::boolean(false)));
  List out;
  for (const auto& x : iterate(v)) {
    bool seen = false;
    for (const auto& y : out) seen = seen || equals(sort_key(x, cs), sort_key(y, cs));
    if (!seen) out.push_back(x);
  }
  return Value::make_list(std::move(out));
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

Value f_reverse(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_string()) {
    std::u32string u = utf8_decode(v.s);
    std::reverse(u.begin(), u.end());
    return Value::string(utf8_encode(u));
  }
  List out = iterate(v);
  std::reverse(out.begin(), out.end());
  return Value::make_list(std::move(out));
}

Value f_batch(Interpreter&, const Value& v, CallArgs& a) {
  int64_t n = int_arg(a, 0, "linecount", 1);
  if (n <= 0) fail("batch size must be positive");
  const Value* fill = a.get(1, "fill_with");
  List out, cur;
  for (const auto& x : iterate(v)) {
    cur.push_back(x);
    if (int64_t(cur.size()) == n) { out.push_back(Value::make_list(std::move(cur))); cur.clear(); }
  }
  if (!cur.empty()) {
    while (fill && int64_t(cur.size()) < n) cur.push_back(*fill);
    out.push_back(Value::make_list(std::move(cur)));
  }
  return Value::make_list(std::move(out));
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

Value minmax(const Value& v, CallArgs& a, bool want_max) {
  bool cs = truthy(arg(a, 0, "case_sensitive", Value::boolean(false)));
  const Value& attribute = arg(a, 1, "attribute", kNone);
  List items = iterate(v);
  if (items.empty()) return Value::undefined("min");
  size_t best = 0;
  for (size_t k = 1; k < items.size(); ++k) {
    Value x = attribute.is_none() ? items[k] : attr_path(items[k], str(attribute));
    Value y = attribute.is_none() ? items[best] : attr_path(items[best], str(attribute));
    int c = compare(sort_key(x, cs), sort_key(y, cs));
    if (want_max ? c > 0 : c < 0) best = k;
  }
  return items[best];
}
Value f_min(Interpreter&, const Value& v, CallArgs& a) { return minmax(v, a, false); }
Value f_max(Interpreter&, const Value& v, CallArgs& a) { return minmax(v, a, true); }

Value f_sum(Interpreter& in, const Value& v, CallArgs& a) {
  const Value& attribute = arg(a, 0, "attribute", kNone);
  Value total = arg(a, 1, "start", Value::integer(0));
  for (const auto& x : iterate(v))
    total = binary_op("+", total, attribute.is_none() ? x : attr_path(x, str(attribute)), in);
  return total;
}

Value f_center(Interpreter&, const Value& v, CallArgs& a) {
  std::string s = str(v);
  int64_t width = std::min<int64_t>(int_arg(a, 0, "width", 80), 100000), len = int64_t(utf8_length(s));
  if (width <= len) return Value::string(s);
  int64_t pad = width - len, left = pad / 2 + (pad & width & 1);
  return Value::string(std::string(size_t(left), ' ') + s + std::string(size_t(pad - left), ' '));
}

const std::unordered_map<std::string, FilterFn>& filters() {
  static const std::unordered_map<std::string, FilterFn> table = {
      {"tojson", f_tojson}, {"length", f_length}, {"count", f_length}, {"trim", f_trim},
      {"upper", f_upper}, {"lower", f_lower}, {"title", f_title}, {"capitalize", f_capitalize},
      {"string", f_string}, {"safe", f_safe}, {"replace", f_replace}, {"default", f_default},
      {"d", f_default}, {"int", f_int}, {"float", f_float}, {"list", f_list}, {"join", f_join},
      {"first", f_first}, {"last", f_last}, {"map", f_map}, {"select", f_select},
      {"reject", f_reject}, {"selectattr", f_selectattr}, {"rejectattr", f_rejectattr},
      {"items", f_items}, {"dictsort", f_dictsort}, {"sort", f_sort}, {"escape", f_escape},
      {"e", f_escape}, {"forceescape", f_escape}, {"indent", f_indent}, {"unique", f_unique},
      {"abs", f_abs}, {"round", f_round}, {"reverse", f_reverse}, {"batch", f_batch},
      {"wordcount", f_wordcount}, {"min", f_min}, {"max", f_max}, {"sum", f_sum},
      {"center", f_center},
  };
  return table;
}

}  // namespace

Value apply_filter(Interpreter& in, const std::string& name, const Value& input, CallArgs& args) {
  in.step();
  auto it = filters().find(name);
  if (it == filters().end()) fail("no filter named '" + name + "'");
  return it->second(in, input, args);
}

bool apply_test(Interpreter& in, const std::string& name, const Value& v, CallArgs& a) {
  in.step();
  auto other = [&]() -> const Value& {
    const Value* x = a.get(0, nullptr);
    if (!x) fail("test '" + name + "' needs an argument");
    return *x;
  };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict() && !v.is_namespace;
  if (name == "iterable") return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.is_namespace);
  if (name == "sequence") return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.is_namespace);
  if (name == "number") return v.is_number();
  if (name == "integer") return v.kind == Kind::integer;
  if (name == "float") return v.kind == Kind::floating;
  if (name == "boolean") return v.kind == Kind::boolean;
  if (name == "true") return v.kind == Kind::boolean && v.b;
  if (name == "false") return v.kind == Kind::boolean && !v.b;
  if (name == "callable") return v.kind == Kind::callable;
  if (name == "lower") return v.is_string() && py_lower(v.s) == v.s;
  if (name == "upper") return v.is_string() && py_upper(v.s) == v.s;
  if (name == "odd" || name == "even") {
    if (v.kind != Kind::integer) fail("test '" + name + "' needs an integer");
    return (v.i % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    const Value& d = other();
    if (v.kind != Kind::integer || d.kind != Kind::integer) fail("divisibleby needs integers");
    if (d.i == 0) fail("integer division or modulo by zero");
    return d.i == -1 || v.i % d.i == 0;
  }
  if (name == "equalto" || name == "eq" || name == "==") return equals(v, other());
  if (name == "ne" || name == "!=") return !equals(v, other());
  if (name == "lt" || name == "lessthan" || name == "<") return compare(v, other()) < 0;
  if (name == "gt" || name == "greaterthan" || name == ">") return compare(v, other()) > 0;
  if (name == "le" || name == "<=") return compare(v, other()) <= 0;
  if (name == "ge" || name == ">=") return compare(v, other()) >= 0;
  if (name == "in") return contains(other(), v);
  if (name == "sameas") {
    const Value& o = other();
    if (v.kind != o.kind) return false;
    if (v.is_list()) return v.list == o.list;
    if (v.is_dict()) return v.dict == o.dict;
    return equals(v, o);
  }
  if (name == "filter") return filters().count(str(other())) > 0;
  if (name == "test") return true;
  fail("no test named '" + name + "'");
}

}  // namespace exl::tpl
