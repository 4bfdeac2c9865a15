#include "http_conn.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace exl::server {

namespace {

// The connection the calling worker serves, so that handlers can see a vanished client.
thread_local const int* t_clientFd = nullptr;

bool peerGone(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  if (::poll(&p, 1, 0) < 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace

void setServedConnection(const int* fd) { t_clientFd = fd; }

bool clientDisconnected() { return t_clientFd && peerGone(*t_clientFd); }

void socketAddress(const sockaddr_storage& ss, std::string& ip, int& port) {
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

HttpConnStream::HttpConnStream(HttpConn& c, const FrontLimits& l)
    : m_c(c), m_limits(l), m_end(c.readThrough ? c.buf.size() : std::min(c.requestBytes, c.buf.size())),
      m_bodyDeadline(Clock::now() + l.bodyTimeout) {}

bool HttpConnStream::is_readable() const {
  return m_pos < m_end || (m_c.readThrough && wait(POLLIN, m_bodyDeadline));
}

bool HttpConnStream::is_writable() const {
  pollfd p{m_c.fd, POLLOUT | POLLRDHUP, 0};
  if (::poll(&p, 1, pollMs(m_limits.writeTimeout)) <= 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0 && (p.revents & POLLOUT);
}

ssize_t HttpConnStream::read(char* ptr, size_t size) {
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

ssize_t HttpConnStream::write(const char* ptr, size_t size) {
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

void HttpConnStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = m_c.addr;
  port = m_c.port;
}

void HttpConnStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  port = 0;
  ip.clear();
  if (::getsockname(m_c.fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) socketAddress(ss, ip, port);
}

// cpp-httplib 0.11 uses the descriptor only to refuse ones select() cannot watch; this stream
// waits with poll(), so any descriptor is served.
socket_t HttpConnStream::socket() const { return std::min(m_c.fd, FD_SETSIZE - 1); }

bool HttpConnStream::wait(short events, Clock::time_point deadline) const {
  for (;;) {
    pollfd p{m_c.fd, events, 0};
    const int r = ::poll(&p, 1, pollMs(deadline - Clock::now()));
    if (r > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0 && !(p.revents & POLLNVAL);
    if (r == 0 || errno != EINTR) return false;
  }
}

}  // namespace exl::server
