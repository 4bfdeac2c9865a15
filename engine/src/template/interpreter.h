// Tree-walking evaluator of a parsed chat template, with Jinja2's scoping (for loops and macros
// open scopes, namespace() objects are shared) and limits that turn runaway templates into errors.
#pragma once
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "template/ast.h"
#include "template/value.h"

namespace exl::tpl {

struct Limits {
  size_t max_output = size_t(64) << 20;   // bytes of rendered text (and of any one string)
  uint64_t max_steps = 20'000'000;        // evaluated nodes and loop iterations per render
  int max_call_depth = 100;               // nested macro calls
  int64_t max_range = 100000;             // range() length (Jinja's sandbox cap)
  // Stack the recursive evaluation may use (nested macro calls, deep values); well inside the 1 MiB
  // of the smallest thread stacks the app runs on. Sanitizers' frames are several times larger.
#if defined(__SANITIZE_ADDRESS__)
  size_t max_stack_bytes = size_t(4) << 20;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  size_t max_stack_bytes = size_t(4) << 20;
#else
  size_t max_stack_bytes = size_t(640) << 10;
#endif
#else
  size_t max_stack_bytes = size_t(640) << 10;
#endif
};

struct Frame {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Frame> parent;
};

enum class Flow { normal, break_, continue_ };

class Interpreter {
 public:
  Interpreter(const Limits& limits, std::optional<std::tm> now) : limits_(limits), now_(now) {}
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Renders `body` with `context` (a dict value) as the template's variables.
  std::string render(const Body& body, const Value& context);

  Value eval(const Expr& e);
  Value call(const Value& callee, CallArgs& args);
  void step();                      // counts one unit of work against max_steps
  void check_size(size_t bytes);    // a string or output of this size is within max_output
  const Limits& limits() const { return limits_; }
  // namespace() objects are the only values a template can change after making them, so the only
  // way to a reference cycle (ns.a = ns, ns.a = [ns]): the interpreter empties them all when it
  // is done, which frees any such cycle.
  void track_namespace(const std::shared_ptr<Dict>& ns);
  std::tm now() const;
  // Position of the node being evaluated, for runtime error messages.
  int line = 0, col = 0;

 private:
  Limits limits_;
  std::optional<std::tm> now_;
  std::string* out_ = nullptr;
  std::shared_ptr<Frame> frame_;
  std::shared_ptr<Frame> root_;
  uint64_t steps_ = 0;
  int call_depth_ = 0;
  const Value* block_value_ = nullptr;
  std::vector<std::weak_ptr<Dict>> namespaces_;
  size_t namespaces_compact_at_ = 64;

  Flow exec_body(const Body& body);
  Flow exec(const Stmt& s);
  Flow exec_for(const Stmt& s);
  void exec_set(const Stmt& s);
  void assign(const Expr& target, const Value& v);
  std::string capture(const Body& body, std::shared_ptr<Frame> frame);
  Value make_macro(const Stmt& s, std::shared_ptr<Frame> def_frame, const Body* body,
                   const std::vector<std::pair<std::string, ExprPtr>>& params, const std::string& name);
  Value lookup(const std::string& name) const;
  Value eval_binary(const Expr& e);
  Value eval_call_args(const Expr& e, size_t first, CallArgs& args);
  void emit(const std::string& s);
};

// Operators with Python semantics (also used by filters).
Value binary_op(const std::string& op, const Value& a, const Value& b, Interpreter& in);
bool contains(const Value& container, const Value& item);
// Iterating a value as Python's for does: lists, dict keys, string characters; undefined is empty.
List iterate(const Value& v);

// Attribute (obj.name) and item (obj[key]) lookup with Jinja's fallbacks; methods of str, dict
// and list come back as bound callables.
Value get_attr(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

Value apply_filter(Interpreter& in, const std::string& name, const Value& input, CallArgs& args);
bool apply_test(Interpreter& in, const std::string& name, const Value& v, CallArgs& args);
void install_globals(Frame& frame);

}  // namespace exl::tpl
