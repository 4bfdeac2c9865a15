// Tokenizer of Jinja template source, configured as transformers configures Jinja2:
// trim_blocks and lstrip_blocks on, keep_trailing_newline off, "-"/"+" whitespace control.
#pragma once
#include <string>
#include <vector>

namespace exl::tpl {

enum class Tok { text, var_begin, var_end, block_begin, block_end, name, string, integer, floating, op, eof };

struct Token {
  Tok type;
  std::string text;  // text content, name, decoded string literal, number spelling or operator
  int line = 1;
  int col = 1;
};

// Splits the source into tokens. Comments are dropped here. Throws exl::Error(format) with the
// line and column of malformed input (unterminated tag, string or comment; stray character).
std::vector<Token> tokenize(const std::string& source);

}  // namespace exl::tpl
