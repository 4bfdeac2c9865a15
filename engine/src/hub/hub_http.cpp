// The client's HTTP layer: configuration from the environment, URLs, one request with the token and
// redirects, and the Hub's error answers turned into HubError messages that say what to do.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "exl/hub.h"
#include "hub_internal.h"

namespace exl::hub {

namespace {

ErrorKind base_kind(HubErrorKind k) {
  switch (k) {
    case HubErrorKind::cancelled: return ErrorKind::cancelled;
    case HubErrorKind::not_found: return ErrorKind::invalid_argument;
    case HubErrorKind::bad_reply: return ErrorKind::format;
    default: return ErrorKind::io;
  }
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// "scheme://host:port" of an absolute URL (empty for a relative one).
std::string origin_of(const std::string& url) {
  auto p = url.find("://");
  if (p == std::string::npos) return {};
  auto slash = url.find('/', p + 3);
  return url.substr(0, slash);
}

}  // namespace

HubError::HubError(HubErrorKind kind, std::string message, std::string item, int http_status)
    : Error(base_kind(kind), std::move(message), {}, std::move(item)), hub_kind_(kind), status_(http_status) {}

std::string HttpResponse::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

bool env_flag(const char* name) {
  std::string v = env(name);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v == "1" || v == "on" || v == "yes" || v == "true";
}

HubConfig HubConfig::from_environment() {
  HubConfig c;
  if (std::string e = env("HF_ENDPOINT"); !e.empty()) {
    while (!e.empty() && e.back() == '/') e.pop_back();
    c.endpoint = e;
  }
  std::filesystem::path home;
  if (std::string h = env("HF_HOME"); !h.empty()) {
    home = h;
  } else {
    std::string xdg = env("XDG_CACHE_HOME");
    home = xdg.empty() ? std::filesystem::path(env("HOME")) / ".cache" / "huggingface"
                       : std::filesystem::path(xdg) / "huggingface";
  }
  std::string cache = env("HF_HUB_CACHE");
  if (cache.empty()) cache = env("HUGGINGFACE_HUB_CACHE");
  c.cache_dir = cache.empty() ? home / "hub" : std::filesystem::path(cache);
  c.token = trim(env("HF_TOKEN"));
  if (c.token.empty()) c.token = trim(env("HUGGING_FACE_HUB_TOKEN"));
  if (c.token.empty()) {
    std::string path = env("HF_TOKEN_PATH");
    std::ifstream f(path.empty() ? home / "token" : std::filesystem::path(path));
    if (f) c.token = trim(std::string(std::istreambuf_iterator<char>(f), {}));
  }
  c.offline = env_flag("HF_HUB_OFFLINE");
  return c;
}

std::string url_quote(const std::string& s, bool keep_slash) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~' || (keep_slash && ch == '/')) {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

HubClient::HubClient(HubConfig config, std::shared_ptr<Transport> transport)
    : config_(std::move(config)), transport_(std::move(transport)) {}

std::string HubClient::resolve_url(const std::string& repo, const std::string& revision, const std::string& path) const {
  return config_.endpoint + "/" + repo + "/resolve/" + url_quote(revision, false) + "/" + url_quote(path, true);
}

void HubClient::require_online(const std::string& what) const {
  if (config_.offline)
    throw HubError(HubErrorKind::offline,
                   "HF_HUB_OFFLINE is set, so the Hub is not contacted; unset it (or set HF_HUB_OFFLINE=0) to " + what,
                   what);
}

HttpResponse HubClient::request(HttpRequest req, const BodySink& sink, const std::string& what) const {
  const std::string item = what.empty() ? req.url : what;
  require_online(item);
  const std::string first_origin = origin_of(req.url);
  for (int hop = 0; hop < 6; ++hop) {
    HttpRequest r = req;
    // The token goes to the Hub only, never to the storage host a download is redirected to.
    if (!config_.token.empty() && origin_of(r.url) == first_origin)
      r.headers.emplace_back("Authorization", "Bearer " + config_.token);
    HttpResponse resp = transport_->send(r, sink);
    if (resp.status >= 300 && resp.status < 400 && resp.status != 304) {
      std::string loc = resp.header("location");
      if (loc.empty()) throw HubError(HubErrorKind::bad_reply, "redirect without a Location header", item, resp.status);
      if (loc.rfind("http://", 0) != 0 && loc.rfind("https://", 0) != 0)
        loc = origin_of(req.url) + (loc.front() == '/' ? "" : "/") + loc;
      req.url = loc;
      continue;
    }
    if (resp.status >= 400) throw_http_error(resp, item);
    return resp;
  }
  throw HubError(HubErrorKind::bad_reply, "too many redirects", item);
}

void HubClient::throw_http_error(const HttpResponse& resp, const std::string& item) const {
  const std::string code = resp.header("x-error-code");
  std::string msg = resp.header("x-error-message");
  const int s = resp.status;
  // The repository's page, when the item names one ("ORG/NAME:REV/PATH").
  std::string where = config_.endpoint;
  if (auto colon = item.find(':'); colon != std::string::npos && item.find("://") == std::string::npos &&
                                   item.find('/') < colon)
    where += "/" + item.substr(0, colon);
  if (code == "GatedRepo" || ((s == 401 || s == 403) && code != "RepoNotFound")) {
    if (config_.token.empty())
      throw HubError(HubErrorKind::auth,
                     "this repository is gated and needs a Hugging Face token (HTTP " + std::to_string(s) +
                         "): accept its terms on " + where +
                         ", create a read token in your account settings, then set HF_TOKEN or save the token in "
                         "$HF_HOME/token (~/.cache/huggingface/token)",
                     item, s);
    throw HubError(HubErrorKind::auth,
                   "the token was refused for this repository (HTTP " + std::to_string(s) +
                       "): accept the repository's terms on " + where +
                       " with the account the token belongs to, and check that the token (HF_TOKEN or "
                       "$HF_HOME/token) has read access" + (msg.empty() ? "" : " (" + msg + ")"),
                   item, s);
  }
  if (code == "RepoNotFound" || (s == 404 && code.empty()))
    throw HubError(HubErrorKind::not_found,
                   "repository not found (HTTP " + std::to_string(s) + "): check the name; a private repository "
                   "needs HF_TOKEN",
                   item, s);
  if (code == "RevisionNotFound")
    throw HubError(HubErrorKind::not_found, "no such branch, tag or commit" + (msg.empty() ? "" : ": " + msg), item, s);
  if (code == "EntryNotFound")
    throw HubError(HubErrorKind::not_found, "no such file in this revision" + (msg.empty() ? "" : ": " + msg), item, s);
  if (msg.empty()) msg = resp.body.substr(0, 200);
  throw HubError(HubErrorKind::http, "HTTP " + std::to_string(s) + (msg.empty() ? "" : ": " + msg), item, s);
}

}  // namespace exl::hub
