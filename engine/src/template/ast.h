// Syntax tree of a chat template: expressions and statements as the parser builds them and the
// interpreter walks them. Every node keeps its line and column for error messages.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "template/value.h"

namespace exl::tpl {

enum class ExprKind {
  literal,      // value
  name,         // name
  list,         // args
  tuple,        // args
  dict,         // args: key, value, key, value, ...
  attr,         // args[0].name
  item,         // args[0][args[1]]
  slice,        // args[0][args[1]:args[2]:args[3]] (null parts allowed)
  call,         // args[0](args[1..], kwargs)
  filter,       // args[0] | name(args[1..], kwargs)
  test,         // args[0] is [not] name(args[1..], kwargs)
  unary,        // name ("-", "+", "not") args[0]
  binary,       // args[0] name args[1]; name is the operator ("and", "or", "in", "not in", "+", ...)
  cond,         // args[1] if args[0] else args[2] (args[2] may be null)
  block_value,  // the rendered body of {% filter %} / {% set x | f %}
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  int line = 0, col = 0;
  int height = 1;  // 1 + the tallest operand's height (set by the parser)
  Value value;
  std::string name;
  bool negated = false;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

enum class StmtKind {
  text, output, if_, for_, set, set_block, macro, call_block, filter_block, break_, continue_,
  body,  // a plain body: {% generation %}, {% with %} scope
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  StmtKind kind;
  int line = 0, col = 0;
  std::string text;               // text; macro name
  ExprPtr expr;                   // output expression; for iterable; set value; call expression; filter chain
  ExprPtr target;                 // for / set target (name, tuple of names, or attr for ns.x)
  ExprPtr cond;                   // for ... if cond
  std::vector<std::pair<ExprPtr, Body>> branches;  // if / elif
  Body body;                      // for body, macro body, call body, else of if
  Body else_body;                 // for-else, if-else
  std::vector<std::pair<std::string, ExprPtr>> params;  // macro / caller parameters with defaults
  bool scoped = false;            // body kind: opens a new scope ({% with %})
};

}  // namespace exl::tpl
