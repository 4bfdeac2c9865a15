// Python str semantics used by template methods and filters: Unicode-aware strip/split, case
// mapping (ASCII, Latin-1, Greek, Cyrillic), title/capitalize, str.format, strftime in the C locale.
#pragma once
#include <ctime>
#include <string>
#include <vector>

#include "template/value.h"

namespace exl::tpl {

class Interpreter;

std::string py_strip(const std::string& s, const std::string* chars, bool left, bool right);
std::vector<std::string> py_split(const std::string& s, const std::string* sep, int64_t maxsplit, bool from_right);
std::vector<std::string> py_splitlines(const std::string& s);
std::string py_upper(const std::string& s);
std::string py_lower(const std::string& s);
std::string py_swapcase(const std::string& s);
std::string py_title(const std::string& s);       // str.title()
std::string jinja_title(const std::string& s);    // the |title filter (splits at spaces, -, brackets)
std::string py_capitalize(const std::string& s);
std::string py_replace(const std::string& s, const std::string& from, const std::string& to, int64_t count, Interpreter& in);
int64_t py_count(const std::string& s, const std::string& sub);
std::string py_format(const std::string& fmt, CallArgs& args, Interpreter& in);
bool py_is_class(const std::string& s, const std::string& method);  // isdigit, isalpha, ...
std::string py_strftime(const std::string& fmt, const std::tm& tm);

}  // namespace exl::tpl
