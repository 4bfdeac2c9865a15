// The Hub client's engine API with an in-memory transport (a fake Hub with a CDN host): progress reports,
// cancellation through std::stop_token keeping the partial file and resuming it with Range, the token sent
// to the Hub but not to the CDN, HF_HUB_OFFLINE, configuration from the environment, names and patterns.
// The protocol itself is checked against a real-protocol server in tests/hub.
#include <openssl/evp.h>

#include <cstdlib>
#include <functional>
#include <fstream>
#include <mutex>
#include <random>

#include "exl/hub.h"
#include "exl_test.h"

namespace {

namespace fs = std::filesystem;
using namespace exl::hub;

std::string sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr);
  std::string out;
  const char* hex = "0123456789abcdef";
  for (unsigned i = 0; i < n; ++i) out += std::string{hex[md[i] >> 4], hex[md[i] & 15]};
  return out;
}

struct FakeHub : Transport {
  const std::string commit = std::string(40, 'c');
  const std::string config = R"({"model_type": "llama", "quantization_config": {"quant_method": "exl2", "bits": 4.0}})";
  const std::string config_oid = std::string(40, 'a');
  std::string weights;
  std::string weights_sha;
  std::mutex m;
  std::vector<HttpRequest> seen;
  std::function<void(std::size_t)> on_chunk;  // called with each chunk's end offset

  FakeHub() {
    std::mt19937 rng(7);
    weights.resize(3 << 20);
    for (auto& c : weights) c = static_cast<char>(rng());
    weights_sha = sha256_hex(weights);
  }

  static HttpResponse json(const std::string& body) { return {200, {{"content-type", "application/json"}}, body}; }

  HttpResponse send(const HttpRequest& rq, const BodySink& sink) override {
    {
      std::lock_guard lock(m);
      seen.push_back(rq);
    }
    const std::string hub = "http://hub.test", cdn = "http://cdn.test";
    if (rq.url == hub + "/api/models/org/m/revision/main") return json(R"({"id": "org/m", "sha": ")" + commit + "\"}");
    if (rq.url.rfind(hub + "/api/models/org/m/tree/" + commit, 0) == 0)
      return json(R"([{"type": "file", "path": "config.json", "size": )" + std::to_string(config.size()) +
                  R"(, "oid": ")" + config_oid + R"("}, {"type": "directory", "path": "sub", "oid": "x", "size": 0},
                     {"type": "file", "path": "model.safetensors", "size": 134, "oid": ")" + std::string(40, 'b') +
                  R"(", "lfs": {"oid": ")" + weights_sha + R"(", "size": )" + std::to_string(weights.size()) + "}}]");
    if (rq.url == hub + "/org/m/resolve/" + commit + "/config.json") return body(rq, sink, config);
    if (rq.url == hub + "/org/m/resolve/" + commit + "/model.safetensors")
      return {302, {{"location", cdn + "/blob/" + weights_sha}, {"x-linked-size", std::to_string(weights.size())}}, {}};
    if (rq.url == cdn + "/blob/" + weights_sha) return body(rq, sink, weights);
    return {404, {{"x-error-code", "EntryNotFound"}}, {}};
  }

  HttpResponse body(const HttpRequest& rq, const BodySink& sink, const std::string& data) {
    std::size_t start = 0;
    for (const auto& [k, v] : rq.headers)
      if (k == "Range") start = std::stoull(v.substr(6));
    HttpResponse head{start ? 206 : 200, {}, {}};
    for (std::size_t off = start; off < data.size(); off += 65536) {
      const std::size_t n = std::min<std::size_t>(65536, data.size() - off);
      if (on_chunk) on_chunk(off + n);
      if (!sink(head, data.data() + off, n)) throw HubError(HubErrorKind::cancelled, "transfer stopped", rq.url);
    }
    return head;
  }

  std::vector<HttpRequest> take() {
    std::lock_guard lock(m);
    return std::exchange(seen, {});
  }
};

DownloadRequest req(const std::string& rev, std::vector<std::string> include = {}, int parallel = 4) {
  DownloadRequest r;
  r.repo = "org/m";
  r.revision = rev;
  r.include = std::move(include);
  r.parallel = parallel;
  return r;
}

HubConfig config_in(const fs::path& dir) {
  HubConfig c;
  c.endpoint = "http://hub.test";
  c.cache_dir = dir;
  return c;
}

std::string header(const HttpRequest& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return {};
}

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

}  // namespace

EXL_TEST(hub, names_and_patterns) {
  CHECK_EQ(repo_folder_name("turboderp/Llama-3-8B-exl2"), std::string("models--turboderp--Llama-3-8B-exl2"));
  CHECK(parse_repo_ref("org/name:4.0bpw") == std::make_pair(std::string("org/name"), std::string("4.0bpw")));
  CHECK(parse_repo_ref("org/name") == std::make_pair(std::string("org/name"), std::string("main")));
  CHECK_THROWS_ERROR(parse_repo_ref("name-only"), exl::ErrorKind::invalid_argument, "ORG/NAME");
  CHECK_THROWS_ERROR(parse_repo_ref("a/b/c"), exl::ErrorKind::invalid_argument, "ORG/NAME");
  CHECK(glob_match("*.safetensors", "sub/model.safetensors"));  // fnmatch: * crosses folders, as the Hub's filters
  CHECK(glob_match("4.0bpw/*", "4.0bpw/config.json"));
  CHECK(!glob_match("4.0bpw/*", "6.0bpw/config.json"));
  CHECK(glob_match("model-0000[1-3]-of-*.safetensors", "model-00002-of-00004.safetensors"));
  CHECK(!glob_match("model-0000[1-3]-of-*.safetensors", "model-00004-of-00004.safetensors"));
  CHECK(glob_match("config.jso?", "config.json"));
  CHECK(!glob_match("*.json", "config.json.bak"));
}

EXL_TEST(hub, download_progress_and_layout) {
  exl::test::TempDir dir("exl_hub");
  auto hub = std::make_shared<FakeHub>();
  HubClient client(config_in(dir.path()), hub);
  std::vector<DownloadProgress> seen;
  auto r = client.download(req("main"), [&](const DownloadProgress& p) { seen.push_back(p); });
  CHECK_EQ(r.commit, hub->commit);
  CHECK_EQ(r.files, 2);
  CHECK_EQ(r.fetched, 2);
  CHECK(!seen.empty() && seen.back().finished);
  for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i].bytes_done >= seen[i - 1].bytes_done);
  CHECK_EQ(seen.back().bytes_done, std::int64_t(hub->weights.size() + hub->config.size()));
  CHECK_EQ(seen.back().bytes_total, seen.back().bytes_done);
  CHECK_EQ(seen.back().files_done, 2);
  const fs::path repo = dir.path() / "models--org--m";
  CHECK_EQ(read_all(repo / "refs" / "main"), hub->commit);
  CHECK_EQ(fs::read_symlink(r.snapshot / "model.safetensors").string(), "../../blobs/" + hub->weights_sha);
  CHECK_EQ(fs::read_symlink(r.snapshot / "config.json").string(), "../../blobs/" + hub->config_oid);
  CHECK(read_all(r.snapshot / "model.safetensors") == hub->weights);
  CHECK_EQ(sha256_file(r.snapshot / "model.safetensors"), hub->weights_sha);
  const auto cached = scan_cache(dir.path());
  CHECK_EQ(cached.size(), std::size_t(1));
  CHECK_EQ(cached[0].repo, std::string("org/m"));
  CHECK(cached[0].branches == std::vector<std::string>{"main"});
  CHECK(find_cached(dir.path(), "org/m", "main") == r.snapshot);
  CHECK(!find_cached(dir.path(), "org/m", "other"));
}

EXL_TEST(hub, cancel_keeps_partial_and_resumes) {
  exl::test::TempDir dir("exl_hub");
  auto hub = std::make_shared<FakeHub>();
  HubClient client(config_in(dir.path()), hub);
  std::stop_source stop;  // the user cancels once a bit over 1 MiB has arrived
  hub->on_chunk = [&](std::size_t end) {
    if (end > (1u << 20)) stop.request_stop();
  };
  CHECK_THROWS_ERROR(client.download(req("main", {"*.safetensors"}, 1), {}, stop.get_token()),
                     exl::ErrorKind::cancelled, "resumed next time");
  hub->on_chunk = {};
  const fs::path blobs = dir.path() / "models--org--m" / "blobs";
  const fs::path inc = blobs / (hub->weights_sha + ".incomplete");
  CHECK(!fs::exists(blobs / hub->weights_sha));
  CHECK(fs::exists(inc));
  const auto kept = fs::file_size(inc);
  CHECK(kept == (1u << 20));  // the chunk that arrived after the cancel was not written
  hub->take();
  auto r = client.download(req("main", {"*.safetensors"}, 1));
  CHECK_EQ(r.resumed_bytes, std::int64_t(kept));
  CHECK_EQ(r.bytes_fetched, std::int64_t(hub->weights.size() - kept));
  CHECK(read_all(r.snapshot / "model.safetensors") == hub->weights);
  CHECK(!fs::exists(r.snapshot / "config.json"));  // not included
  bool ranged = false;
  for (const auto& rq : hub->take())
    if (rq.url.find("cdn.test") != std::string::npos) ranged = header(rq, "Range") == "bytes=" + std::to_string(kept) + "-";
  CHECK(ranged);
}

EXL_TEST(hub, token_goes_to_the_hub_only) {
  exl::test::TempDir dir("exl_hub");
  auto hub = std::make_shared<FakeHub>();
  HubConfig cfg = config_in(dir.path());
  cfg.token = "hf_secret";
  HubClient client(cfg, hub);
  client.download(req("main"));
  int hub_calls = 0, cdn_calls = 0;
  for (const auto& rq : hub->take()) {
    if (rq.url.find("cdn.test") != std::string::npos) {
      ++cdn_calls;
      CHECK_EQ(header(rq, "Authorization"), std::string());
    } else {
      ++hub_calls;
      CHECK_EQ(header(rq, "Authorization"), std::string("Bearer hf_secret"));
    }
  }
  CHECK(hub_calls >= 3 && cdn_calls == 1);
}

EXL_TEST(hub, offline_answers_from_the_cache) {
  exl::test::TempDir dir("exl_hub");
  auto hub = std::make_shared<FakeHub>();
  const auto snap = HubClient(config_in(dir.path()), hub).download(req("main")).snapshot;
  hub->take();
  HubConfig cfg = config_in(dir.path());
  cfg.offline = true;
  HubClient offline(cfg, hub);
  auto r = offline.download(req("main"));
  CHECK(r.snapshot == snap);
  CHECK_EQ(r.files, 2);
  CHECK_THROWS_ERROR(offline.download(req("v2")), exl::ErrorKind::io, "HF_HUB_OFFLINE");
  CHECK_THROWS_ERROR(offline.search(SearchQuery{"llama", {}, {}, SearchSort::downloads, 30}), exl::ErrorKind::io, "HF_HUB_OFFLINE");
  CHECK(hub->take().empty());
}

EXL_TEST(hub, config_from_environment) {
  exl::test::TempDir dir("exl_hub");
  const char* names[] = {"HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_TOKEN",
                         "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE"};
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  for (const char* n : names) {
    const char* v = std::getenv(n);
    saved.emplace_back(n, v ? std::optional<std::string>(v) : std::nullopt);
    unsetenv(n);
  }
  setenv("HF_HOME", dir.path().c_str(), 1);
  setenv("HF_ENDPOINT", "http://127.0.0.1:9/", 1);
  setenv("HF_HUB_OFFLINE", "True", 1);
  std::ofstream(dir.path() / "token") << "hf_from_file\n";
  HubConfig a = HubConfig::from_environment();
  setenv("HF_TOKEN", "hf_from_env", 1);
  setenv("HF_HUB_CACHE", (dir.path() / "elsewhere").c_str(), 1);
  setenv("HF_HUB_OFFLINE", "0", 1);
  HubConfig b = HubConfig::from_environment();
  for (const auto& [n, v] : saved) {
    if (v) setenv(n.c_str(), v->c_str(), 1);
    else unsetenv(n.c_str());
  }
  CHECK_EQ(a.endpoint, std::string("http://127.0.0.1:9"));
  CHECK(a.cache_dir == dir.path() / "hub");
  CHECK_EQ(a.token, std::string("hf_from_file"));
  CHECK(a.offline);
  CHECK_EQ(b.token, std::string("hf_from_env"));
  CHECK(b.cache_dir == dir.path() / "elsewhere");
  CHECK(!b.offline);
}
