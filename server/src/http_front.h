// The connection front of `exl serve`. One thread accepts connections and reads each request
// (headers, then a body of known length) into memory under deadlines, so an idle or slow client
// costs a socket and a few kilobytes, never a worker; a pool of workers then runs complete
// requests through cpp-httplib's request processing (routing, parsing, response writing) on a
// stream that reads the buffered request and writes to the socket. Keep-alive connections go back
// to the front between requests. Limits: connections in all and per client address (the oldest
// idle connection gives way to a new one), a deadline for the headers from the request's first
// byte, one for the body, one for an idle keep-alive connection, and requests per connection.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace httplib {
class Stream;
}

namespace exl::server {

struct HttpConn;

struct FrontLimits {
  int maxConnections = 512;         // open connections in all (below the usual 1024 open files)
  int maxPerClient = 64;            // open connections from one client address
  std::chrono::milliseconds headerTimeout{10000};  // request's first byte -> end of its headers
  std::chrono::milliseconds bodyTimeout{30000};    // end of the headers -> end of the body
  std::chrono::milliseconds idleTimeout{30000};    // keep-alive connection without a request
  std::chrono::milliseconds writeTimeout{30000};   // one write to a client that does not read
  int maxRequestsPerConnection = 1000;
  std::size_t maxHeaderBytes = 16384;
  std::size_t maxBodyBytes = std::size_t(4) << 20;  // larger bodies are answered (413) unread
  int workers = 16;
};

// True while the calling thread serves a request whose client has closed or reset its
// connection (checked without blocking; pipelined bytes from a live client do not count).
bool clientDisconnected();

class HttpFront {
 public:
  // Runs one request read from `stream` (the connection is kept when it returns true and
  // `connectionClosed` stays false). `closeConnection`: the answer must close the connection.
  using Serve = std::function<bool(httplib::Stream& stream, bool closeConnection, bool& connectionClosed)>;

  HttpFront(FrontLimits limits, Serve serve);
  ~HttpFront();
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  // Binds host:port (0: any free port) and listens; returns the port. Throws Error(io).
  int bind(const std::string& host, int port);
  int listenSocket() const { return m_listenFd; }
  // Serves until stop(); returns false when it could not run (not bound).
  bool run();
  // Ends run() (safe from a signal handler): clients in the middle of a request see their
  // connection closed, and generations waiting on them are stopped.
  void stop();

 private:
  using Conn = HttpConn;
  using Clock = std::chrono::steady_clock;

  void acceptAll();
  void onReadable(Conn& c);
  void advance(Conn& c);
  void dispatch(Conn& c);
  void sweep();
  void closeConn(int fd);
  bool evictIdle(const std::string* addr);
  // Answers without reading the request (status line, JSON error code and message), then reads
  // and drops what the client sends until it closes (so the answer is not lost to a reset).
  void refuse(Conn& c, const char* statusLine, const char* code, const std::string& message);
  void workerLoop();
  bool serveOne(Conn& c);
  void takeReturned();

  FrontLimits m_limits;
  Serve m_serve;
  int m_listenFd = -1;
  int m_epollFd = -1;
  int m_wakeFd = -1;
  bool m_listenPaused = false;
  std::atomic<bool> m_stopping{false};
  std::unordered_map<int, std::unique_ptr<Conn>> m_conns;  // front thread only (busy ones: read-only)
  std::unordered_map<std::string, int> m_perClient;
  Clock::time_point m_nextSweep;

  std::mutex m_mutex;  // the hand-over queues between the front and the workers
  std::condition_variable m_cv;
  std::deque<Conn*> m_ready;
  std::vector<std::pair<Conn*, bool>> m_returned;
  bool m_workersStop = false;
  std::vector<std::thread> m_workers;
};

}  // namespace exl::server
