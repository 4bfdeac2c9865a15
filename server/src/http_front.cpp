#include "http_front.h"

#include <httplib.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "exl/error.h"
#include "exl/log.h"

namespace exl::server {

namespace {

constexpr std::chrono::milliseconds kSweepInterval{250};

// Lower-cased header name -> first value, for the two headers the front itself needs.
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

void addressOf(const sockaddr_storage& ss, std::string& ip, int& port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof(buf));
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof(buf));
    port = ntohs(a->sin6_port);
  }
  ip = buf;
}

int pollMs(std::chrono::steady_clock::duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 1 << 30));
}

// The stream of the request a worker serves, so that handlers can see a vanished client.
thread_local const int* t_clientFd = nullptr;

bool peerGone(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  if (::poll(&p, 1, 0) < 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace

bool clientDisconnected() { return t_clientFd && peerGone(*t_clientFd); }

struct HttpFront::Conn {
  enum class State { idle, header, body, busy };
  int fd = -1;
  std::string addr;
  int port = 0;
  std::string buf;                 // bytes read and not yet consumed by a request
  State state = State::idle;
  Clock::time_point deadline;      // of the current state (not for busy)
  Clock::time_point lastActive;
  std::size_t requestBytes = 0;    // headers + body, once the headers are complete
  bool readThrough = false;        // chunked body: the worker reads it from the socket
  bool closeAfter = false;         // the answer closes the connection
  int served = 0;
};

// httplib's view of one buffered request: reads come from the buffer (then, for a chunked
// body, from the socket until the body deadline); writes go to the socket, waiting at most the
// write timeout for room.
class HttpFront::ConnStream final : public httplib::Stream {
 public:
  ConnStream(Conn& c, const FrontLimits& l)
      : m_c(c), m_limits(l), m_end(c.readThrough ? c.buf.size() : std::min(c.requestBytes, c.buf.size())),
        m_bodyDeadline(Clock::now() + l.bodyTimeout) {}
  std::size_t consumed() const { return m_pos; }

  bool is_readable() const override { return m_pos < m_end || (m_c.readThrough && wait(POLLIN, m_bodyDeadline)); }
  bool is_writable() const override {
    pollfd p{m_c.fd, POLLOUT | POLLRDHUP, 0};
    if (::poll(&p, 1, pollMs(m_limits.writeTimeout)) <= 0) return false;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0 && (p.revents & POLLOUT);
  }
  ssize_t read(char* ptr, size_t size) override {
    if (m_pos < m_end) {
      const std::size_t n = std::min(size, m_end - m_pos);
      std::memcpy(ptr, m_c.buf.data() + m_pos, n);
      m_pos += n;
      return static_cast<ssize_t>(n);
    }
    if (!m_c.readThrough) return 0;
    for (;;) {
      if (!wait(POLLIN, m_bodyDeadline)) return -1;
      const ssize_t r = ::recv(m_c.fd, ptr, size, 0);
      if (r >= 0) return r;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    }
  }
  ssize_t write(const char* ptr, size_t size) override {
    std::size_t done = 0;
    while (done < size) {
      const ssize_t r = ::send(m_c.fd, ptr + done, size - done, MSG_NOSIGNAL);
      if (r > 0) {
        done += static_cast<std::size_t>(r);
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait(POLLOUT, Clock::now() + m_limits.writeTimeout))
        continue;
      return -1;
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = m_c.addr;
    port = m_c.port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    port = 0;
    ip.clear();
    if (::getsockname(m_c.fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) addressOf(ss, ip, port);
  }
  // cpp-httplib 0.11 uses the descriptor only to refuse ones select() cannot watch; this stream
  // waits with poll(), so any descriptor is served.
  socket_t socket() const override { return std::min(m_c.fd, FD_SETSIZE - 1); }

 private:
  bool wait(short events, Clock::time_point deadline) const {
    for (;;) {
      pollfd p{m_c.fd, events, 0};
      const int r = ::poll(&p, 1, pollMs(deadline - Clock::now()));
      if (r > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0 && !(p.revents & POLLNVAL);
      if (r == 0 || errno != EINTR) return false;
    }
  }

  Conn& m_c;
  const FrontLimits& m_limits;
  std::size_t m_pos = 0;
  std::size_t m_end;
  Clock::time_point m_bodyDeadline;
};

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
  if (::getsockname(m_listenFd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) addressOf(ss, ip, bound);
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
      } else if (auto it = m_conns.find(fd); it != m_conns.end() && it->second->state != Conn::State::busy) {
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
      if (c->state == Conn::State::busy) ::shutdown(fd, SHUT_RDWR);
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
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    addressOf(ss, c->addr, c->port);
    if (static_cast<int>(m_conns.size()) >= m_limits.maxConnections && !evictIdle(nullptr)) {
      ::close(fd);
      continue;
    }
    if (m_perClient[c->addr] >= m_limits.maxPerClient && !evictIdle(&c->addr)) {
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
    m_conns.emplace(fd, std::move(c));
  }
}

bool HttpFront::evictIdle(const std::string* addr) {
  Conn* oldest = nullptr;
  for (auto& [fd, c] : m_conns)
    if (c->state == Conn::State::idle && c->buf.empty() && (!addr || c->addr == *addr) &&
        (!oldest || c->lastActive < oldest->lastActive))
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

void HttpFront::reply(Conn& c, const char* statusLine) {
  // Best effort, never blocking: the front answers only requests it refuses to read.
  std::string r = std::string("HTTP/1.1 ") + statusLine + "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
  [[maybe_unused]] const auto n = ::send(c.fd, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  // Read what already arrived, so that the close sends a FIN after the answer, not a reset that
  // could discard it (a kernel resets a connection closed with unread data).
  char sink[16384];
  for (int i = 0; i < 16 && ::recv(c.fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; ++i) {}
  ::shutdown(c.fd, SHUT_WR);
  closeConn(c.fd);
}

void HttpFront::onReadable(Conn& c) {
  char tmp[16384];
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

void HttpFront::advance(Conn& c) {
  if (c.buf.empty()) return;
  const auto now = Clock::now();
  if (c.state == Conn::State::idle) {
    c.state = Conn::State::header;
    c.deadline = now + m_limits.headerTimeout;  // from the request's first byte, not renewed by later ones
  }
  if (c.state == Conn::State::header) {
    const std::size_t end = c.buf.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (c.buf.size() > m_limits.maxHeaderBytes) reply(c, "431 Request Header Fields Too Large");
      return;
    }
    const std::size_t headLen = end + 4;
    if (headLen > m_limits.maxHeaderBytes) return reply(c, "431 Request Header Fields Too Large");
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
        return reply(c, "400 Bad Request");
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
    c.state = Conn::State::body;
    c.deadline = now + m_limits.bodyTimeout;
  }
  if (c.state == Conn::State::body && c.buf.size() >= c.requestBytes) dispatch(c);
}

void HttpFront::dispatch(Conn& c) {
  ::epoll_ctl(m_epollFd, EPOLL_CTL_DEL, c.fd, nullptr);
  c.state = Conn::State::busy;
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
    if (c->state != Conn::State::busy && now >= c->deadline)
      expired.emplace_back(fd, c->state != Conn::State::idle || !c->buf.empty());
  for (auto [fd, partial] : expired) {
    if (partial) reply(*m_conns[fd], "408 Request Timeout");
    else closeConn(fd);
  }
}

void HttpFront::takeReturned() {
  std::vector<std::pair<Conn*, bool>> back;
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
    c->state = Conn::State::idle;
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
    Conn* c = nullptr;
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

bool HttpFront::serveOne(Conn& c) {
  ConnStream stream(c, m_limits);
  const bool closeConnection =
      c.closeAfter || c.served + 1 >= m_limits.maxRequestsPerConnection || m_stopping.load();
  bool closed = false;
  bool ok = false;
  t_clientFd = &c.fd;
  try {
    ok = m_serve(stream, closeConnection, closed);
  } catch (const std::exception& e) {
    log_error(std::string("server: request failed: ") + e.what());
  } catch (...) {
    log_error("server: request failed");
  }
  t_clientFd = nullptr;
  c.buf.erase(0, stream.consumed());
  ++c.served;
  return ok && !closed && !closeConnection;
}

}  // namespace exl::server
