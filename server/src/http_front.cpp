#include "http_front.h"

#include <httplib.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "exl/error.h"
#include "exl/log.h"
#include "exl/server/request.h"
#include "http_conn.h"

namespace exl::server {

namespace {

constexpr std::chrono::milliseconds kSweepInterval{250};
// An idle connection gives way to a newcomer over a cap only after this long (a burst of new
// connections does not push out those that have not sent their request yet).
constexpr std::chrono::milliseconds kEvictableAfter{1000};
// A refused connection is read until the client closes, for at most this long.
constexpr std::chrono::milliseconds kDrainTime{2000};
// Refused connections being drained beyond the connection cap; past it newcomers are just closed.
constexpr int kMaxDraining = 256;

// Lower-cased header name -> first value, for the headers the front itself reads.
bool headerValue(std::string_view head, std::string_view name, std::string& value) {
  std::size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    const std::size_t start = pos + 2;
    const std::size_t end = head.find("\r\n", start);
    const std::string_view line = head.substr(start, end == std::string_view::npos ? head.npos : end - start);
    const std::size_t colon = line.find(':');
    if (colon == name.size() &&
        std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
          return a == std::tolower(static_cast<unsigned char>(b));
        })) {
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      value.assign(v);
      return true;
    }
    pos = end;
  }
  return false;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

HttpFront::HttpFront(FrontLimits limits, Serve serve) : m_limits(limits), m_serve(std::move(serve)) {
  m_limits.workers = std::max(1, m_limits.workers);
  m_limits.maxConnections = std::max(1, m_limits.maxConnections);
  m_limits.maxPerClient = std::max(1, m_limits.maxPerClient);
  m_limits.maxRequestsPerConnection = std::max(1, m_limits.maxRequestsPerConnection);
  m_epollFd = ::epoll_create1(EPOLL_CLOEXEC);
  m_wakeFd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (m_epollFd < 0 || m_wakeFd < 0) throw Error(ErrorKind::io, std::string("epoll/eventfd: ") + std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = m_wakeFd;
  ::epoll_ctl(m_epollFd, EPOLL_CTL_ADD, m_wakeFd, &ev);
}

HttpFront::~HttpFront() {
  for (auto& [fd, c] : m_conns) ::close(fd);
  if (m_listenFd >= 0) ::close(m_listenFd);
  ::close(m_wakeFd);
  ::close(m_epollFd);
}

int HttpFront::bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* list = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &list); rc != 0)
    throw Error(ErrorKind::io, "cannot resolve " + host + ": " + gai_strerror(rc), "", "--host");
  std::string why;
  for (addrinfo* a = list; a && m_listenFd < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      m_listenFd = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(list);
  if (m_listenFd < 0) throw Error(ErrorKind::io, "cannot listen on " + host + ":" + service + ": " + why);
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  std::string ip;
  int bound = port;
  if (::getsockname(m_listenFd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) socketAddress(ss, ip, bound);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = m_listenFd;
  ::epoll_ctl(m_epollFd, EPOLL_CTL_ADD, m_listenFd, &ev);
  return bound;
}

void HttpFront::stop() {
  m_stopping.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto r = ::write(m_wakeFd, &one, sizeof(one));  // async-signal-safe
}

bool HttpFront::run() {
  if (m_listenFd < 0) return false;
  for (int i = 0; i < m_limits.workers; ++i) m_workers.emplace_back([this] { workerLoop(); });
  std::vector<epoll_event> events(256);
  m_nextSweep = Clock::now() + kSweepInterval;
  while (!m_stopping.load()) {
    const int n = ::epoll_wait(m_epollFd, events.data(), static_cast<int>(events.size()),
                               pollMs(m_nextSweep - Clock::now()) + 1);
    if (n < 0 && errno != EINTR) {
      log_error(std::string("server: epoll_wait: ") + std::strerror(errno));
      break;
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == m_listenFd) {
        acceptAll();
      } else if (fd == m_wakeFd) {
        std::uint64_t v;
        while (::read(m_wakeFd, &v, sizeof(v)) > 0) {}
        takeReturned();
      } else if (auto it = m_conns.find(fd); it != m_conns.end() && it->second->state != HttpConn::State::busy) {
        onReadable(*it->second);
      }
    }
    if (Clock::now() >= m_nextSweep) sweep();
  }
  // Stop: no new connections; requests in progress see their connection shut (a waiting
  // generation is cancelled, a stream ends); queued ones are dropped.
  ::close(m_listenFd);
  m_listenFd = -1;
  {
    std::lock_guard lock(m_mutex);
    m_workersStop = true;
    for (auto& [fd, c] : m_conns)
      if (c->state == HttpConn::State::busy) ::shutdown(fd, SHUT_RDWR);
  }
  m_cv.notify_all();
  for (auto& t : m_workers) t.join();
  m_workers.clear();
  for (auto& [fd, c] : m_conns) ::close(fd);
  m_conns.clear();
  m_perClient.clear();
  m_ready.clear();
  m_returned.clear();
  return true;
}

void HttpFront::acceptAll() {
  for (int i = 0; i < 256; ++i) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    const int fd = ::accept4(m_listenFd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: make room from idle connections, else stop accepting until the
        // next sweep (the kernel keeps the newcomers in its backlog meanwhile).
        if (!evictIdle(nullptr)) {
          ::epoll_ctl(m_epollFd, EPOLL_CTL_DEL, m_listenFd, nullptr);
          m_listenPaused = true;
          log_warning("server: out of file descriptors; accepting paused");
          return;
        }
        continue;
      }
      return;  // EAGAIN: accepted all
    }
    auto c = std::make_unique<HttpConn>();
    c->fd = fd;
    socketAddress(ss, c->addr, c->port);
    // Over a cap, the oldest idle connection gives way; else the newcomer is answered 429.
    const char* over = nullptr;
    if (static_cast<int>(m_conns.size()) >= m_limits.maxConnections && !evictIdle(nullptr))
      over = "too many open connections";
    else if (m_perClient[c->addr] >= m_limits.maxPerClient && !evictIdle(&c->addr))
      over = "too many open connections from this address";
    if (over && static_cast<int>(m_conns.size()) >= m_limits.maxConnections + kMaxDraining) {
      ::close(fd);
      continue;
    }
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));  // streamed tokens leave at once
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    if (::epoll_ctl(m_epollFd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      ::close(fd);
      continue;
    }
    c->lastActive = Clock::now();
    c->deadline = c->lastActive + m_limits.headerTimeout;  // a new connection owes its first request
    ++m_perClient[c->addr];
    HttpConn& added = *m_conns.emplace(fd, std::move(c)).first->second;
    if (over)
      refuse(added, "429 Too Many Requests", "too_many_connections",
             std::string(over) + " (limits: " + std::to_string(m_limits.maxConnections) + " in all, " +
                 std::to_string(m_limits.maxPerClient) + " per address); retry later");
  }
}

bool HttpFront::evictIdle(const std::string* addr) {
  const auto now = Clock::now();
  HttpConn* oldest = nullptr;
  for (auto& [fd, c] : m_conns)
    if (c->state == HttpConn::State::idle && c->buf.empty() && (!addr || c->addr == *addr) &&
        now - c->lastActive >= kEvictableAfter && (!oldest || c->lastActive < oldest->lastActive))
      oldest = c.get();
  if (!oldest) return false;
  closeConn(oldest->fd);
  return true;
}

void HttpFront::closeConn(int fd) {
  auto it = m_conns.find(fd);
  if (it == m_conns.end()) return;
  ::epoll_ctl(m_epollFd, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  if (auto p = m_perClient.find(it->second->addr); p != m_perClient.end() && --p->second <= 0) m_perClient.erase(p);
  m_conns.erase(it);
}

void HttpFront::refuse(HttpConn& c, const char* statusLine, const char* code, const std::string& message) {
  ApiError e;
  e.status = std::atoi(statusLine);
  e.type = e.status == 429 ? "rate_limit_error" : "invalid_request_error";
  e.message = message;
  e.code = code;
  const std::string body = errorBody(e).dump();
  std::string r = std::string("HTTP/1.1 ") + statusLine + "\r\nConnection: close\r\nContent-Type: application/json\r\n" +
                  (e.status == 429 ? "Retry-After: 1\r\n" : "") + "Content-Length: " + std::to_string(body.size()) +
                  "\r\n\r\n" + body;
  // Best effort, never blocking (a few hundred bytes fit any socket buffer).
  [[maybe_unused]] const auto n = ::send(c.fd, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(c.fd, SHUT_WR);
  c.state = HttpConn::State::draining;
  c.buf.clear();
  c.buf.shrink_to_fit();
  c.deadline = Clock::now() + kDrainTime;
}

void HttpFront::onReadable(HttpConn& c) {
  char tmp[16384];
  if (c.state == HttpConn::State::draining) {
    for (;;) {
      const ssize_t r = ::recv(c.fd, tmp, sizeof(tmp), 0);
      if (r > 0) continue;
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      return closeConn(c.fd);  // the client closed after our answer
    }
  }
  std::size_t got = 0;
  // At most 64 KiB per wake-up, so one fast sender cannot hold the front.
  while (got < 4 * sizeof(tmp)) {
    const ssize_t r = ::recv(c.fd, tmp, sizeof(tmp), 0);
    if (r > 0) {
      got += static_cast<std::size_t>(r);
      c.buf.append(tmp, static_cast<std::size_t>(r));
      if (c.buf.size() > m_limits.maxHeaderBytes + m_limits.maxBodyBytes) break;
      continue;
    }
    if (r == 0) return closeConn(c.fd);  // the client closed (any partial request is dropped)
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    return closeConn(c.fd);
  }
  c.lastActive = Clock::now();
  advance(c);
}

void HttpFront::advance(HttpConn& c) {
  if (c.buf.empty()) return;
  const auto now = Clock::now();
  if (c.state == HttpConn::State::idle) {
    c.state = HttpConn::State::header;
    c.deadline = now + m_limits.headerTimeout;  // from the request's first byte, not renewed by later ones
  }
  if (c.state == HttpConn::State::header) {
    const std::size_t end = c.buf.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (c.buf.size() > m_limits.maxHeaderBytes) refuse(c, "431 Request Header Fields Too Large", "headers_too_large", "the request headers are larger than " + std::to_string(m_limits.maxHeaderBytes) + " bytes");
      return;
    }
    const std::size_t headLen = end + 4;
    if (headLen > m_limits.maxHeaderBytes) return refuse(c, "431 Request Header Fields Too Large", "headers_too_large", "the request headers are larger than " + std::to_string(m_limits.maxHeaderBytes) + " bytes");
    const std::string_view head(c.buf.data(), end + 2);
    std::string te, cl;
    c.requestBytes = headLen;
    if (headerValue(head, "transfer-encoding", te) && lower(te) != "identity") {
      c.readThrough = true;  // chunked: httplib reads it from the socket under the body deadline
      c.closeAfter = true;
      return dispatch(c);
    }
    if (headerValue(head, "content-length", cl)) {
      if (cl.empty() || cl.size() > 18 || cl.find_first_not_of("0123456789") != std::string::npos)
        return refuse(c, "400 Bad Request", "invalid_content_length", "Content-Length is not a number");
      const std::size_t len = std::stoull(cl);
      if (len > m_limits.maxBodyBytes) {
        c.closeAfter = true;  // answered 413 without reading the body
        return dispatch(c);
      }
      c.requestBytes += len;
      std::string expect;
      if (len > 0 && c.buf.size() < c.requestBytes && headerValue(head, "expect", expect) &&
          lower(expect) == "100-continue") {
        constexpr std::string_view go = "HTTP/1.1 100 Continue\r\n\r\n";  // the body is read here, not by a worker
        [[maybe_unused]] const auto n = ::send(c.fd, go.data(), go.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
    }
    c.state = HttpConn::State::body;
    c.deadline = now + m_limits.bodyTimeout;
  }
  if (c.state == HttpConn::State::body && c.buf.size() >= c.requestBytes) dispatch(c);
}

void HttpFront::dispatch(HttpConn& c) {
  ::epoll_ctl(m_epollFd, EPOLL_CTL_DEL, c.fd, nullptr);
  c.state = HttpConn::State::busy;
  {
    std::lock_guard lock(m_mutex);
    m_ready.push_back(&c);
  }
  m_cv.notify_one();
}

void HttpFront::sweep() {
  const auto now = Clock::now();
  m_nextSweep = now + kSweepInterval;
  if (m_listenPaused) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = m_listenFd;
    ::epoll_ctl(m_epollFd, EPOLL_CTL_ADD, m_listenFd, &ev);
    m_listenPaused = false;
  }
  std::vector<std::pair<int, bool>> expired;  // fd, in the middle of a request
  for (auto& [fd, c] : m_conns)
    if (c->state != HttpConn::State::busy && now >= c->deadline)
      expired.emplace_back(fd, c->state != HttpConn::State::idle || !c->buf.empty());
  for (auto [fd, partial] : expired) {
    HttpConn& c = *m_conns[fd];
    if (partial && c.state != HttpConn::State::draining)
      refuse(c, "408 Request Timeout", "request_timeout", "the request did not arrive in time");
    else
      closeConn(fd);
  }
}

void HttpFront::takeReturned() {
  std::vector<std::pair<HttpConn*, bool>> back;
  {
    std::lock_guard lock(m_mutex);
    back.swap(m_returned);
  }
  const auto now = Clock::now();
  for (auto [c, keep] : back) {
    if (!keep) {
      closeConn(c->fd);
      continue;
    }
    c->state = HttpConn::State::idle;
    c->requestBytes = 0;
    c->readThrough = c->closeAfter = false;
    c->lastActive = now;
    c->deadline = now + m_limits.idleTimeout;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = c->fd;
    if (::epoll_ctl(m_epollFd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
      closeConn(c->fd);
      continue;
    }
    advance(*c);  // a pipelined request may be complete already
  }
}

void HttpFront::workerLoop() {
  for (;;) {
    HttpConn* c = nullptr;
    {
      std::unique_lock lock(m_mutex);
      m_cv.wait(lock, [&] { return m_workersStop || !m_ready.empty(); });
      if (m_workersStop) return;
      c = m_ready.front();
      m_ready.pop_front();
    }
    const bool keep = serveOne(*c);
    {
      std::lock_guard lock(m_mutex);
      m_returned.emplace_back(c, keep);
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto r = ::write(m_wakeFd, &one, sizeof(one));
  }
}

bool HttpFront::serveOne(HttpConn& c) {
  HttpConnStream stream(c, m_limits);
  const bool closeConnection =
      c.closeAfter || c.served + 1 >= m_limits.maxRequestsPerConnection || m_stopping.load();
  bool closed = false;
  bool ok = false;
  setServedConnection(&c.fd);
  try {
    ok = m_serve(stream, closeConnection, closed);
  } catch (const std::exception& e) {
    log_error(std::string("server: request failed: ") + e.what());
  } catch (...) {
    log_error("server: request failed");
  }
  setServedConnection(nullptr);
  c.buf.erase(0, stream.consumed());
  ++c.served;
  return ok && !closed && !closeConnection;
}

}  // namespace exl::server

