// The engine's one logging sink. Applications install their own (the GUI forwards to Qt
// logging categories); the default writes warnings and errors to stderr.
#pragma once
#include <functional>
#include <string_view>

namespace exl {

enum class LogLevel { debug = 0, info = 1, warning = 2, error = 3 };

using LogSink = std::function<void(LogLevel, std::string_view)>;

void set_log_sink(LogSink sink);  // empty function restores the default
void set_log_level(LogLevel min_level);
void log(LogLevel level, std::string_view message);

inline void log_debug(std::string_view m) { log(LogLevel::debug, m); }
inline void log_info(std::string_view m) { log(LogLevel::info, m); }
inline void log_warning(std::string_view m) { log(LogLevel::warning, m); }
inline void log_error(std::string_view m) { log(LogLevel::error, m); }

}  // namespace exl
