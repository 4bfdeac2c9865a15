// Jinja2's built-in tests (`x is defined`, `x is string`, `x is equalto y`, ...).
#include "template/errors.h"
#include "template/filters.h"
#include "template/interpreter.h"
#include "template/strings.h"

namespace exl::tpl {

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
  if (name == "filter") return filter::table().count(filter::str(other())) > 0;
  if (name == "test") return true;
  fail("no test named '" + name + "'");
}

}  // namespace exl::tpl
