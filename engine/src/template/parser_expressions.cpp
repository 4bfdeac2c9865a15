// Expressions, following Jinja2's grammar and precedence: condexpr > or > and > not > compare >
// + - > ~ > * / // % > ** > unary > primary with postfix ([], ., ()) and filters/tests.
#include <algorithm>
#include <charconv>

#include "template/parser_impl.h"

namespace exl::tpl::detail {

ExprPtr Parser::sealed(ExprPtr e) {
  int h = 0;
  for (const auto& a : e->args)
    if (a) h = std::max(h, a->height);
  for (const auto& [k, a] : e->kwargs)
    if (a) h = std::max(h, a->height);
  e->height = h + 1;
  if (e->height > max_expression_height) {
    Token at;
    at.type = Tok::op;
    at.line = e->line;
    at.col = e->col;
    error(at, "expression nested too deeply (more than " + std::to_string(max_expression_height) + " levels)");
  }
  return e;
}

ExprPtr Parser::parse_tuple(bool allow_tuple, bool with_condexpr) {
  const Token& at = cur();
  ExprPtr first = with_condexpr ? parse_expression() : parse_or();
  if (!allow_tuple || !is_op(",")) return first;
  auto tuple = node<Expr>(ExprKind::tuple, at);
  tuple->args.push_back(std::move(first));
  while (skip_op(",")) {
    if (cur().type == Tok::var_end || cur().type == Tok::block_end) break;
    tuple->args.push_back(parse_expression());
  }
  return sealed(std::move(tuple));
}

ExprPtr Parser::parse_expression() {
  DepthGuard g(*this, cur());
  ExprPtr e = parse_or();
  while (is_name("if")) {
    const Token& at = next();
    auto c = node<Expr>(ExprKind::cond, at);
    c->args.push_back(parse_or());
    c->args.push_back(std::move(e));
    if (skip_name("else")) c->args.push_back(parse_expression());
    else c->args.push_back(nullptr);
    e = sealed(std::move(c));
  }
  return e;
}

ExprPtr Parser::binary(const Token& at, std::string op, ExprPtr l, ExprPtr r) {
  auto b = node<Expr>(ExprKind::binary, at);
  b->name = std::move(op);
  b->args.push_back(std::move(l));
  b->args.push_back(std::move(r));
  return sealed(std::move(b));
}

ExprPtr Parser::parse_or() {
  ExprPtr e = parse_and();
  while (is_name("or")) { const Token& at = next(); e = binary(at, "or", std::move(e), parse_and()); }
  return e;
}

ExprPtr Parser::parse_and() {
  ExprPtr e = parse_not();
  while (is_name("and")) { const Token& at = next(); e = binary(at, "and", std::move(e), parse_not()); }
  return e;
}

ExprPtr Parser::parse_not() {
  if (is_name("not")) {
    DepthGuard g(*this, cur());
    const Token& at = next();
    auto u = node<Expr>(ExprKind::unary, at);
    u->name = "not";
    u->args.push_back(parse_not());
    return sealed(std::move(u));
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  ExprPtr e = parse_math1();
  while (true) {
    const Token& at = cur();
    std::string op;
    if (at.type == Tok::op && (at.text == "==" || at.text == "!=" || at.text == "<" || at.text == ">" ||
                               at.text == "<=" || at.text == ">=")) {
      op = at.text;
      next();
    } else if (is_name("in")) {
      op = "in";
      next();
    } else if (is_name("not") && peek().type == Tok::name && peek().text == "in") {
      op = "not in";
      next();
      next();
    } else {
      return e;
    }
    e = binary(at, op, std::move(e), parse_math1());
  }
}

ExprPtr Parser::parse_math1() {
  ExprPtr e = parse_concat();
  while (is_op("+") || is_op("-")) {
    const Token& at = next();
    e = binary(at, at.text, std::move(e), parse_concat());
  }
  return e;
}

ExprPtr Parser::parse_concat() {
  ExprPtr e = parse_math2();
  while (is_op("~")) { const Token& at = next(); e = binary(at, "~", std::move(e), parse_math2()); }
  return e;
}

ExprPtr Parser::parse_math2() {
  ExprPtr e = parse_pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token& at = next();
    e = binary(at, at.text, std::move(e), parse_pow());
  }
  return e;
}

ExprPtr Parser::parse_pow() {
  ExprPtr e = parse_unary(true);
  while (is_op("**")) { const Token& at = next(); e = binary(at, "**", std::move(e), parse_unary(true)); }
  return e;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  DepthGuard g(*this, cur());
  ExprPtr e;
  if (is_op("-") || is_op("+")) {
    const Token& at = next();
    e = node<Expr>(ExprKind::unary, at);
    e->name = at.text;
    e->args.push_back(parse_unary(false));
    e = sealed(std::move(e));
  } else {
    e = parse_primary();
  }
  e = parse_postfix(std::move(e));
  if (with_filter) e = parse_filter_expr(std::move(e));
  return e;
}

ExprPtr Parser::parse_primary() {
  const Token& t = cur();
  switch (t.type) {
    case Tok::name: {
      next();
      if (t.text == "true" || t.text == "True") return literal(t, Value::boolean(true));
      if (t.text == "false" || t.text == "False") return literal(t, Value::boolean(false));
      if (t.text == "none" || t.text == "None") return literal(t, Value::none());
      auto n = node<Expr>(ExprKind::name, t);
      n->name = t.text;
      return n;
    }
    case Tok::string: {
      std::string s;
      while (cur().type == Tok::string) s += next().text;  // adjacent literals concatenate
      return literal(t, Value::string(std::move(s)));
    }
    case Tok::integer: {
      next();
      int64_t v = 0;
      auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      if (r.ec != std::errc()) error(t, "integer literal out of range");
      return literal(t, Value::integer(v));
    }
    case Tok::floating: {
      next();
      double v = 0;
      std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      return literal(t, Value::floating(v));
    }
    case Tok::op:
      if (t.text == "(") {
        next();
        if (skip_op(")")) return node<Expr>(ExprKind::tuple, t);
        ExprPtr e = parse_expression();
        if (is_op(",")) {
          auto tuple = node<Expr>(ExprKind::tuple, t);
          tuple->args.push_back(std::move(e));
          while (skip_op(",")) {
            if (is_op(")")) break;
            tuple->args.push_back(parse_expression());
          }
          e = sealed(std::move(tuple));
        }
        expect_op(")");
        return e;
      }
      if (t.text == "[") {
        next();
        auto l = node<Expr>(ExprKind::list, t);
        while (!is_op("]")) {
          l->args.push_back(parse_expression());
          if (!skip_op(",")) break;
        }
        expect_op("]");
        return sealed(std::move(l));
      }
      if (t.text == "{") {
        next();
        auto d = node<Expr>(ExprKind::dict, t);
        while (!is_op("}")) {
          d->args.push_back(parse_expression());
          expect_op(":");
          d->args.push_back(parse_expression());
          if (!skip_op(",")) break;
        }
        expect_op("}");
        return sealed(std::move(d));
      }
      break;
    default: break;
  }
  error(t, "unexpected token in expression");
}

ExprPtr Parser::literal(const Token& at, Value v) {
  auto e = node<Expr>(ExprKind::literal, at);
  e->value = std::move(v);
  return e;
}

ExprPtr Parser::parse_postfix(ExprPtr e) {
  while (true) {
    const Token& at = cur();
    if (is_op(".")) {
      next();
      auto a = node<Expr>(ExprKind::attr, at);
      if (cur().type == Tok::name) a->name = next().text;
      else if (cur().type == Tok::integer) {
        // x.0 is x[0]
        a->kind = ExprKind::item;
        a->args.push_back(std::move(e));
        const Token& t = next();
        int64_t index = 0;
        auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), index);
        if (r.ec != std::errc()) error(t, "integer literal out of range");
        a->args.push_back(literal(t, Value::integer(index)));
        e = sealed(std::move(a));
        continue;
      } else error(cur(), "expected an attribute name");
      a->args.push_back(std::move(e));
      e = sealed(std::move(a));
    } else if (is_op("[")) {
      next();
      e = parse_subscript(at, std::move(e));
    } else if (is_op("(")) {
      e = parse_call_args(node<Expr>(ExprKind::call, at), std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_subscript(const Token& at, ExprPtr obj) {
  ExprPtr parts[3];
  bool is_slice = false;
  int part = 0;
  while (!is_op("]")) {
    if (is_op(":")) {
      next();
      is_slice = true;
      if (++part > 2) error(cur(), "too many ':' in slice");
      continue;
    }
    if (parts[part]) error(cur(), "expected ']'");
    parts[part] = parse_expression();
  }
  expect_op("]");
  if (!is_slice) {
    if (!parts[0]) error(at, "empty subscript");
    auto i = node<Expr>(ExprKind::item, at);
    i->args.push_back(std::move(obj));
    i->args.push_back(std::move(parts[0]));
    return sealed(std::move(i));
  }
  auto s = node<Expr>(ExprKind::slice, at);
  s->args.push_back(std::move(obj));
  for (auto& p : parts) s->args.push_back(std::move(p));
  return sealed(std::move(s));
}

// Parses "(args, k=v)" into call/filter/test node n whose args[0] is `subject`.
ExprPtr Parser::parse_call_args(ExprPtr n, ExprPtr subject) {
  expect_op("(");
  n->args.insert(n->args.begin(), std::move(subject));
  while (!is_op(")")) {
    if (cur().type == Tok::name && peek().type == Tok::op && peek().text == "=") {
      std::string key = next().text;
      next();
      n->kwargs.emplace_back(std::move(key), parse_expression());
    } else {
      if (!n->kwargs.empty()) error(cur(), "positional argument after keyword argument");
      n->args.push_back(parse_expression());
    }
    if (!skip_op(",")) break;
  }
  expect_op(")");
  return sealed(std::move(n));
}

ExprPtr Parser::parse_filter_chain(ExprPtr e, bool first_without_pipe) {
  bool need_pipe = !first_without_pipe;
  while (!need_pipe || is_op("|")) {
    if (need_pipe) next();
    need_pipe = true;
    const Token& at = cur();
    auto f = node<Expr>(ExprKind::filter, at);
    f->name = expect_name();
    while (is_op(".") && peek().type == Tok::name) { next(); f->name += "." + next().text; }
    if (is_op("(")) e = parse_call_args(std::move(f), std::move(e));
    else { f->args.push_back(std::move(e)); e = sealed(std::move(f)); }
  }
  return e;
}

ExprPtr Parser::parse_filter_expr(ExprPtr e) {
  while (true) {
    if (is_op("|")) {
      e = parse_filter_chain(std::move(e));
    } else if (is_name("is")) {
      const Token& at = next();
      auto t = node<Expr>(ExprKind::test, at);
      t->negated = skip_name("not");
      t->name = expect_name();
      while (is_op(".") && peek().type == Tok::name) { next(); t->name += "." + next().text; }
      if (is_op("(")) {
        e = parse_call_args(std::move(t), std::move(e));
      } else {
        const Token& c = cur();
        bool arg = (c.type == Tok::name || c.type == Tok::string || c.type == Tok::integer ||
                    c.type == Tok::floating || (c.type == Tok::op && (c.text == "[" || c.text == "{"))) &&
                   !(c.type == Tok::name && (c.text == "else" || c.text == "or" || c.text == "and"));
        t->args.push_back(std::move(e));
        if (arg) {
          if (is_name("is")) error(c, "You cannot chain multiple tests with is");
          t->args.push_back(parse_postfix(parse_primary()));
        }
        e = sealed(std::move(t));
      }
    } else if (is_op("(")) {
      e = parse_call_args(node<Expr>(ExprKind::call, cur()), std::move(e));
    } else {
      return e;
    }
  }
}

}  // namespace exl::tpl::detail
