// The huggingface_hub cache layout: folder names, refs, snapshots, and reading what is there.
#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <set>

#include "exl/hub.h"

namespace exl::hub {

namespace fs = std::filesystem;

std::string repo_folder_name(const std::string& repo) {
  std::string out = "models--";
  for (char c : repo) {
    if (c == '/') out += "--";
    else out += c;
  }
  return out;
}

std::pair<std::string, std::string> parse_repo_ref(const std::string& text) {
  std::string repo = text, rev = "main";
  if (auto colon = text.find(':'); colon != std::string::npos) {
    repo = text.substr(0, colon);
    rev = text.substr(colon + 1);
  }
  auto slash = repo.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == repo.size() ||
      repo.find('/', slash + 1) != std::string::npos || rev.empty() || repo.find("..") != std::string::npos)
    throw Error(ErrorKind::invalid_argument, "a Hub model is named ORG/NAME or ORG/NAME:BRANCH", {}, text);
  return {repo, rev};
}

bool glob_match(const std::string& p, const std::string& s) {
  std::size_t pi = 0, si = 0, star = std::string::npos, mark = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '[') {
      auto close = p.find(']', pi + 1);
      if (close != std::string::npos) {
        bool neg = p[pi + 1] == '!' || p[pi + 1] == '^';
        bool hit = false;
        for (std::size_t k = pi + 1 + (neg ? 1 : 0); k < close; ++k) {
          if (k + 2 < close && p[k + 1] == '-') {
            hit |= s[si] >= p[k] && s[si] <= p[k + 2];
            k += 2;
          } else {
            hit |= s[si] == p[k];
          }
        }
        if (hit != neg) {
          pi = close + 1;
          ++si;
          continue;
        }
      }
    } else if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
      ++pi;
      ++si;
      continue;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
      continue;
    }
    if (star == std::string::npos) return false;
    pi = star + 1;
    si = ++mark;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

static std::string read_small(const fs::path& p) {
  std::ifstream f(p);
  std::string s((std::istreambuf_iterator<char>(f)), {});
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<CachedSnapshot> scan_cache(const fs::path& cache_dir) {
  std::vector<CachedSnapshot> out;
  std::error_code ec;
  if (!fs::is_directory(cache_dir, ec)) return out;
  std::set<fs::path> repos;
  for (const auto& e : fs::directory_iterator(cache_dir, ec))
    if (e.is_directory() && e.path().filename().string().rfind("models--", 0) == 0) repos.insert(e.path());
  for (const auto& dir : repos) {
    std::string name = dir.filename().string().substr(8);
    auto sep = name.find("--");
    if (sep == std::string::npos) continue;
    const std::string repo = name.substr(0, sep) + "/" + name.substr(sep + 2);
    std::vector<std::pair<std::string, std::string>> refs;  // branch, commit
    if (fs::is_directory(dir / "refs", ec))
      for (const auto& r : fs::recursive_directory_iterator(dir / "refs", ec))
        if (r.is_regular_file()) refs.emplace_back(fs::relative(r.path(), dir / "refs").generic_string(), read_small(r.path()));
    std::set<fs::path> snaps;
    if (fs::is_directory(dir / "snapshots", ec))
      for (const auto& s : fs::directory_iterator(dir / "snapshots", ec))
        if (s.is_directory()) snaps.insert(s.path());
    for (const auto& s : snaps) {
      CachedSnapshot c{repo, s.filename().string(), {}, s};
      for (const auto& [branch, commit] : refs)
        if (commit == c.commit) c.branches.push_back(branch);
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::optional<fs::path> find_cached(const fs::path& cache_dir, const std::string& repo, const std::string& revision) {
  const fs::path dir = cache_dir / repo_folder_name(repo);
  std::string commit = revision;
  std::error_code ec;
  if (fs::is_regular_file(dir / "refs" / revision, ec)) commit = read_small(dir / "refs" / revision);
  const fs::path snap = dir / "snapshots" / commit;
  if (!commit.empty() && fs::is_directory(snap, ec)) return snap;
  return std::nullopt;
}

std::string sha256_file(const fs::path& path, std::stop_token stop) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, "cannot open for reading", path.string());
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 20);
  while (f) {
    if (stop.stop_requested()) throw HubError(HubErrorKind::cancelled, "cancelled", path.string());
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (f.gcount() > 0) EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(f.gcount()));
  }
  if (f.bad()) throw Error(ErrorKind::io, "read error", path.string());
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &n);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

}  // namespace exl::hub
