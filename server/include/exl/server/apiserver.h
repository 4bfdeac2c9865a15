// The OpenAI-compatible HTTP server: routes, authentication, limits, SSE streaming. Owns the
// Scheduler that runs generations on the model; cpp-httplib stays an implementation detail.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "exl/backend.h"
#include "exl/model.h"
#include "exl/server/request.h"

namespace exl::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 5001;           // 0: any free port (see ApiServer::port())
  std::string apiKey;        // required when host is not a loopback address
  int queue = 8;             // generation jobs waiting before 429
  int httpThreads = 16;      // workers running complete requests (at least queue + 4; idle and slow clients use none)
  int maxConnections = 512;  // open connections in all
  int maxConnectionsPerClient = 64;  // from one client address; the oldest idle one gives way
  int headerTimeoutMs = 10000;       // a request's first byte -> the end of its headers
  int keepAliveMs = 30000;           // an idle keep-alive connection is closed after this
  std::string corsOrigin;    // empty: CORS off
  std::string modelId;       // the id clients name; default: the model folder's name
  int maxChunk = 2048;
  RequestLimits limits;
};

// True for 127.0.0.1/8, ::1 and "localhost".
bool isLoopbackHost(const std::string& host);
// Compares in time that depends only on the lengths' maximum, not on where they differ.
bool constantTimeEquals(const std::string& a, const std::string& b);

class ApiServer {
 public:
  // `backend` is loaded with `model` and has its cache allocated. Throws Error(invalid_argument)
  // for a non-loopback host without an API key.
  ApiServer(ServerOptions options, std::shared_ptr<const Model> model, std::unique_ptr<Backend> backend);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds the address (throws Error(io) when it cannot); returns the port bound.
  int bind();
  // Serves until stop(); returns false when listening failed.
  bool listen();
  void stop();
  int port() const { return m_port; }
  const std::string& modelId() const { return m_options.modelId; }

 private:
  struct Impl;
  ServerOptions m_options;
  int m_port = 0;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace exl::server
