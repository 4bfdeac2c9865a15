// Jinja2 lexer behaviour reproduced: text runs up to "{{", "{%" or "{#"; "{%-"/"-%}" strip all
// whitespace on that side; lstrip_blocks removes spaces and tabs between a line start and a
// block or comment tag (not before "{{", not with "{%+"); trim_blocks removes the first
// newline after a block tag or comment (not after "+%}").
#include "template/lexer.h"

#include <cctype>
#include <cstring>

#include "exl/error.h"

namespace exl::tpl {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

class Lexer {
 public:
  explicit Lexer(const std::string& source) {
    // Newlines normalised to "\n"; one trailing newline dropped (keep_trailing_newline=False).
    src_.reserve(source.size());
    for (size_t k = 0; k < source.size(); ++k) {
      if (source[k] == '\r') {
        src_ += '\n';
        if (k + 1 < source.size() && source[k + 1] == '\n') ++k;
      } else {
        src_ += source[k];
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
  }

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      size_t p = find_tag(pos_);
      std::string text = src_.substr(pos_, (p == std::string::npos ? src_.size() : p) - pos_);
      size_t text_pos = pos_;
      if (p == std::string::npos) {
        emit_text(text, text_pos);
        pos_ = src_.size();
        break;
      }
      char kind = src_[p + 1];
      char sign = p + 2 < src_.size() ? src_[p + 2] : 0;
      if (sign == '-') {
        size_t e = text.size();
        while (e > 0 && is_ws(text[e - 1])) --e;
        text.resize(e);
      } else if (sign != '+' && kind != '{') {
        size_t l_pos = text.rfind('\n');
        l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
        if (l_pos > 0 || line_starting) {
          bool all_ws = l_pos < text.size();
          for (size_t k = l_pos; k < text.size(); ++k)
            if (!is_ws(text[k])) { all_ws = false; break; }
          if (all_ws) text.resize(l_pos);
        }
      }
      emit_text(text, text_pos);
      pos_ = p + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
      if (kind == '#') {
        line_starting = skip_comment(p);
      } else {
        line_starting = lex_tag(kind == '{', p);
      }
    }
    add(Tok::eof, "", src_.size());
    return std::move(tokens_);
  }

 private:
  std::string src_;
  size_t pos_ = 0;
  std::vector<Token> tokens_;

  [[noreturn]] void error(size_t at, const std::string& what) {
    auto [line, col] = position(at);
    throw Error(ErrorKind::format, "template syntax error at line " + std::to_string(line) +
                                       ", column " + std::to_string(col) + ": " + what,
                {}, "chat_template");
  }

  std::pair<int, int> position(size_t at) const {
    int line = 1, col = 1;
    for (size_t k = 0; k < at && k < src_.size(); ++k) {
      if (src_[k] == '\n') { ++line; col = 1; }
      else if ((static_cast<unsigned char>(src_[k]) & 0xC0) != 0x80) ++col;
    }
    return {line, col};
  }

  void add(Tok type, std::string text, size_t at) {
    Token t{type, std::move(text), 0, 0};
    // Positions are computed incrementally from the previous token.
    if (tokens_.empty()) { last_pos_ = 0; last_line_ = 1; last_col_ = 1; }
    for (size_t k = last_pos_; k < at && k < src_.size(); ++k) {
      if (src_[k] == '\n') { ++last_line_; last_col_ = 1; }
      else if ((static_cast<unsigned char>(src_[k]) & 0xC0) != 0x80) ++last_col_;
    }
    if (at > last_pos_) last_pos_ = at;
    t.line = last_line_;
    t.col = last_col_;
    tokens_.push_back(std::move(t));
  }
  size_t last_pos_ = 0;
  int last_line_ = 1, last_col_ = 1;

  void emit_text(const std::string& text, size_t at) {
    if (!text.empty()) add(Tok::text, text, at);
  }

  size_t find_tag(size_t from) const {
    for (size_t k = from; k + 1 < src_.size(); ++k)
      if (src_[k] == '{' && (src_[k + 1] == '{' || src_[k + 1] == '%' || src_[k + 1] == '#')) return k;
    return std::string::npos;
  }

  // After "{#": finds "#}", applies "-#}" / trim_blocks. Returns whether the next text starts a line.
  bool skip_comment(size_t begin) {
    size_t q = src_.find("#}", pos_);
    if (q == std::string::npos) error(begin, "missing end of comment tag");
    char before = q > pos_ ? src_[q - 1] : 0;
    pos_ = q + 2;
    return after_end(before, true);
  }

  // Consumes whitespace control after an end tag; returns whether the last consumed char was "\n".
  bool after_end(char sign, bool is_block) {
    if (sign == '-') {
      size_t start = pos_;
      while (pos_ < src_.size() && is_ws(src_[pos_])) ++pos_;
      return pos_ > start && src_[pos_ - 1] == '\n';
    }
    if (is_block && sign != '+' && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
      return true;
    }
    return false;
  }

  bool lex_tag(bool is_var, size_t begin) {
    add(is_var ? Tok::var_begin : Tok::block_begin, "", begin);
    int depth = 0;
    while (true) {
      while (pos_ < src_.size() && is_ws(src_[pos_])) ++pos_;
      if (pos_ >= src_.size()) error(begin, is_var ? "unexpected end of template in '{{ }}'" : "unexpected end of template in '{% %}'");
      char c = src_[pos_];
      if (depth == 0) {
        const char* end = is_var ? "}}" : "%}";
        if ((c == '-' || c == '+') && src_.compare(pos_ + 1, 2, end) == 0) {
          add(is_var ? Tok::var_end : Tok::block_end, "", pos_);
          pos_ += 3;
          return after_end(c, !is_var);
        }
        if (src_.compare(pos_, 2, end) == 0) {
          add(is_var ? Tok::var_end : Tok::block_end, "", pos_);
          pos_ += 2;
          return after_end(0, !is_var);
        }
      }
      size_t at = pos_;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (pos_ < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) ++pos_;
        add(Tok::name, src_.substr(at, pos_ - at), at);
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number(at);
      } else if (c == '\'' || c == '"') {
        lex_string(at);
      } else {
        static const char* ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~",
                                    "<", ">", "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", ";"};
        const char* found = nullptr;
        for (const char* op : ops)
          if (src_.compare(pos_, std::strlen(op), op) == 0) { found = op; break; }
        if (!found) error(at, std::string("unexpected character '") + c + "'");
        if (*found == '(' || *found == '[' || *found == '{') ++depth;
        if (*found == ')' || *found == ']' || *found == '}') --depth;
        if (depth < 0) depth = 0;
        pos_ += std::strlen(found);
        add(Tok::op, found, at);
      }
    }
  }

  void lex_number(size_t at) {
    auto digits = [&] {
      while (pos_ < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) ++pos_;
    };
    digits();
    bool is_float = false;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
      is_float = true;
      ++pos_;
      digits();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t save = pos_++;
      if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) ++pos_;
      if (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) {
        is_float = true;
        digits();
      } else {
        pos_ = save;
      }
    }
    std::string text;
    for (size_t k = at; k < pos_; ++k)
      if (src_[k] != '_') text += src_[k];
    add(is_float ? Tok::floating : Tok::integer, text, at);
  }

  void lex_string(size_t at) {
    char quote = src_[pos_++];
    std::string out;
    while (true) {
      if (pos_ >= src_.size()) error(at, "unterminated string literal");
      char c = src_[pos_++];
      if (c == quote) break;
      if (c != '\\') { out += c; continue; }
      if (pos_ >= src_.size()) error(at, "unterminated string literal");
      char e = src_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case 'a': out += '\a'; break;
        case '0': out += '\0'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case '\n': break;
        case 'x': case 'u': case 'U': {
          size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (pos_ + n > src_.size()) error(at, "truncated \\" + std::string(1, e) + " escape");
          char32_t cp = 0;
          for (size_t k = 0; k < n; ++k) {
            char h = src_[pos_ + k];
            int d = std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                    : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                    : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
            if (d < 0) error(at, "malformed \\" + std::string(1, e) + " escape");
            cp = cp * 16 + char32_t(d);
          }
          if (cp > 0x10FFFF) error(at, "escape out of range");
          pos_ += n;
          append_utf8(out, cp);
          break;
        }
        default: out += '\\'; out += e;  // Python keeps unknown escapes verbatim
      }
    }
    add(Tok::string, out, at);
  }

  static void append_utf8(std::string& out, char32_t c) {
    if (c < 0x80) out += char(c);
    else if (c < 0x800) { out += char(0xC0 | (c >> 6)); out += char(0x80 | (c & 0x3F)); }
    else if (c < 0x10000) {
      out += char(0xE0 | (c >> 12)); out += char(0x80 | ((c >> 6) & 0x3F)); out += char(0x80 | (c & 0x3F));
    } else {
      out += char(0xF0 | (c >> 18)); out += char(0x80 | ((c >> 12) & 0x3F));
      out += char(0x80 | ((c >> 6) & 0x3F)); out += char(0x80 | (c & 0x3F));
    }
  }
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) { return Lexer(source).run(); }

}  // namespace exl::tpl
