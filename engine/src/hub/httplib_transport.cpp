// The Hub client's transport for `exl`: cpp-httplib (Debian's split build, TLS through OpenSSL), a fresh
// connection per request so several downloads can run at once.
#include <httplib.h>

#include "exl/hub.h"

namespace exl::hub {

namespace {

class HttplibTransport : public Transport {
 public:
  HttpResponse send(const HttpRequest& rq, const BodySink& sink) override {
    const auto scheme_end = rq.url.find("://");
    if (scheme_end == std::string::npos) throw HubError(HubErrorKind::network, "not an absolute URL", rq.url);
    const auto path_start = rq.url.find('/', scheme_end + 3);
    const std::string origin = rq.url.substr(0, path_start);
    const std::string path = path_start == std::string::npos ? "/" : rq.url.substr(path_start);

    httplib::Client cli(origin);
    if (!cli.is_valid()) throw HubError(HubErrorKind::network, "cannot use this URL (https needs OpenSSL)", rq.url);
    cli.set_connection_timeout(15);
    cli.set_read_timeout(60);
    cli.set_follow_location(false);
    httplib::Headers headers{{"User-Agent", "exl-studio (huggingface_hub-compatible)"}};
    for (const auto& [k, v] : rq.headers) headers.emplace(k, v);

    HttpResponse out;
    auto on_head = [&](const httplib::Response& r) {
      out.status = r.status;
      for (const auto& [k, v] : r.headers) {
        std::string key = k;
        for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        out.headers[key] = v;
      }
      return true;
    };
    auto on_body = [&](const char* d, std::size_t n) {
      if (sink && (out.status == 200 || out.status == 206)) return sink(out, d, n);
      if (out.body.size() < (16u << 20)) out.body.append(d, n);
      return true;
    };
    httplib::Result res = rq.method == "HEAD" ? cli.Head(path, headers) : cli.Get(path, headers, on_head, on_body);
    if (!res) {
      if (res.error() == httplib::Error::Canceled)
        throw HubError(HubErrorKind::cancelled, "transfer stopped", rq.url);
      const auto e = res.error();
      const std::string why = e == httplib::Error::Read ? "the connection was closed before the end of the answer"
                              : e == httplib::Error::Connection ? "cannot connect"
                                                                 : "the request failed";
      throw HubError(HubErrorKind::network, why + " (" + origin + ", " + httplib::to_string(e) + ")", rq.url);
    }
    if (rq.method == "HEAD") on_head(*res);
    return out;
  }
};

}  // namespace

std::unique_ptr<Transport> make_httplib_transport() { return std::make_unique<HttplibTransport>(); }

}  // namespace exl::hub
