// The recursive-descent parser's class, shared by parser_statements.cpp ({% %} tags) and
// parser_expressions.cpp (Jinja2's expression grammar). Internal to the template library.
#pragma once
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "exl/error.h"
#include "template/parser.h"

namespace exl::tpl::detail {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& t) : t_(t) {}

  Body parse_all();

 private:
  const std::vector<Token>& t_;
  size_t p_ = 0;
  int depth_ = 0;

  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, const Token& at) : p(parser) {
      if (++p.depth_ > max_nesting) p.error(at, "template nested too deeply");
    }
    ~DepthGuard() { --p.depth_; }
  };

  const Token& cur() const { return t_[p_]; }
  const Token& peek(size_t n = 1) const { return t_[std::min(p_ + n, t_.size() - 1)]; }
  const Token& next() { const Token& t = t_[p_]; if (p_ + 1 < t_.size()) ++p_; return t; }
  bool is_op(const char* op) const { return cur().type == Tok::op && cur().text == op; }
  bool is_name(const char* n) const { return cur().type == Tok::name && cur().text == n; }
  bool skip_op(const char* op) { if (is_op(op)) { next(); return true; } return false; }
  bool skip_name(const char* n) { if (is_name(n)) { next(); return true; } return false; }

  [[noreturn]] void error(const Token& at, const std::string& what) {
    std::string near = at.type == Tok::eof ? "end of template" : "'" + at.text + "'";
    throw Error(ErrorKind::format, "template syntax error at line " + std::to_string(at.line) +
                                       ", column " + std::to_string(at.col) + ": " + what +
                                       (at.type == Tok::text || at.text.empty() ? "" : " (near " + near + ")"),
                {}, "chat_template");
  }
  void expect_op(const char* op) { if (!skip_op(op)) error(cur(), std::string("expected '") + op + "'"); }
  std::string expect_name() {
    if (cur().type != Tok::name) error(cur(), "expected a name");
    return next().text;
  }
  void expect_block_end() {
    if (cur().type != Tok::block_end) error(cur(), "expected end of block tag '%}'");
    next();
  }

  template <class K>
  std::unique_ptr<K> node(auto kind, const Token& at) {
    auto n = std::make_unique<K>();
    n->kind = kind;
    n->line = at.line;
    n->col = at.col;
    return n;
  }

  // Finishes an expression node: its height is 1 + its tallest operand's. Chains that the grammar
  // builds in loops (a + b + c ..., a.b.c ..., x|f|g ...) are limited here, so evaluating or
  // destroying the tree never recurses deeper than max_expression_height.
  ExprPtr sealed(ExprPtr e);

  // ---- statements (parser_statements.cpp) ----
  // Parses until "{% <one of ends> ...": stops with cur() at that name (block_begin consumed).
  Body parse_body(const std::set<std::string>& ends);
  StmtPtr parse_statement();
  StmtPtr parse_if(const Token& kw);
  StmtPtr parse_for(const Token& kw);
  ExprPtr parse_assign_target();
  StmtPtr parse_set(const Token& kw);
  void parse_params(std::vector<std::pair<std::string, ExprPtr>>& params);
  StmtPtr parse_macro(const Token& kw);
  StmtPtr parse_call(const Token& kw);
  StmtPtr parse_filter_block(const Token& kw);

  // ---- expressions (parser_expressions.cpp) ----
  ExprPtr parse_tuple(bool allow_tuple, bool with_condexpr = true);
  ExprPtr parse_expression();
  ExprPtr binary(const Token& at, std::string op, ExprPtr l, ExprPtr r);
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr literal(const Token& at, Value v);
  ExprPtr parse_postfix(ExprPtr e);
  ExprPtr parse_subscript(const Token& at, ExprPtr obj);
  // Parses "(args, k=v)" into call/filter/test node n whose args[0] is `subject`.
  ExprPtr parse_call_args(ExprPtr n, ExprPtr subject);
  ExprPtr parse_filter_chain(ExprPtr e, bool first_without_pipe = false);
  ExprPtr parse_filter_expr(ExprPtr e);
};

}  // namespace exl::tpl::detail
