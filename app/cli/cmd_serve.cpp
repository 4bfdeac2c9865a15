// `exl serve`: the OpenAI-compatible HTTP server on one model (headless, Qt-free).
#include <csignal>
#include <cstdio>
#include <filesystem>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.h"
#include "exl/error.h"

#if __has_include("exl/server/apiserver.h")
#include "exl/server/apiserver.h"
#include "session.h"

namespace exl::cli {

namespace {
exl::server::ApiServer* g_server = nullptr;
extern "C" void onSignal(int) {
  if (g_server) g_server->stop();
}
}  // namespace

int cmd_serve(const Args& a) {
  std::set<std::string> known = {"--host", "--port", "--api-key", "--queue", "--http-threads", "--cors",
                                 "--model-id", "--max-body", "--max-conns", "--max-conns-per-client",
                                 "--keep-alive", "--header-timeout", "-m"};
  for (const char* const* f = kSessionFlags; *f; ++f) known.insert(*f);
  a.check_known(known);
  server::ServerOptions o;
  o.host = a.get_or("--host", "127.0.0.1");
  o.port = a.get_int("--port", 5001);
  o.apiKey = a.get_or("--api-key", "");
  o.queue = a.get_int("--queue", 8);
  o.httpThreads = a.get_int("--http-threads", 16);
  o.corsOrigin = a.get_or("--cors", "");
  if (o.port < 0 || o.port > 65535) throw Error(ErrorKind::invalid_argument, "must be 0-65535", "", "--port");
  if (o.queue < 1) throw Error(ErrorKind::invalid_argument, "must be at least 1", "", "--queue");
  if (o.httpThreads < 1 || o.httpThreads > 4096)
    throw Error(ErrorKind::invalid_argument, "must be 1-4096", "", "--http-threads");
  o.maxConnections = a.get_int("--max-conns", 512);
  o.maxConnectionsPerClient = a.get_int("--max-conns-per-client", 64);
  o.keepAliveMs = a.get_int("--keep-alive", 30) * 1000;
  o.headerTimeoutMs = a.get_int("--header-timeout", 10) * 1000;
  if (o.maxConnections < 1 || o.maxConnections > 100000)
    throw Error(ErrorKind::invalid_argument, "must be 1-100000", "", "--max-conns");
  if (o.maxConnectionsPerClient < 1 || o.maxConnectionsPerClient > o.maxConnections)
    throw Error(ErrorKind::invalid_argument, "must be between 1 and --max-conns", "", "--max-conns-per-client");
  if (o.keepAliveMs < 1000 || o.keepAliveMs > 3600000)
    throw Error(ErrorKind::invalid_argument, "must be 1-3600 seconds", "", "--keep-alive");
  if (o.headerTimeoutMs < 1000 || o.headerTimeoutMs > 600000)
    throw Error(ErrorKind::invalid_argument, "must be 1-600 seconds", "", "--header-timeout");
  const int maxBody = a.get_int("--max-body", 4 << 20);
  if (maxBody < 1024) throw Error(ErrorKind::invalid_argument, "must be at least 1024 bytes", "", "--max-body");
  o.limits.maxBodyBytes = static_cast<std::size_t>(maxBody);
  if (!exl::server::isLoopbackHost(o.host) && o.apiKey.empty())
    throw Error(ErrorKind::invalid_argument, "binding a non-loopback address requires --api-key", "", "--host");
  const std::string dir = a.require("--model");
  o.modelId = a.get_or("--model-id", std::filesystem::path(dir).lexically_normal().filename().string());
  if (o.modelId.empty()) o.modelId = std::filesystem::path(dir).lexically_normal().parent_path().filename().string();

#if defined(__GLIBC__)
  // Two allocator arenas instead of glibc's 8 per core: the HTTP workers allocate little and
  // rarely at once, and every arena keeps its own free pages (about 5 MB less resident memory
  // under the soak test's traffic, and no slow growth as each arena reaches its own peak).
  mallopt(M_ARENA_MAX, 2);
#endif
  Session s = open_session(a);
  o.maxChunk = s.max_chunk;
  std::fprintf(stderr, "exl serve: %s\n", s.device_note.c_str());
  server::ApiServer srv(o, s.model, std::move(s.backend));
  const int port = srv.bind();
  g_server = &srv;
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::printf("exl serve: model '%s' at http://%s:%d/v1 (queue %d, %d HTTP threads)\n", srv.modelId().c_str(),
              o.host.c_str(), port, o.queue, o.httpThreads);
  std::fflush(stdout);
  const bool ok = srv.listen();
  g_server = nullptr;
  return ok ? 0 : 1;
}

}  // namespace exl::cli

#else  // built without the server library (EXL_BUILD_SERVER=OFF)

namespace exl::cli {
int cmd_serve(const Args&) {
  throw Error(ErrorKind::unsupported, "this exl was built without the server (configure with -DEXL_BUILD_SERVER=ON)");
}
}  // namespace exl::cli

#endif
