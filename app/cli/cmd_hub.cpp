// exl pull / search / repo / ls: models from the Hugging Face Hub, in the huggingface_hub cache.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "exl/error.h"
#include "exl/hub.h"

namespace exl::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

hub::HubClient make_client() {
  return hub::HubClient(hub::HubConfig::from_environment(), std::shared_ptr<hub::Transport>(hub::make_httplib_transport()));
}

std::string human(double b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000 && u < 4) {
    b /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", b, units[u]);
  return buf;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ','))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

// A model folder's format, bpw and size from its config.json and files (no weights read).
struct LocalModel {
  std::string name, format, path;
  double bpw = 0;
  std::int64_t bytes = 0;
};

std::optional<LocalModel> describe_folder(const fs::path& dir, const std::string& name) {
  std::ifstream f(dir / "config.json");
  if (!f) return std::nullopt;
  LocalModel m{name, "unknown", dir.string()};
  try {
    json c = json::parse(f);
    if (auto q = c.find("quantization_config"); q != c.end() && q->is_object()) {
      m.format = q->value("quant_method", std::string("quantized"));
      if (auto b = q->find("bits"); b != q->end() && b->is_number()) m.bpw = b->get<double>();
    } else {
      m.format = c.value("torch_dtype", std::string(c.value("dtype", std::string("fp16"))));
    }
  } catch (const json::exception&) {
    m.format = "bad config.json";
  }
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file(ec)) m.bytes += static_cast<std::int64_t>(e.file_size(ec));  // follows snapshot links
  return m;
}

void print_models(const std::vector<LocalModel>& ms, bool as_json) {
  if (as_json) {
    json arr = json::array();
    for (const auto& m : ms)
      arr.push_back({{"name", m.name}, {"format", m.format}, {"bpw", m.bpw}, {"bytes", m.bytes}, {"path", m.path}});
    std::printf("%s\n", arr.dump(2).c_str());
    return;
  }
  std::printf("%-44s %-8s %6s %10s  %s\n", "MODEL", "FORMAT", "BPW", "SIZE", "PATH");
  for (const auto& m : ms) {
    char bpw[16] = "-";
    if (m.bpw > 0) std::snprintf(bpw, sizeof bpw, "%.2f", m.bpw);
    std::printf("%-44s %-8s %6s %10s  %s\n", m.name.c_str(), m.format.c_str(), bpw, human(double(m.bytes)).c_str(),
                m.path.c_str());
  }
}

}  // namespace

bool looks_like_hub_ref(const std::string& text) {
  try {
    hub::parse_repo_ref(text);
    return text.front() != '.' && text.front() != '/';
  } catch (const Error&) {
    return false;
  }
}

std::string hub_config_json(const std::string& ref) {
  auto [repo, rev] = hub::parse_repo_ref(ref);
  auto client = make_client();
  if (client.config().offline) {  // the cached copy, if any
    if (auto snap = hub::find_cached(client.config().cache_dir, repo, rev)) {
      std::ifstream f(*snap / "config.json");
      if (f) return std::string((std::istreambuf_iterator<char>(f)), {});
    }
  }
  return client.read_file(repo, rev, "config.json");
}

void hub_skeleton(const std::string& ref, const fs::path& dir) {
  auto [repo, rev] = hub::parse_repo_ref(ref);
  make_client().fetch_headers(repo, rev, dir);
}

int cmd_search(const Args& a) {
  a.check_known({"--exl2", "--exl3", "--sort", "--limit", "--author", "--json"});
  hub::SearchQuery q;
  for (const auto& p : a.positional()) q.text += (q.text.empty() ? "" : " ") + p;
  if (a.has("--exl2")) q.tags.push_back("exl2");
  if (a.has("--exl3")) q.tags.push_back("exl3");
  q.author = a.get_or("--author", "");
  q.limit = a.get_int("--limit", 20);
  const std::string sort = a.get_or("--sort", "downloads");
  if (sort == "downloads") q.sort = hub::SearchSort::downloads;
  else if (sort == "recent") q.sort = hub::SearchSort::recent;
  else if (sort == "likes") q.sort = hub::SearchSort::likes;
  else if (sort == "relevance") q.sort = hub::SearchSort::relevance;
  else throw Error(ErrorKind::invalid_argument, "--sort is downloads, recent, likes or relevance, not '" + sort + "'");
  const auto found = make_client().search(q);
  if (a.has("--json")) {
    json arr = json::array();
    for (const auto& m : found)
      arr.push_back({{"id", m.id}, {"downloads", m.downloads}, {"likes", m.likes}, {"last_modified", m.last_modified},
                     {"tags", m.tags}, {"gated", m.gated}});
    std::printf("%s\n", arr.dump(2).c_str());
    return 0;
  }
  std::printf("%-48s %10s %7s  %-10s %s\n", "MODEL", "DOWNLOADS", "LIKES", "UPDATED", "FORMAT");
  for (const auto& m : found)
    std::printf("%-48s %10lld %7lld  %-10s %s%s\n", m.id.c_str(), static_cast<long long>(m.downloads),
                static_cast<long long>(m.likes), m.last_modified.substr(0, 10).c_str(),
                m.has_tag("exl3") ? "exl3" : m.has_tag("exl2") ? "exl2" : "-", m.gated ? " (gated)" : "");
  if (found.empty()) std::fprintf(stderr, "no models found\n");
  return 0;
}

int cmd_repo(const Args& a) {
  a.check_known({"--json"});
  if (a.positional().size() != 1) throw Error(ErrorKind::invalid_argument, "usage: exl repo ORG/NAME[:BRANCH]");
  const std::string text = a.positional()[0];
  auto [repo, rev] = hub::parse_repo_ref(text);
  const bool all = text.find(':') == std::string::npos;
  auto client = make_client();
  json out = {{"id", repo}, {"branches", json::array()}};
  for (const auto& r : client.refs(repo)) {
    if (!all && r.name != rev) continue;
    json b = {{"name", r.name}, {"commit", r.commit}, {"files", json::array()}};
    bool has_config = false;
    std::int64_t total = 0;
    for (const auto& f : client.files(repo, r.commit)) {
      b["files"].push_back({{"path", f.path}, {"size", f.size}, {"lfs_sha256", f.lfs_sha256}});
      total += f.size;
      has_config |= f.path == "config.json";
    }
    b["bytes"] = total;
    if (has_config) {
      try {
        json c = json::parse(client.read_file(repo, r.commit, "config.json"));
        if (auto q = c.find("quantization_config"); q != c.end()) b["quantization_config"] = *q;
        b["model_type"] = c.value("model_type", std::string());
      } catch (const json::exception& e) {
        b["config_error"] = e.what();
      }
    }
    out["branches"].push_back(b);
  }
  if (out["branches"].empty()) throw Error(ErrorKind::invalid_argument, "no such branch", repo, rev);
  if (a.has("--json")) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  for (const auto& b : out["branches"]) {
    std::string q = "-";
    if (b.contains("quantization_config") && b["quantization_config"].is_object()) {
      const auto& qc = b["quantization_config"];
      q = qc.value("quant_method", std::string("?")) + " " + (qc.contains("bits") ? qc["bits"].dump() : "?") + " bpw";
    }
    std::printf("%-16s %s  %3zu files %10s  %s\n", std::string(b["name"]).c_str(), std::string(b["commit"]).substr(0, 12).c_str(),
                b["files"].size(), human(double(b["bytes"].get<std::int64_t>())).c_str(), q.c_str());
  }
  return 0;
}

int cmd_pull(const Args& a) {
  a.check_known({"--include", "--parallel", "--retries", "--json", "--quiet"});
  if (a.positional().size() != 1)
    throw Error(ErrorKind::invalid_argument, "usage: exl pull ORG/NAME[:BRANCH] [--include PATTERN[,PATTERN]]");
  auto [repo, rev] = hub::parse_repo_ref(a.positional()[0]);
  hub::DownloadRequest rq{repo, rev, split_commas(a.get_or("--include", "")), a.get_int("--parallel", 4),
                          a.get_int("--retries", 3)};
  const bool quiet = a.has("--quiet");
  const bool tty = isatty(2);
  auto last = std::chrono::steady_clock::now() - std::chrono::seconds(10);
  auto progress = [&](const hub::DownloadProgress& p) {
    if (quiet) return;
    const auto now = std::chrono::steady_clock::now();
    if (!p.finished && !tty && now - last < std::chrono::seconds(2)) return;
    last = now;
    char eta[32] = "?";
    if (p.seconds_left >= 0) std::snprintf(eta, sizeof eta, "%.0f s", p.seconds_left);
    std::fprintf(stderr, "%s%s / %s  %s/s  %d/%d files  %s left%s", tty ? "\r\033[K" : "",
                 human(double(p.bytes_done)).c_str(), human(double(p.bytes_total)).c_str(),
                 human(p.bytes_per_second).c_str(), p.files_done, p.files_total, eta, tty && !p.finished ? "" : "\n");
  };
  const auto r = make_client().download(rq, progress);
  if (a.has("--json")) {
    json j = {{"snapshot", r.snapshot.string()}, {"commit", r.commit}, {"files", r.files}, {"fetched", r.fetched},
              {"bytes_fetched", r.bytes_fetched}, {"resumed_bytes", r.resumed_bytes},
              {"refetched_corrupt", r.refetched_corrupt}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    if (r.refetched_corrupt)
      std::fprintf(stderr, "%d cached file(s) failed their sha256 check and were fetched again\n", r.refetched_corrupt);
    std::printf("%s\n", r.snapshot.string().c_str());
  }
  return 0;
}

int cmd_ls(const Args& a) {
  a.check_known({"--dir", "--json"});
  std::vector<LocalModel> models;
  if (auto d = a.get("--dir")) {
    std::error_code ec;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(*d, ec))
      if (e.is_directory()) dirs.push_back(e.path());
    if (ec) throw Error(ErrorKind::io, "cannot list the folder: " + ec.message(), *d);
    std::sort(dirs.begin(), dirs.end());
    for (const auto& p : dirs)
      if (auto m = describe_folder(p, p.filename().string())) models.push_back(*m);
  }
  const auto cfg = hub::HubConfig::from_environment();
  for (const auto& s : hub::scan_cache(cfg.cache_dir)) {
    std::string name = s.repo + (s.branches.empty() ? "@" + s.commit.substr(0, 12) : ":" + s.branches.front());
    if (auto m = describe_folder(s.path, name)) {
      models.push_back(*m);
      continue;
    }
    // Bitrates in subfolders: one entry per folder holding a config.json.
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(s.path, ec))
      if (e.is_directory() && fs::exists(e.path() / "config.json"))
        if (auto m = describe_folder(e.path(), name + "/" + fs::relative(e.path(), s.path).generic_string()))
          models.push_back(*m);
  }
  print_models(models, a.has("--json"));
  return 0;
}

}  // namespace exl::cli
