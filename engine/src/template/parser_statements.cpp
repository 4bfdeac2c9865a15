// Statements of the chat-template grammar: text, {{ }} output and the {% %} tags (if, for, set,
// macro, call, filter, with, generation, break, continue), each with its end tag.
#include "template/parser_impl.h"

namespace exl::tpl {
namespace detail {

Body Parser::parse_all() {
  Body body = parse_body({});
  if (cur().type != Tok::eof) error(cur(), "unexpected tag");
  return body;
}

// Parses until "{% <one of ends> ...": stops with cur() at that name (block_begin consumed).
Body Parser::parse_body(const std::set<std::string>& ends) {
  DepthGuard g(*this, cur());
  Body body;
  while (true) {
    const Token& t = cur();
    if (t.type == Tok::eof) {
      if (!ends.empty()) error(t, "unexpected end of template, expected '" + *ends.begin() + "'");
      return body;
    }
    if (t.type == Tok::text) {
      auto s = node<Stmt>(StmtKind::text, t);
      s->text = t.text;
      body.push_back(std::move(s));
      next();
    } else if (t.type == Tok::var_begin) {
      next();
      auto s = node<Stmt>(StmtKind::output, t);
      s->expr = parse_tuple(true);
      if (cur().type != Tok::var_end) error(cur(), "expected end of print statement '}}'");
      next();
      body.push_back(std::move(s));
    } else if (t.type == Tok::block_begin) {
      const Token& kw = peek();
      if (kw.type != Tok::name) error(kw, "expected a statement name");
      if (ends.count(kw.text)) { next(); return body; }
      next();
      body.push_back(parse_statement());
    } else {
      error(t, "unexpected token");
    }
  }
}

StmtPtr Parser::parse_statement() {
  const Token& kw = next();
  const std::string& k = kw.text;
  if (k == "if") return parse_if(kw);
  if (k == "for") return parse_for(kw);
  if (k == "set") return parse_set(kw);
  if (k == "macro") return parse_macro(kw);
  if (k == "call") return parse_call(kw);
  if (k == "filter") return parse_filter_block(kw);
  if (k == "break" || k == "continue") {
    auto s = node<Stmt>(k == "break" ? StmtKind::break_ : StmtKind::continue_, kw);
    expect_block_end();
    return s;
  }
  if (k == "generation" || k == "with") {
    auto s = node<Stmt>(StmtKind::body, kw);
    s->scoped = k == "with";
    if (k == "with") {
      // {% with a = 1, b = 2 %}: assignments become set statements at the top of the body.
      while (cur().type != Tok::block_end) {
        auto set = node<Stmt>(StmtKind::set, cur());
        set->target = parse_assign_target();
        expect_op("=");
        set->expr = parse_expression();
        s->body.push_back(std::move(set));
        if (!skip_op(",")) break;
      }
    }
    expect_block_end();
    Body inner = parse_body({"end" + k});
    next();
    expect_block_end();
    for (auto& x : inner) s->body.push_back(std::move(x));
    return s;
  }
  error(kw, "unknown tag '" + k + "'");
}

StmtPtr Parser::parse_if(const Token& kw) {
  auto s = node<Stmt>(StmtKind::if_, kw);
  ExprPtr cond = parse_tuple(false);
  expect_block_end();
  while (true) {
    Body b = parse_body({"elif", "else", "endif"});
    s->branches.emplace_back(std::move(cond), std::move(b));
    std::string which = next().text;
    if (which == "elif") {
      cond = parse_tuple(false);
      expect_block_end();
      continue;
    }
    expect_block_end();
    if (which == "else") {
      s->else_body = parse_body({"endif"});
      next();
      expect_block_end();
    }
    return s;
  }
}

StmtPtr Parser::parse_for(const Token& kw) {
  auto s = node<Stmt>(StmtKind::for_, kw);
  s->target = parse_assign_target();
  if (!skip_name("in")) error(cur(), "expected 'in'");
  s->expr = parse_tuple(false, /*with_condexpr=*/false);
  if (skip_name("if")) s->cond = parse_expression();
  if (skip_name("recursive")) error(cur(), "recursive loops are not supported");
  expect_block_end();
  s->body = parse_body({"else", "endfor"});
  if (next().text == "else") {
    expect_block_end();
    s->else_body = parse_body({"endfor"});
    next();
  }
  expect_block_end();
  return s;
}

ExprPtr Parser::parse_assign_target() {
  const Token& at = cur();
  auto first = [&]() -> ExprPtr {
    auto n = node<Expr>(ExprKind::name, cur());
    n->name = expect_name();
    if (is_op(".")) {
      next();
      auto a = node<Expr>(ExprKind::attr, cur());
      a->name = expect_name();
      a->args.push_back(std::move(n));
      return a;
    }
    return n;
  };
  ExprPtr t = first();
  if (!is_op(",")) return t;
  auto tuple = node<Expr>(ExprKind::tuple, at);
  tuple->args.push_back(std::move(t));
  while (skip_op(",")) {
    if (cur().type != Tok::name || is_name("in")) break;
    tuple->args.push_back(first());
  }
  return tuple;
}

StmtPtr Parser::parse_set(const Token& kw) {
  ExprPtr target = parse_assign_target();
  if (skip_op("=")) {
    auto s = node<Stmt>(StmtKind::set, kw);
    s->target = std::move(target);
    s->expr = parse_tuple(true);
    expect_block_end();
    return s;
  }
  auto s = node<Stmt>(StmtKind::set_block, kw);
  s->target = std::move(target);
  if (is_op("|")) s->expr = parse_filter_chain(node<Expr>(ExprKind::block_value, cur()));
  expect_block_end();
  s->body = parse_body({"endset"});
  next();
  expect_block_end();
  return s;
}

void Parser::parse_params(std::vector<std::pair<std::string, ExprPtr>>& params) {
  expect_op("(");
  while (!is_op(")")) {
    std::string n = expect_name();
    ExprPtr def;
    if (skip_op("=")) def = parse_expression();
    params.emplace_back(std::move(n), std::move(def));
    if (!skip_op(",")) break;
  }
  expect_op(")");
}

StmtPtr Parser::parse_macro(const Token& kw) {
  auto s = node<Stmt>(StmtKind::macro, kw);
  s->text = expect_name();
  parse_params(s->params);
  expect_block_end();
  s->body = parse_body({"endmacro"});
  next();
  expect_block_end();
  return s;
}

StmtPtr Parser::parse_call(const Token& kw) {
  auto s = node<Stmt>(StmtKind::call_block, kw);
  if (is_op("(")) parse_params(s->params);
  s->expr = parse_expression();
  if (s->expr->kind != ExprKind::call) error(kw, "expected a call in '{% call %}'");
  expect_block_end();
  s->body = parse_body({"endcall"});
  next();
  expect_block_end();
  return s;
}

StmtPtr Parser::parse_filter_block(const Token& kw) {
  auto s = node<Stmt>(StmtKind::filter_block, kw);
  s->expr = parse_filter_chain(node<Expr>(ExprKind::block_value, kw), /*first_without_pipe=*/true);
  expect_block_end();
  s->body = parse_body({"endfilter"});
  next();
  expect_block_end();
  return s;
}

}  // namespace detail

Body parse(const std::vector<Token>& tokens) { return detail::Parser(tokens).parse_all(); }

}  // namespace exl::tpl
