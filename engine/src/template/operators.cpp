// Python operators on template values: arithmetic (ints, floats, bools as ints), string and list
// concatenation and repetition, comparisons, `in`, iteration, item lookup and slicing.
#include <cmath>
#include <optional>

#include "template/errors.h"
#include "template/interpreter.h"

namespace exl::tpl {
namespace {

bool is_int(const Value& v) { return v.kind == Kind::integer || v.kind == Kind::boolean; }
int64_t int_of(const Value& v) { return v.kind == Kind::boolean ? int64_t(v.b) : v.i; }

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined() || b.is_undefined())
    fail("'" + (a.is_undefined() ? a.s : b.s) + "' is undefined");
  fail("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
}

Value repeat(const Value& seq, int64_t n, Interpreter& in) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    in.check_size(seq.s.size() * size_t(n > 0 ? n : 0));
    std::string out;
    for (int64_t k = 0; k < n; ++k) out += seq.s;
    return Value::string(std::move(out));
  }
  in.check_size(seq.list->size() * 16 * size_t(n));
  List out;
  for (int64_t k = 0; k < n; ++k) out.insert(out.end(), seq.list->begin(), seq.list->end());
  return Value::make_list(std::move(out));
}

int64_t floor_div(int64_t a, int64_t b) {
  if (a == INT64_MIN && b == -1) fail("integer overflow");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

Value binary_op(const std::string& op, const Value& a, const Value& b, Interpreter& in) {
  if (op == "==") return Value::boolean(equals(a, b));
  if (op == "!=") return Value::boolean(!equals(a, b));
  if (op == "<") return Value::boolean(compare(a, b) < 0);
  if (op == ">") return Value::boolean(compare(a, b) > 0);
  if (op == "<=") return Value::boolean(compare(a, b) <= 0);
  if (op == ">=") return Value::boolean(compare(a, b) >= 0);
  if (op == "in") return Value::boolean(contains(b, a));
  if (op == "not in") return Value::boolean(!contains(b, a));
  if (op == "~") {
    std::string s = to_str(a) + to_str(b);
    in.check_size(s.size());
    return Value::string(std::move(s));
  }
  bool nums = a.is_number() && b.is_number();
  bool ints = is_int(a) && is_int(b);
  if (op == "+") {
    if (ints) {
      int64_t r;
      if (__builtin_add_overflow(int_of(a), int_of(b), &r)) fail("integer overflow");
      return Value::integer(r);
    }
    if (nums) return Value::floating(a.as_double() + b.as_double());
    if (a.is_string() && b.is_string()) {
      in.check_size(a.s.size() + b.s.size());
      return Value::string(a.s + b.s);
    }
    if (a.is_list() && b.is_list()) {
      List out = *a.list;
      out.insert(out.end(), b.list->begin(), b.list->end());
      return Value::make_list(std::move(out));
    }
    unsupported(op, a, b);
  }
  if (op == "-") {
    if (ints) {
      int64_t r;
      if (__builtin_sub_overflow(int_of(a), int_of(b), &r)) fail("integer overflow");
      return Value::integer(r);
    }
    if (nums) return Value::floating(a.as_double() - b.as_double());
    unsupported(op, a, b);
  }
  if (op == "*") {
    if (ints) {
      int64_t r;
      if (__builtin_mul_overflow(int_of(a), int_of(b), &r)) fail("integer overflow");
      return Value::integer(r);
    }
    if (nums) return Value::floating(a.as_double() * b.as_double());
    if ((a.is_string() || a.is_list()) && is_int(b)) return repeat(a, int_of(b), in);
    if ((b.is_string() || b.is_list()) && is_int(a)) return repeat(b, int_of(a), in);
    unsupported(op, a, b);
  }
  if (op == "/") {
    if (!nums) unsupported(op, a, b);
    if (b.as_double() == 0.0) fail("division by zero");
    return Value::floating(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (!nums) unsupported(op, a, b);
    if (b.as_double() == 0.0) fail(op == "//" ? "integer division or modulo by zero" : "modulo by zero");
    if (ints) {
      int64_t q = floor_div(int_of(a), int_of(b));
      if (op == "//") return Value::integer(q);
      return Value::integer(int_of(a) - q * int_of(b));
    }
    double x = a.as_double(), y = b.as_double();
    double m = std::fmod(x, y);
    if (m != 0 && ((m < 0) != (y < 0))) m += y;
    if (op == "%") return Value::floating(m);
    return Value::floating(std::floor(x / y));
  }
  if (op == "**") {
    if (!nums) unsupported(op, a, b);
    if (ints && int_of(b) >= 0) {
      int64_t base = int_of(a), e = int_of(b), r = 1;
      for (int64_t k = 0; k < e; ++k) {
        if (__builtin_mul_overflow(r, base, &r)) fail("integer overflow");
        if (r == 0 || r == 1) break;
        if (r == -1) { r = (e % 2) ? -1 : 1; break; }
      }
      return Value::integer(r);
    }
    return Value::floating(std::pow(a.as_double(), b.as_double()));
  }
  fail("unknown operator " + op);
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind) {
    case Kind::undefined: return false;
    case Kind::string:
      if (!item.is_string()) fail("'in <string>' requires string as left operand, not " + item.type_name());
      return container.s.find(item.s) != std::string::npos;
    case Kind::list:
      for (const auto& x : *container.list)
        if (equals(x, item)) return true;
      return false;
    case Kind::dict: return container.dict->find(item) != nullptr;
    default: fail("argument of type '" + container.type_name() + "' is not iterable");
  }
}

List iterate(const Value& v) {
  switch (v.kind) {
    case Kind::undefined: return {};
    case Kind::list: return *v.list;
    case Kind::dict: {
      if (v.is_namespace) fail("'Namespace' object is not iterable");
      List keys;
      for (const auto& [k, x] : v.dict->items) keys.push_back(k);
      return keys;
    }
    case Kind::string: {
      List chars;
      for (char32_t c : utf8_decode(v.s)) {
        std::string s;
        utf8_append(s, c);
        chars.push_back(Value::string(std::move(s)));
      }
      return chars;
    }
    default: fail("'" + v.type_name() + "' object is not iterable");
  }
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_dict()) {
    if (const Value* v = obj.dict->find(key)) return *v;
    if (key.is_string()) return get_attr(obj, key.s);
    return Value::undefined(to_str(key));
  }
  if ((obj.is_list() || obj.is_string()) && is_int(key)) {
    int64_t k = int_of(key);
    if (obj.is_list()) {
      int64_t n = int64_t(obj.list->size());
      if (k < 0) k += n;
      if (k < 0 || k >= n) return Value::undefined(to_str(key));
      return (*obj.list)[size_t(k)];
    }
    std::u32string s = utf8_decode(obj.s);
    int64_t n = int64_t(s.size());
    if (k < 0) k += n;
    if (k < 0 || k >= n) return Value::undefined(to_str(key));
    std::string out;
    utf8_append(out, s[size_t(k)]);
    return Value::string(std::move(out));
  }
  if (key.is_string()) return get_attr(obj, key.s);
  return Value::undefined(to_str(key));
}

Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  auto opt = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_none() || v.is_undefined()) return std::nullopt;
    if (!is_int(v)) fail(std::string("slice ") + what + " must be an integer or None");
    return int_of(v);
  };
  int64_t st = opt(step, "step").value_or(1);
  if (st == 0) fail("slice step cannot be zero");
  bool is_str = obj.is_string();
  if (!is_str && !obj.is_list()) fail("'" + obj.type_name() + "' object is not subscriptable");
  std::u32string chars = is_str ? utf8_decode(obj.s) : std::u32string();
  int64_t n = is_str ? int64_t(chars.size()) : int64_t(obj.list->size());
  auto norm = [&](std::optional<int64_t> v, int64_t def) {
    if (!v) return def;
    int64_t x = *v;
    if (x < 0) { x += n; if (x < 0) x = st < 0 ? -1 : 0; }
    else if (x >= n) x = st < 0 ? n - 1 : n;
    return x;
  };
  int64_t b = norm(opt(start, "start"), st < 0 ? n - 1 : 0);
  int64_t e = norm(opt(stop, "stop"), st < 0 ? -1 : n);
  std::u32string out_s;
  List out_l;
  for (int64_t k = b; st > 0 ? k < e : k > e;) {
    if (is_str) out_s += chars[size_t(k)];
    else out_l.push_back((*obj.list)[size_t(k)]);
    if (__builtin_add_overflow(k, st, &k)) break;
  }
  if (is_str) return Value::string(utf8_encode(out_s));
  return obj.is_tuple ? Value::make_tuple(std::move(out_l)) : Value::make_list(std::move(out_l));
}

}  // namespace exl::tpl
