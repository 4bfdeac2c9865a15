// Parser of template tokens into a syntax tree (Jinja2 grammar and operator precedence).
#pragma once
#include <vector>

#include "template/ast.h"
#include "template/lexer.h"

namespace exl::tpl {

// Deepest nesting of expressions and blocks the parser accepts; deeper input is a syntax error
// (keeps the recursive parser and interpreter far from the stack limit).
inline constexpr int max_nesting = 96;
// Tallest expression tree accepted (long operator, attribute and filter chains count too).
inline constexpr int max_expression_height = 400;

// Throws exl::Error(format) "template syntax error at line L, column C: ..." on bad input.
Body parse(const std::vector<Token>& tokens);

}  // namespace exl::tpl
