// Internal error signalling of the template interpreter. ChatTemplate converts these into
// exl::Error with the template position where the failure happened.
#pragma once
#include <string>

namespace exl::tpl {

// A failure while rendering (type error, undefined access, limit reached); Python Jinja2 would
// raise here too.
struct RenderFailure {
  std::string message;
};
// raise_exception(message) called by the template itself.
struct RaisedByTemplate {
  std::string message;
};

[[noreturn]] inline void fail(std::string message) { throw RenderFailure{std::move(message)}; }

}  // namespace exl::tpl
