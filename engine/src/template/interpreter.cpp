// Statement execution and expression evaluation. Scoping follows Jinja2: the template's top
// level and {% if %} share one scope; a for loop, a macro call and {% with %} open a child scope
// whose assignments do not leak out; namespace() objects are shared values, so their
// attributes set inside a loop are visible after it.
#include "template/interpreter.h"

#include <algorithm>
#include <optional>

#include "template/errors.h"

namespace exl::tpl {

void Interpreter::step() {
  if (++steps_ > limits_.max_steps) fail("template took too many steps (limit " + std::to_string(limits_.max_steps) + ")");
}

void Interpreter::check_size(size_t bytes) {
  if (bytes > limits_.max_output) fail("template output too large (limit " + std::to_string(limits_.max_output) + " bytes)");
}

std::tm Interpreter::now() const {
  if (now_) return *now_;
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

Interpreter::~Interpreter() {
  for (const auto& w : namespaces_)
    if (auto ns = w.lock()) {
      auto items = std::move(ns->items);
      ns->items.clear();
    }
}

void Interpreter::track_namespace(const std::shared_ptr<Dict>& ns) {
  if (namespaces_.size() >= namespaces_compact_at_) {  // drop the freed ones (their memory with them)
    std::erase_if(namespaces_, [](const std::weak_ptr<Dict>& w) { return w.expired(); });
    namespaces_compact_at_ = std::max<size_t>(64, 2 * namespaces_.size());
  }
  namespaces_.push_back(ns);
}

void Interpreter::emit(const std::string& s) {
  out_->append(s);
  check_size(out_->size());
}

std::string Interpreter::render(const Body& body, const Value& context) {
  const StackBudget budget(limits_.max_stack_bytes);
  root_ = std::make_shared<Frame>();
  install_globals(*root_);
  if (context.is_dict())
    for (const auto& [k, v] : context.dict->items) root_->vars[to_str(k)] = v;
  frame_ = root_;
  std::string out;
  out_ = &out;
  exec_body(body);
  out_ = nullptr;
  frame_.reset();
  root_.reset();  // macros hold weak references only, so nothing outlives the render
  return out;
}

Value Interpreter::lookup(const std::string& name) const {
  for (const Frame* f = frame_.get(); f; f = f->parent.get()) {
    auto it = f->vars.find(name);
    if (it != f->vars.end()) return it->second;
  }
  return Value::undefined(name);
}

Flow Interpreter::exec_body(const Body& body) {
  for (const auto& s : body) {
    Flow f = exec(*s);
    if (f != Flow::normal) return f;
  }
  return Flow::normal;
}

std::string Interpreter::capture(const Body& body, std::shared_ptr<Frame> frame) {
  std::string buf;
  std::string* saved_out = out_;
  std::shared_ptr<Frame> saved_frame = frame_;
  out_ = &buf;
  frame_ = std::move(frame);
  struct Restore {
    Interpreter& in;
    std::string* o;
    std::shared_ptr<Frame> f;
    ~Restore() { in.out_ = o; in.frame_ = std::move(f); }
  } restore{*this, saved_out, saved_frame};
  exec_body(body);
  return buf;
}

Flow Interpreter::exec(const Stmt& s) {
  step();
  check_stack();
  line = s.line;
  col = s.col;
  switch (s.kind) {
    case StmtKind::text: emit(s.text); return Flow::normal;
    case StmtKind::output: emit(to_str(eval(*s.expr))); return Flow::normal;
    case StmtKind::if_:
      for (const auto& [cond, body] : s.branches)
        if (truthy(eval(*cond))) return exec_body(body);
      return exec_body(s.else_body);
    case StmtKind::for_: return exec_for(s);
    case StmtKind::set: exec_set(s); return Flow::normal;
    case StmtKind::set_block: {
      Value v = Value::string(capture(s.body, std::make_shared<Frame>(Frame{{}, frame_})));
      if (s.expr) {
        const Value* saved = block_value_;
        block_value_ = &v;
        Value r = eval(*s.expr);
        block_value_ = saved;
        v = r;
      }
      assign(*s.target, v);
      return Flow::normal;
    }
    case StmtKind::macro:
      frame_->vars[s.text] = make_macro(s, frame_, &s.body, s.params, s.text);
      return Flow::normal;
    case StmtKind::call_block: {
      Value caller = make_macro(s, frame_, &s.body, s.params, "caller");
      const Expr& call = *s.expr;
      Value callee = eval(*call.args[0]);
      CallArgs args;
      eval_call_args(call, 1, args);
      args.kw.emplace_back("caller", caller);
      emit(to_str(this->call(callee, args)));
      return Flow::normal;
    }
    case StmtKind::filter_block: {
      Value v = Value::string(capture(s.body, std::make_shared<Frame>(Frame{{}, frame_})));
      const Value* saved = block_value_;
      block_value_ = &v;
      Value r = eval(*s.expr);
      block_value_ = saved;
      emit(to_str(r));
      return Flow::normal;
    }
    case StmtKind::break_: return Flow::break_;
    case StmtKind::continue_: return Flow::continue_;
    case StmtKind::body: {
      if (!s.scoped) return exec_body(s.body);
      auto saved = frame_;
      frame_ = std::make_shared<Frame>(Frame{{}, saved});
      Flow f = exec_body(s.body);
      frame_ = saved;
      return f;
    }
  }
  return Flow::normal;
}

Flow Interpreter::exec_for(const Stmt& s) {
  Value iterable = eval(*s.expr);
  List items = iterate(iterable);
  auto saved = frame_;
  frame_ = std::make_shared<Frame>(Frame{{}, saved});
  struct Restore {
    Interpreter& in;
    std::shared_ptr<Frame> f;
    ~Restore() { in.frame_ = std::move(f); }
  } restore{*this, saved};
  if (s.cond) {
    // `for x in xs if cond`: filtered before the loop, so loop.length/index count kept items.
    List kept;
    for (const auto& item : items) {
      step();
      assign(*s.target, item);
      if (truthy(eval(*s.cond))) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    exec_body(s.else_body);
    return Flow::normal;
  }
  const int64_t n = int64_t(items.size());
  // loop.changed(*values): true on the first call and whenever the values differ from the last
  // call's (Jinja's LoopContext keeps them across iterations).
  // The callable holds them weakly: the values may include `loop` itself, which holds the callable.
  auto last_changed = std::make_shared<std::optional<List>>();
  std::weak_ptr<std::optional<List>> last_changed_ref = last_changed;
  Value changed = Value::callable("changed", [last_changed_ref](Interpreter&, CallArgs& a) -> Value {
    const auto last_changed = last_changed_ref.lock();
    if (!last_changed) fail("loop.changed() called after its loop ended");
    const Value now = Value::make_list(a.pos);
    if (*last_changed && equals(Value::make_list(**last_changed), now)) return Value::boolean(false);
    *last_changed = a.pos;
    return Value::boolean(true);
  });
  for (int64_t k = 0; k < n; ++k) {
    step();
    Value loop = Value::make_dict();
    auto& d = *loop.dict;
    auto put = [&](const char* key, Value v) {
      d.nest = std::max(d.nest, v.nesting() + 1);
      d.items.emplace_back(Value::string(key), std::move(v));
    };
    put("index", Value::integer(k + 1));
    put("index0", Value::integer(k));
    put("revindex", Value::integer(n - k));
    put("revindex0", Value::integer(n - k - 1));
    put("first", Value::boolean(k == 0));
    put("last", Value::boolean(k == n - 1));
    put("length", Value::integer(n));
    put("depth", Value::integer(1));
    put("depth0", Value::integer(0));
    put("previtem", k > 0 ? items[size_t(k - 1)] : Value::undefined("previtem"));
    put("nextitem", k + 1 < n ? items[size_t(k + 1)] : Value::undefined("nextitem"));
    put("cycle", Value::callable("cycle", [k](Interpreter&, CallArgs& a) -> Value {
          if (a.pos.empty()) fail("no items for cycling given");
          return a.pos[size_t(k) % a.pos.size()];
        }));
    put("changed", changed);
    frame_->vars["loop"] = loop;
    assign(*s.target, items[size_t(k)]);
    Flow f = exec_body(s.body);
    if (f == Flow::break_) break;
  }
  return Flow::normal;
}

void Interpreter::assign(const Expr& target, const Value& v) {
  if (target.kind == ExprKind::name) {
    frame_->vars[target.name] = v;
  } else if (target.kind == ExprKind::tuple) {
    List items = iterate(v);
    if (items.size() != target.args.size())
      fail("cannot unpack " + std::to_string(items.size()) + " values into " +
           std::to_string(target.args.size()) + " names");
    for (size_t k = 0; k < items.size(); ++k) assign(*target.args[k], items[k]);
  } else if (target.kind == ExprKind::attr) {
    Value ns = lookup(target.args[0]->name);
    if (!ns.is_dict() || !ns.is_namespace) fail("cannot assign attribute on non-namespace object");
    ns.dict->set(Value::string(target.name), v);
  } else {
    fail("cannot assign to this expression");
  }
}

void Interpreter::exec_set(const Stmt& s) { assign(*s.target, eval(*s.expr)); }

Value Interpreter::make_macro(const Stmt& s, std::shared_ptr<Frame> def_frame, const Body* body,
                              const std::vector<std::pair<std::string, ExprPtr>>& params,
                              const std::string& name) {
  std::weak_ptr<Frame> def = def_frame;
  const auto* p = &params;
  return Value::callable(name, [this, def, body, p, name](Interpreter&, CallArgs& args) -> Value {
    if (++call_depth_ > limits_.max_call_depth) {
      call_depth_ = 0;
      fail("maximum macro recursion depth (" + std::to_string(limits_.max_call_depth) + ") exceeded");
    }
    auto parent = def.lock();
    auto f = std::make_shared<Frame>(Frame{{}, parent ? parent : root_});
    const auto& params = *p;
    if (args.pos.size() > params.size())
      fail("macro '" + name + "' takes not more than " + std::to_string(params.size()) + " argument(s)");
    auto saved = frame_;
    frame_ = f;  // defaults are evaluated in the macro's scope
    List varargs;
    for (size_t k = 0; k < params.size(); ++k) {
      const std::string& pn = params[k].first;
      const Value* given = nullptr;
      if (k < args.pos.size()) given = &args.pos[k];
      for (const auto& [kn, kv] : args.kw)
        if (kn == pn) given = &kv;
      if (given) f->vars[pn] = *given;
      else if (params[k].second) f->vars[pn] = eval(*params[k].second);
      else f->vars[pn] = Value::undefined(pn);
    }
    frame_ = saved;
    for (const auto& [kn, kv] : args.kw) {
      bool known = kn == "caller";
      for (const auto& prm : params) known = known || prm.first == kn;
      if (!known) fail("macro '" + name + "' takes no keyword argument '" + kn + "'");
      if (kn == "caller") f->vars["caller"] = kv;
    }
    f->vars["varargs"] = Value::make_list();
    f->vars["kwargs"] = Value::make_dict();
    std::string out = capture(*body, f);
    --call_depth_;
    return Value::string(std::move(out));
  });
}

Value Interpreter::eval_call_args(const Expr& e, size_t first, CallArgs& args) {
  for (size_t k = first; k < e.args.size(); ++k) args.pos.push_back(eval(*e.args[k]));
  for (const auto& [key, x] : e.kwargs) args.kw.emplace_back(key, eval(*x));
  return {};
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
  if (callee.kind != Kind::callable) {
    if (callee.is_undefined()) fail("'" + callee.s + "' is undefined");
    fail("'" + callee.type_name() + "' object is not callable");
  }
  return callee.fn->fn(*this, args);
}

Value Interpreter::eval(const Expr& e) {
  step();
  check_stack();
  line = e.line;
  col = e.col;
  switch (e.kind) {
    case ExprKind::literal: return e.value;
    case ExprKind::name: return lookup(e.name);
    case ExprKind::list:
    case ExprKind::tuple: {
      List items;
      for (const auto& x : e.args) items.push_back(eval(*x));
      return e.kind == ExprKind::list ? Value::make_list(std::move(items)) : Value::make_tuple(std::move(items));
    }
    case ExprKind::dict: {
      Value d = Value::make_dict();
      for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
        Value key = eval(*e.args[k]);
        d.dict->set(key, eval(*e.args[k + 1]));
      }
      return d;
    }
    case ExprKind::attr: {
      Value obj = eval(*e.args[0]);
      if (obj.is_undefined()) fail("'" + obj.s + "' is undefined");
      return get_attr(obj, e.name);
    }
    case ExprKind::item: {
      Value obj = eval(*e.args[0]);
      if (obj.is_undefined()) fail("'" + obj.s + "' is undefined");
      return get_item(obj, eval(*e.args[1]));
    }
    case ExprKind::slice: {
      Value obj = eval(*e.args[0]);
      if (obj.is_undefined()) fail("'" + obj.s + "' is undefined");
      auto part = [&](size_t k) { return e.args[k] ? eval(*e.args[k]) : Value::none(); };
      return slice(obj, part(1), part(2), part(3));
    }
    case ExprKind::call: {
      Value callee = eval(*e.args[0]);
      CallArgs args;
      eval_call_args(e, 1, args);
      line = e.line;
      col = e.col;
      return call(callee, args);
    }
    case ExprKind::filter: {
      Value input = eval(*e.args[0]);
      CallArgs args;
      eval_call_args(e, 1, args);
      line = e.line;
      col = e.col;
      return apply_filter(*this, e.name, input, args);
    }
    case ExprKind::test: {
      Value input = eval(*e.args[0]);
      CallArgs args;
      eval_call_args(e, 1, args);
      bool r = apply_test(*this, e.name, input, args);
      return Value::boolean(e.negated ? !r : r);
    }
    case ExprKind::unary: {
      Value v = eval(*e.args[0]);
      if (e.name == "not") return Value::boolean(!truthy(v));
      if (v.kind == Kind::integer || v.kind == Kind::boolean) {
        int64_t x = v.kind == Kind::boolean ? v.b : v.i;
        if (e.name == "-" && x == INT64_MIN) fail("integer overflow");
        return Value::integer(e.name == "-" ? -x : x);
      }
      if (v.kind == Kind::floating) return Value::floating(e.name == "-" ? -v.f : v.f);
      fail("bad operand type for unary " + e.name + ": '" + v.type_name() + "'");
    }
    case ExprKind::binary: return eval_binary(e);
    case ExprKind::cond:
      if (truthy(eval(*e.args[0]))) return eval(*e.args[1]);
      return e.args[2] ? eval(*e.args[2]) : Value::undefined();
    case ExprKind::block_value: return block_value_ ? *block_value_ : Value::undefined();
  }
  return Value::undefined();
}

Value Interpreter::eval_binary(const Expr& e) {
  if (e.name == "and") {
    Value a = eval(*e.args[0]);
    return truthy(a) ? eval(*e.args[1]) : a;
  }
  if (e.name == "or") {
    Value a = eval(*e.args[0]);
    return truthy(a) ? a : eval(*e.args[1]);
  }
  Value a = eval(*e.args[0]);
  Value b = eval(*e.args[1]);
  line = e.line;
  col = e.col;
  return binary_op(e.name, a, b, *this);
}

}  // namespace exl::tpl
