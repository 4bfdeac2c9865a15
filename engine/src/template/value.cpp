// Python semantics of template values: truthiness, str()/repr(), ==, ordering, float repr.
#include "template/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "template/errors.h"

namespace exl::tpl {

Value Value::undefined(std::string hint) { Value v; v.s = std::move(hint); return v; }
Value Value::none() { Value v; v.kind = Kind::none; return v; }
Value Value::boolean(bool x) { Value v; v.kind = Kind::boolean; v.b = x; return v; }
Value Value::integer(int64_t x) { Value v; v.kind = Kind::integer; v.i = x; return v; }
Value Value::floating(double x) { Value v; v.kind = Kind::floating; v.f = x; return v; }
Value Value::string(std::string x) { Value v; v.kind = Kind::string; v.s = std::move(x); return v; }
Value Value::make_list(List items) {
  Value v;
  v.kind = Kind::list;
  uint32_t inner = 0;
  for (const auto& x : items) inner = std::max(inner, x.nesting());
  if (inner + 1 > max_value_nesting) fail("value nested too deeply (more than " + std::to_string(max_value_nesting) + " levels)");
  v.nest = inner + 1;
  v.list = std::make_shared<List>(std::move(items));
  return v;
}

namespace {
// Lists, dicts and callables whose last owner is being freed, waiting to be freed by the loop in
// Value::release (see value.h).
struct Graveyard {
  std::vector<std::shared_ptr<List>> lists;
  std::vector<std::shared_ptr<Dict>> dicts;
  std::vector<std::shared_ptr<Callable>> fns;
  bool draining = false;
  ~Graveyard();
};
thread_local Graveyard t_graveyard;
thread_local bool t_graveyard_gone = false;  // values freed during thread exit, after t_graveyard
Graveyard::~Graveyard() { t_graveyard_gone = true; }

template <class T>
void park(std::shared_ptr<T>& p, std::vector<std::shared_ptr<T>>& pile) noexcept {
  if (!p) return;
  if (p.use_count() == 1) {
    try {
      pile.push_back(std::move(p));
      return;
    } catch (...) {  // out of memory: free it here (recursively) instead
    }
  }
  p.reset();
}

template <class T>
bool free_one(std::vector<std::shared_ptr<T>>& pile) noexcept {
  if (pile.empty()) return false;
  std::shared_ptr<T> p = std::move(pile.back());
  pile.pop_back();
  p.reset();  // its own values park their contents instead of recursing
  return true;
}
}  // namespace

void Value::release() noexcept {
  if (t_graveyard_gone) {
    list.reset();
    dict.reset();
    fn.reset();
    return;
  }
  Graveyard& g = t_graveyard;
  park(list, g.lists);
  park(dict, g.dicts);
  park(fn, g.fns);
  if (g.draining) return;
  g.draining = true;
  while (free_one(g.lists) || free_one(g.dicts) || free_one(g.fns)) {
  }
  g.draining = false;
  if (g.lists.capacity() > 4096) g.lists = {};
  if (g.dicts.capacity() > 4096) g.dicts = {};
  if (g.fns.capacity() > 4096) g.fns = {};
}

Value& Value::operator=(Value&& o) noexcept {
  if (this == &o) return *this;
  Value old(std::move(*this));  // the previous contents are freed through ~Value
  kind = o.kind;
  b = o.b;
  is_tuple = o.is_tuple;
  is_namespace = o.is_namespace;
  nest = o.nest;
  i = o.i;
  f = o.f;
  s = std::move(o.s);
  list = std::move(o.list);
  dict = std::move(o.dict);
  fn = std::move(o.fn);
  return *this;
}

Value& Value::operator=(const Value& o) {
  if (this != &o) *this = Value(o);
  return *this;
}

uint32_t Value::nesting() const {
  if (kind == Kind::list) return nest;
  if (kind == Kind::dict) return dict->nest;
  return 0;
}
Value Value::make_tuple(List items) {
  Value v = make_list(std::move(items));
  v.is_tuple = true;
  return v;
}
Value Value::make_dict() {
  Value v;
  v.kind = Kind::dict;
  v.dict = std::make_shared<Dict>();
  return v;
}
Value Value::callable(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn) {
  Value v;
  v.kind = Kind::callable;
  v.fn = std::make_shared<Callable>(Callable{std::move(name), std::move(fn)});
  return v;
}

double Value::as_double() const {
  switch (kind) {
    case Kind::boolean: return b ? 1.0 : 0.0;
    case Kind::integer: return double(i);
    case Kind::floating: return f;
    default: fail("expected a number, got " + type_name());
  }
}

std::string Value::type_name() const {
  switch (kind) {
    case Kind::undefined: return "undefined";
    case Kind::none: return "NoneType";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::floating: return "float";
    case Kind::string: return "str";
    case Kind::list: return is_tuple ? "tuple" : "list";
    case Kind::dict: return is_namespace ? "Namespace" : "dict";
    case Kind::callable: return "function";
  }
  return "?";
}

const Value* Dict::find(const Value& key) const {
  for (const auto& [k, v] : items)
    if (equals(k, key)) return &v;
  return nullptr;
}

const Value* Dict::find(const std::string& key) const {
  for (const auto& [k, v] : items)
    if (k.kind == Kind::string && k.s == key) return &v;
  return nullptr;
}

void Dict::set(const Value& key, Value v) {
  const uint32_t inner = std::max(key.nesting(), v.nesting());
  if (inner + 1 > max_value_nesting) fail("value nested too deeply (more than " + std::to_string(max_value_nesting) + " levels)");
  nest = std::max(nest, inner + 1);
  for (auto& [k, old] : items)
    if (equals(k, key)) { old = std::move(v); return; }
  items.emplace_back(key, std::move(v));
}

const Value* CallArgs::get(size_t index, const char* name) const {
  if (name)
    for (const auto& [k, v] : kw)
      if (k == name) return &v;
  if (index < pos.size()) return &pos[index];
  return nullptr;
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Kind::undefined: case Kind::none: return false;
    case Kind::boolean: return v.b;
    case Kind::integer: return v.i != 0;
    case Kind::floating: return v.f != 0.0;
    case Kind::string: return !v.s.empty();
    case Kind::list: return !v.list->empty();
    case Kind::dict: return v.is_namespace || !v.dict->items.empty();
    case Kind::callable: return true;
  }
  return false;
}

std::string float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0.0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci = [-]d[.ddd]e[+-]XX
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  int exp = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out = neg ? "-" : "";
  if (exp >= -5 && exp < 16) {
    // Python's repr switches to exponent notation below 1e-4 and from 1e16.
    if (exp < -4) goto scientific;
    if (exp < 0) {
      out += "0." + std::string(size_t(-exp - 1), '0') + digits;
    } else if (size_t(exp) + 1 >= digits.size()) {
      out += digits + std::string(size_t(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, size_t(exp) + 1) + "." + digits.substr(size_t(exp) + 1);
    }
    return out;
  }
scientific:
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char eb[16];
  std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return out + eb;
}

static std::string repr_string(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char q = has_single && !has_double ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == q || c == '\\') { out += '\\'; out += char(c); }
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else out += char(c);
  }
  return out + q;
}

std::string to_repr(const Value& v) {
  if (v.kind == Kind::string) return repr_string(v.s);
  return to_str(v);
}

namespace {
thread_local const char* t_stack_base = nullptr;
thread_local size_t t_stack_bytes = 0;
}  // namespace

StackBudget::StackBudget(size_t bytes) : saved_base_(t_stack_base), saved_bytes_(t_stack_bytes) {
  if (!t_stack_base) {  // nested renders (a template rendering inside one) keep the outer budget
    t_stack_base = static_cast<const char*>(__builtin_frame_address(0));
    t_stack_bytes = bytes;
  }
}

StackBudget::~StackBudget() {
  t_stack_base = saved_base_;
  t_stack_bytes = saved_bytes_;
}

void check_stack() {
  if (!t_stack_base) return;
  const char* here = static_cast<const char*>(__builtin_frame_address(0));
  // The stack grows downwards on every platform the app targets.
  if (here < t_stack_base && size_t(t_stack_base - here) > t_stack_bytes)
    fail("template nested too deeply (stack budget of " + std::to_string(t_stack_bytes >> 10) + " KiB used up)");
}

std::string to_str(const Value& v) {
  check_stack();
  switch (v.kind) {
    case Kind::undefined: return "";
    case Kind::none: return "None";
    case Kind::boolean: return v.b ? "True" : "False";
    case Kind::integer: return std::to_string(v.i);
    case Kind::floating: return float_repr(v.f);
    case Kind::string: return v.s;
    case Kind::list: {
      std::string out = v.is_tuple ? "(" : "[";
      for (size_t k = 0; k < v.list->size(); ++k) {
        if (k) out += ", ";
        out += to_repr((*v.list)[k]);
      }
      if (v.is_tuple && v.list->size() == 1) out += ",";
      return out + (v.is_tuple ? ")" : "]");
    }
    case Kind::dict: {
      if (v.is_namespace) return "<Namespace>";
      std::string out = "{";
      bool first = true;
      for (const auto& [k, x] : v.dict->items) {
        if (!first) out += ", ";
        first = false;
        out += to_repr(k) + ": " + to_repr(x);
      }
      return out + "}";
    }
    case Kind::callable: return "<function " + v.fn->name + ">";
  }
  return "";
}

bool equals(const Value& a, const Value& b) {
  check_stack();
  if (a.is_number() && b.is_number()) {
    if (a.kind != Kind::floating && b.kind != Kind::floating) {
      int64_t x = a.kind == Kind::boolean ? a.b : a.i, y = b.kind == Kind::boolean ? b.b : b.i;
      return x == y;
    }
    return a.as_double() == b.as_double();
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::undefined: case Kind::none: return true;
    case Kind::string: return a.s == b.s;
    case Kind::list: {
      if (a.list->size() != b.list->size()) return false;
      for (size_t k = 0; k < a.list->size(); ++k)
        if (!equals((*a.list)[k], (*b.list)[k])) return false;
      return true;
    }
    case Kind::dict: {
      if (a.dict == b.dict) return true;
      if (a.is_namespace || b.is_namespace) return false;
      if (a.dict->items.size() != b.dict->items.size()) return false;
      for (const auto& [k, x] : a.dict->items) {
        const Value* y = b.dict->find(k);
        if (!y || !equals(x, *y)) return false;
      }
      return true;
    }
    case Kind::callable: return a.fn == b.fn;
    default: return false;
  }
}

int compare(const Value& a, const Value& b) {
  check_stack();
  if (a.is_number() && b.is_number()) {
    if (a.kind != Kind::floating && b.kind != Kind::floating) {
      int64_t x = a.kind == Kind::boolean ? a.b : a.i, y = b.kind == Kind::boolean ? b.b : b.i;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.kind == Kind::string && b.kind == Kind::string) {
    int c = a.s.compare(b.s);  // UTF-8 byte order is code point order
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.kind == Kind::list && b.kind == Kind::list) {
    size_t n = std::min(a.list->size(), b.list->size());
    for (size_t k = 0; k < n; ++k) {
      if (equals((*a.list)[k], (*b.list)[k])) continue;
      return compare((*a.list)[k], (*b.list)[k]);
    }
    return a.list->size() < b.list->size() ? -1 : a.list->size() > b.list->size() ? 1 : 0;
  }
  fail("'<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

}  // namespace exl::tpl
