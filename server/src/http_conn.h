// One client connection of the connection front (http_front.h), and the cpp-httplib stream a
// worker serves its request through: reads come from the request buffered by the front (then, for
// a chunked body, from the socket until the body deadline); writes go to the socket, waiting at
// most the write timeout for room.
#pragma once
#include <httplib.h>

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <string>

#include "http_front.h"

namespace exl::server {

struct HttpConn {
  using Clock = std::chrono::steady_clock;
  enum class State { idle, header, body, busy, draining };  // draining: answered, reading to the close
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

class HttpConnStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;
  HttpConnStream(HttpConn& c, const FrontLimits& l);
  std::size_t consumed() const { return m_pos; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override;

 private:
  bool wait(short events, Clock::time_point deadline) const;

  HttpConn& m_c;
  const FrontLimits& m_limits;
  std::size_t m_pos = 0;
  std::size_t m_end;
  Clock::time_point m_bodyDeadline;
};

// Address and port of a socket address, as text.
void socketAddress(const sockaddr_storage& ss, std::string& ip, int& port);
// A duration as poll()'s milliseconds (0 when past).
int pollMs(std::chrono::steady_clock::duration d);
// Marks the connection the calling worker serves (nullptr: none), for clientDisconnected().
void setServedConnection(const int* fd);

}  // namespace exl::server
