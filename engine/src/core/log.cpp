#include "exl/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace exl {
namespace {
std::mutex g_mutex;
LogSink g_sink;
std::atomic<int> g_level{int(LogLevel::warning)};
const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warning: return "warning";
    case LogLevel::error: return "error";
  }
  return "?";
}
}  // namespace

void set_log_sink(LogSink sink) {
  std::lock_guard lock(g_mutex);
  g_sink = std::move(sink);
}

void set_log_level(LogLevel min_level) { g_level = int(min_level); }

void log(LogLevel level, std::string_view message) {
  if (int(level) < g_level.load()) return;
  std::lock_guard lock(g_mutex);
  if (g_sink) {
    g_sink(level, message);
    return;
  }
  std::fprintf(stderr, "exl %s: %.*s\n", level_name(level), int(message.size()), message.data());
}

}  // namespace exl
