// Dynamic values of the chat-template interpreter. They follow Python/Jinja2 semantics closely
// enough that real chat templates render byte-identically to transformers' output: ints and
// floats print as Python prints them, dicts keep insertion order, undefined prints as empty.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace exl::tpl {

struct Value;
using List = std::vector<Value>;
struct Dict;
struct CallArgs;
class Interpreter;

enum class Kind : uint8_t { undefined, none, boolean, integer, floating, string, list, dict, callable };

// A callable value: a global (range, namespace, ...), a bound method ("abc".strip) or a macro.
struct Callable {
  std::string name;
  std::function<Value(Interpreter&, CallArgs&)> fn;
};

// Values own their lists, dicts and callables through shared_ptrs, and a bound method holds the
// value it is bound to, so a template can build chains far deeper than max_value_nesting counts
// ([x.copy], namespaces filled top-down). ~Value therefore frees what it solely owns through a
// per-thread work list instead of recursively: freeing any value takes constant stack. (The
// move assignment in value.cpp lists every member: keep it in step with them.)
struct Value {
  Kind kind = Kind::undefined;
  bool b = false;
  bool is_tuple = false;      // lists made from tuples print as (a, b)
  bool is_namespace = false;  // namespace(): attributes only, assignable from {% set ns.x %}
  uint32_t nest = 0;          // lists: how deeply containers nest inside (dicts keep theirs in Dict)
  int64_t i = 0;
  double f = 0.0;
  std::string s;  // string value; for undefined, the name that was looked up (for messages)
  std::shared_ptr<List> list;
  std::shared_ptr<Dict> dict;
  std::shared_ptr<Callable> fn;

  Value() = default;
  Value(const Value&) = default;
  Value(Value&&) noexcept = default;
  Value& operator=(const Value& o);
  Value& operator=(Value&& o) noexcept;
  ~Value() {
    if (list || dict || fn) release();
  }
  static Value undefined(std::string hint = {});
  static Value none();
  static Value boolean(bool v);
  static Value integer(int64_t v);
  static Value floating(double v);
  static Value string(std::string v);
  static Value make_list(List items = {});
  static Value make_tuple(List items);
  static Value make_dict();
  static Value callable(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn);

  bool is_undefined() const { return kind == Kind::undefined; }
  bool is_none() const { return kind == Kind::none; }
  bool is_string() const { return kind == Kind::string; }
  bool is_number() const { return kind == Kind::integer || kind == Kind::floating || kind == Kind::boolean; }
  bool is_list() const { return kind == Kind::list; }
  bool is_dict() const { return kind == Kind::dict; }
  double as_double() const;
  // Containers nested inside this value, itself included (0 for scalars).
  uint32_t nesting() const;
  std::string type_name() const;

 private:
  void release() noexcept;
};

// Deepest nesting of lists/dicts a template may build (printing, comparing and freeing values
// recurse through it): deeper is a render error, as Python's recursion limit would be.
inline constexpr uint32_t max_value_nesting = 1000;

struct Dict {
  std::vector<std::pair<Value, Value>> items;
  uint32_t nest = 1;  // as Value::nesting(); grows as items are set
  const Value* find(const Value& key) const;
  const Value* find(const std::string& key) const;
  void set(const Value& key, Value v);
};

struct CallArgs {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  // The argument at `index` or named `name`, or nullptr when neither was passed.
  const Value* get(size_t index, const char* name) const;
};

// Python truthiness (undefined is false).
bool truthy(const Value& v);
// Python str(): what {{ v }} prints.
std::string to_str(const Value& v);
// Python repr(), used inside printed lists and dicts.
std::string to_repr(const Value& v);
// Python ==.
bool equals(const Value& a, const Value& b);
// Python <, for numbers, strings and lists; throws a runtime error otherwise. Returns -1/0/1.
int compare(const Value& a, const Value& b);
// Python's float repr: shortest round-trip digits, "1e-05", "4120.5", "3.0".
std::string float_repr(double v);

// JSON conversion: ordered_json keeps object key order, as the templates need.
Value from_json(const nlohmann::ordered_json& j);
struct JsonOptions {
  int indent = -1;  // <0: compact
  std::string indent_str;
  std::string item_sep = ", ";
  std::string key_sep = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// Python json.dumps, as transformers' tojson filter calls it.
std::string to_json(const Value& v, const JsonOptions& options);

// UTF-8 helpers: templates count and slice code points, as Python does.
std::u32string utf8_decode(const std::string& s);
std::string utf8_encode(const std::u32string& s);
void utf8_append(std::string& out, char32_t c);
size_t utf8_length(const std::string& s);
bool is_py_space(char32_t c);

// Guards the interpreter's recursive functions (evaluation, printing, comparison) against running
// out of stack: a StackBudget opened at the start of a render records where the stack was; below
// that, check_stack() fails the render once more than `bytes` are in use. Per thread; no-op when
// no budget is open.
class StackBudget {
 public:
  explicit StackBudget(size_t bytes);
  ~StackBudget();
  StackBudget(const StackBudget&) = delete;
  StackBudget& operator=(const StackBudget&) = delete;

 private:
  const char* saved_base_;
  size_t saved_bytes_;
};
void check_stack();

}  // namespace exl::tpl
