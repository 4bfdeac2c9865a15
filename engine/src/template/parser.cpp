// Recursive-descent parser following Jinja2's grammar: condexpr > or > and > not > compare >
// + - > ~ > * / // % > ** > unary > primary with postfix ([], ., ()) and filters/tests.
#include "template/parser.h"

#include <charconv>
#include <set>

#include "exl/error.h"

namespace exl::tpl {
namespace {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& t) : t_(t) {}

  Body parse_all() {
    Body body = parse_body({});
    if (cur().type != Tok::eof) error(cur(), "unexpected tag");
    return body;
  }

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

  // ---- statements ----

  // Parses until "{% <one of ends> ...": stops with cur() at that name (block_begin consumed).
  Body parse_body(const std::set<std::string>& ends) {
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

  StmtPtr parse_statement() {
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

  StmtPtr parse_if(const Token& kw) {
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

  StmtPtr parse_for(const Token& kw) {
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

  ExprPtr parse_assign_target() {
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

  StmtPtr parse_set(const Token& kw) {
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

  void parse_params(std::vector<std::pair<std::string, ExprPtr>>& params) {
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

  StmtPtr parse_macro(const Token& kw) {
    auto s = node<Stmt>(StmtKind::macro, kw);
    s->text = expect_name();
    parse_params(s->params);
    expect_block_end();
    s->body = parse_body({"endmacro"});
    next();
    expect_block_end();
    return s;
  }

  StmtPtr parse_call(const Token& kw) {
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

  StmtPtr parse_filter_block(const Token& kw) {
    auto s = node<Stmt>(StmtKind::filter_block, kw);
    s->expr = parse_filter_chain(node<Expr>(ExprKind::block_value, kw), /*first_without_pipe=*/true);
    expect_block_end();
    s->body = parse_body({"endfilter"});
    next();
    expect_block_end();
    return s;
  }

  // ---- expressions ----

  ExprPtr parse_tuple(bool allow_tuple, bool with_condexpr = true) {
    const Token& at = cur();
    ExprPtr first = with_condexpr ? parse_expression() : parse_or();
    if (!allow_tuple || !is_op(",")) return first;
    auto tuple = node<Expr>(ExprKind::tuple, at);
    tuple->args.push_back(std::move(first));
    while (skip_op(",")) {
      if (cur().type == Tok::var_end || cur().type == Tok::block_end) break;
      tuple->args.push_back(parse_expression());
    }
    return tuple;
  }

  ExprPtr parse_expression() {
    DepthGuard g(*this, cur());
    ExprPtr e = parse_or();
    while (is_name("if")) {
      const Token& at = next();
      auto c = node<Expr>(ExprKind::cond, at);
      c->args.push_back(parse_or());
      c->args.push_back(std::move(e));
      if (skip_name("else")) c->args.push_back(parse_expression());
      else c->args.push_back(nullptr);
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(const Token& at, std::string op, ExprPtr l, ExprPtr r) {
    auto b = node<Expr>(ExprKind::binary, at);
    b->name = std::move(op);
    b->args.push_back(std::move(l));
    b->args.push_back(std::move(r));
    return b;
  }

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (is_name("or")) { const Token& at = next(); e = binary(at, "or", std::move(e), parse_and()); }
    return e;
  }
  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (is_name("and")) { const Token& at = next(); e = binary(at, "and", std::move(e), parse_not()); }
    return e;
  }
  ExprPtr parse_not() {
    if (is_name("not")) {
      DepthGuard g(*this, cur());
      const Token& at = next();
      auto u = node<Expr>(ExprKind::unary, at);
      u->name = "not";
      u->args.push_back(parse_not());
      return u;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
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
  ExprPtr parse_math1() {
    ExprPtr e = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& at = next();
      e = binary(at, at.text, std::move(e), parse_concat());
    }
    return e;
  }
  ExprPtr parse_concat() {
    ExprPtr e = parse_math2();
    while (is_op("~")) { const Token& at = next(); e = binary(at, "~", std::move(e), parse_math2()); }
    return e;
  }
  ExprPtr parse_math2() {
    ExprPtr e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& at = next();
      e = binary(at, at.text, std::move(e), parse_pow());
    }
    return e;
  }
  ExprPtr parse_pow() {
    ExprPtr e = parse_unary(true);
    while (is_op("**")) { const Token& at = next(); e = binary(at, "**", std::move(e), parse_unary(true)); }
    return e;
  }
  ExprPtr parse_unary(bool with_filter) {
    DepthGuard g(*this, cur());
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token& at = next();
      e = node<Expr>(ExprKind::unary, at);
      e->name = at.text;
      e->args.push_back(parse_unary(false));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
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
            e = std::move(tuple);
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
          return l;
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
          return d;
        }
        break;
      default: break;
    }
    error(t, "unexpected token in expression");
  }

  ExprPtr literal(const Token& at, Value v) {
    auto e = node<Expr>(ExprKind::literal, at);
    e->value = std::move(v);
    return e;
  }

  ExprPtr parse_postfix(ExprPtr e) {
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
          a->args.push_back(literal(cur(), Value::integer(std::stoll(next().text))));
          e = std::move(a);
          continue;
        } else error(cur(), "expected an attribute name");
        a->args.push_back(std::move(e));
        e = std::move(a);
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

  ExprPtr parse_subscript(const Token& at, ExprPtr obj) {
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
      return i;
    }
    auto s = node<Expr>(ExprKind::slice, at);
    s->args.push_back(std::move(obj));
    for (auto& p : parts) s->args.push_back(std::move(p));
    return s;
  }

  // Parses "(args, k=v)" into call/filter/test node n whose args[0] is `subject`.
  ExprPtr parse_call_args(ExprPtr n, ExprPtr subject) {
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
    return n;
  }

  ExprPtr parse_filter_chain(ExprPtr e, bool first_without_pipe = false) {
    bool need_pipe = !first_without_pipe;
    while (!need_pipe || is_op("|")) {
      if (need_pipe) next();
      need_pipe = true;
      const Token& at = cur();
      auto f = node<Expr>(ExprKind::filter, at);
      f->name = expect_name();
      while (is_op(".") && peek().type == Tok::name) { next(); f->name += "." + next().text; }
      if (is_op("(")) e = parse_call_args(std::move(f), std::move(e));
      else { f->args.push_back(std::move(e)); e = std::move(f); }
    }
    return e;
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
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
          e = std::move(t);
        }
      } else if (is_op("(")) {
        e = parse_call_args(node<Expr>(ExprKind::call, cur()), std::move(e));
      } else {
        return e;
      }
    }
  }
};

}  // namespace

Body parse(const std::vector<Token>& tokens) { return Parser(tokens).parse_all(); }

}  // namespace exl::tpl
