// Pieces shared by the Hub client's source files.
#pragma once
#include <string>

namespace exl::hub {

std::string url_quote(const std::string& s, bool keep_slash);
bool env_flag(const char* name);

}  // namespace exl::hub
