// Downloads into the huggingface_hub cache: a revision's files (filtered by glob patterns) into blobs/<etag>,
// several at once, each resumed with HTTP Range from blobs/<etag>.incomplete, LFS files checked against
// their sha256 before they are renamed into place, then linked from snapshots/<commit>/<path>.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <thread>

#include "exl/hub.h"
#include "hub_internal.h"

namespace exl::hub {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

bool is_commit_hash(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", b, units[u]);
  return buf;
}

void write_text_atomically(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f.flush()) throw HubError(HubErrorKind::disk_full, "cannot write " + tmp.string(), tmp.string());
  }
  fs::rename(tmp, path);
}

// Progress shared by the download threads: totals, a speed over the last seconds, rate-limited reports.
class Tracker {
 public:
  Tracker(const ProgressFn& fn, std::int64_t total, int files) : fn_(fn) {
    p_.bytes_total = total;
    p_.files_total = files;
    samples_.emplace_back(Clock::now(), 0);
  }
  void add(std::int64_t bytes, const std::string& file) {
    std::lock_guard lock(m_);
    p_.bytes_done += bytes;
    p_.file = file;
    report(false);
  }
  // Bytes already on disk from an earlier run: counted as done, not as speed.
  void resumed(std::int64_t bytes, const std::string& file) {
    std::lock_guard lock(m_);
    p_.bytes_done += bytes;
    for (auto& s : samples_) s.second += bytes;
    p_.file = file;
  }
  void grow_total(std::int64_t bytes) {
    std::lock_guard lock(m_);
    p_.bytes_total += bytes;
  }
  void file_done(const std::string& file) {
    std::lock_guard lock(m_);
    ++p_.files_done;
    p_.file = file;
    report(false);
  }
  void finish() {
    std::lock_guard lock(m_);
    p_.finished = true;
    p_.seconds_left = 0;
    report(true);
  }

 private:
  void report(bool force) {
    const auto now = Clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    samples_.emplace_back(now, p_.bytes_done);
    while (samples_.size() > 2 && now - samples_.front().first > std::chrono::seconds(5)) samples_.pop_front();
    const double dt = std::chrono::duration<double>(now - samples_.front().first).count();
    if (dt > 0.05) p_.bytes_per_second = static_cast<double>(p_.bytes_done - samples_.front().second) / dt;
    if (!p_.finished)
      p_.seconds_left = p_.bytes_per_second > 1 ? static_cast<double>(p_.bytes_total - p_.bytes_done) / p_.bytes_per_second : -1;
    if (fn_) fn_(p_);
  }

  const ProgressFn& fn_;
  std::mutex m_;
  DownloadProgress p_;
  std::deque<std::pair<Clock::time_point, std::int64_t>> samples_;
  Clock::time_point last_{};
};

struct FileCounts {
  std::mutex m;
  int fetched = 0;
  int corrupt = 0;
  std::int64_t bytes = 0;
  std::int64_t resumed = 0;
};

void link_snapshot(const fs::path& snap, const RepoFile& f, const fs::path& blob) {
  const fs::path link = snap / fs::path(f.path);
  fs::create_directories(link.parent_path());
  std::error_code ec;
  fs::remove(link, ec);
  fs::create_symlink(fs::relative(blob, link.parent_path()), link);
}

}  // namespace

DownloadResult HubClient::download(const DownloadRequest& rq, const ProgressFn& progress, std::stop_token stop) const {
  const std::string ref = rq.repo + ":" + rq.revision;
  const fs::path repo_dir = config_.cache_dir / repo_folder_name(rq.repo);
  DownloadResult result;
  if (config_.offline) {
    auto snap = find_cached(config_.cache_dir, rq.repo, rq.revision);
    if (!snap)
      throw HubError(HubErrorKind::offline,
                     "HF_HUB_OFFLINE is set and this model is not in the cache (" + config_.cache_dir.string() +
                         "); unset HF_HUB_OFFLINE to download it",
                     ref);
    result.snapshot = *snap;
    result.commit = snap->filename().string();
    for (const auto& e : fs::recursive_directory_iterator(*snap))
      if (!e.is_directory()) ++result.files;
    return result;
  }

  const std::string commit = is_commit_hash(rq.revision) ? rq.revision : model_info(rq.repo, rq.revision).commit;
  std::vector<RepoFile> wanted;
  for (auto& f : files(rq.repo, commit)) {
    bool match = rq.include.empty();
    for (const auto& p : rq.include) match = match || glob_match(p, f.path);
    if (match) wanted.push_back(std::move(f));
  }
  if (wanted.empty())
    throw HubError(HubErrorKind::not_found, "no file of this revision matches the --include patterns", ref);

  // What is missing, and does it fit on the disk?
  std::int64_t needed = 0, to_fetch = 0;
  std::error_code ec;
  for (const auto& f : wanted) {
    const fs::path blob = repo_dir / "blobs" / f.etag();
    if (fs::exists(blob, ec) && static_cast<std::int64_t>(fs::file_size(blob, ec)) == f.size) continue;
    const fs::path inc = blob.string() + ".incomplete";
    std::int64_t have = fs::exists(inc, ec) ? static_cast<std::int64_t>(fs::file_size(inc, ec)) : 0;
    if (have > f.size) have = 0;
    needed += f.size - have;
    to_fetch += f.size;
  }
  fs::create_directories(repo_dir / "blobs", ec);
  if (ec) throw HubError(HubErrorKind::disk_full, "cannot create the cache folder: " + ec.message(), repo_dir.string());
  const auto space = fs::space(repo_dir, ec);
  const std::int64_t reserve = 16ll << 20;
  if (!ec && static_cast<std::int64_t>(space.available) < needed + reserve)
    throw HubError(HubErrorKind::disk_full,
                   "not enough free disk space: " + human_bytes(static_cast<double>(needed)) + " to download (and 16 MiB to spare), " +
                       human_bytes(static_cast<double>(space.available)) + " free on the disk of " +
                       config_.cache_dir.string() + " (free space or point HF_HUB_CACHE / HF_HOME elsewhere)",
                   ref);

  if (!is_commit_hash(rq.revision)) write_text_atomically(repo_dir / "refs" / rq.revision, commit);
  const fs::path snap = repo_dir / "snapshots" / commit;
  fs::create_directories(snap);

  Tracker tracker(progress, to_fetch, static_cast<int>(wanted.size()));
  FileCounts counts;
  std::stop_source inner;
  std::stop_callback forward(stop, [&] { inner.request_stop(); });
  std::mutex err_m;
  std::exception_ptr first_error;
  std::atomic<std::size_t> next{0};

  auto fetch_one = [&](const RepoFile& f) {
    const std::string what = ref + "/" + f.path;
    const fs::path blob = repo_dir / "blobs" / f.etag();
    const fs::path inc = blob.string() + ".incomplete";
    std::error_code e2;
    if (fs::exists(blob, e2)) {
      bool good = static_cast<std::int64_t>(fs::file_size(blob, e2)) == f.size;
      if (good && !f.lfs_sha256.empty()) good = sha256_file(blob, inner.get_token()) == f.lfs_sha256;
      if (good) {
        link_snapshot(snap, f, blob);
        tracker.file_done(f.path);
        return;
      }
      fs::remove(blob, e2);  // corrupt: fetched again
      tracker.grow_total(f.size);
      std::lock_guard lock(counts.m);
      ++counts.corrupt;
    }
    for (int attempt = 0;; ++attempt) {
      std::int64_t offset = fs::exists(inc, e2) ? static_cast<std::int64_t>(fs::file_size(inc, e2)) : 0;
      if (offset > f.size) offset = 0;
      if (offset > 0 && attempt == 0) {
        std::lock_guard lock(counts.m);
        counts.resumed += offset;
      }
      std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(inc.c_str(), offset ? "r+b" : "wb"), std::fclose);
      if (!out) throw HubError(HubErrorKind::disk_full, std::string("cannot open for writing: ") + std::strerror(errno), inc.string());
      std::fseek(out.get(), offset, SEEK_SET);
      tracker.resumed(offset, f.path);
      std::int64_t written = offset;
      int write_errno = 0;
      bool first = true;
      HttpRequest req{"GET", resolve_url(rq.repo, commit, f.path), {{"Accept-Encoding", "identity"}}};
      if (offset > 0 && offset < f.size) req.headers.emplace_back("Range", "bytes=" + std::to_string(offset) + "-");
      auto sink = [&](const HttpResponse& head, const char* d, std::size_t n) {
        if (first) {
          first = false;
          if (head.status == 200 && written > 0) {  // the server ignored the Range: start over
            tracker.add(-written, f.path);
            written = 0;
            if (std::fflush(out.get()) != 0 || ::truncate(inc.c_str(), 0) != 0) write_errno = errno;
            std::fseek(out.get(), 0, SEEK_SET);
          }
        }
        if (inner.stop_requested() || write_errno) return false;
        if (written + static_cast<std::int64_t>(n) > f.size) {
          write_errno = EOVERFLOW;
          return false;
        }
        if (std::fwrite(d, 1, n, out.get()) != n || std::fflush(out.get()) != 0) {
          write_errno = errno ? errno : EIO;
          return false;
        }
        written += static_cast<std::int64_t>(n);
        tracker.add(static_cast<std::int64_t>(n), f.path);
        std::lock_guard lock(counts.m);
        counts.bytes += static_cast<std::int64_t>(n);
        return true;
      };
      try {
        if (offset < f.size) {
          request(req, sink, what);
        }
      } catch (const HubError& err) {
        tracker.add(-written, f.path);
        if (write_errno == ENOSPC || write_errno == EDQUOT || write_errno == EFBIG)
          throw HubError(HubErrorKind::disk_full,
                         std::string("the disk is full (") + std::strerror(write_errno) + ") after " +
                             human_bytes(static_cast<double>(written)) + " of " + human_bytes(static_cast<double>(f.size)) +
                             "; the partial file " + inc.filename().string() +
                             " is kept: free space and run the download again to resume",
                         what);
        if (write_errno == EOVERFLOW)
          throw HubError(HubErrorKind::bad_reply, "the server sent more bytes than the file's size", what);
        if (write_errno)
          throw HubError(HubErrorKind::disk_full, std::string("cannot write ") + inc.string() + ": " + std::strerror(write_errno), what);
        if (err.hub_kind() == HubErrorKind::cancelled || inner.stop_requested())
          throw HubError(HubErrorKind::cancelled,
                         "download cancelled; " + human_bytes(static_cast<double>(written)) +
                             " kept in " + inc.filename().string() + " and resumed next time",
                         what);
        if (err.hub_kind() != HubErrorKind::network) throw;
        if (attempt >= rq.retries)
          throw HubError(HubErrorKind::network,
                         std::string(err.what()) + " (" + human_bytes(static_cast<double>(written)) + " of " +
                             human_bytes(static_cast<double>(f.size)) + " of " + f.path +
                             " kept; run the download again to resume)",
                         {}, err.http_status());
        continue;  // resume from what was written
      }
      out.reset();
      const std::int64_t got = static_cast<std::int64_t>(fs::file_size(inc, e2));
      if (got != f.size) {
        tracker.add(-written, f.path);
        if (attempt >= rq.retries)
          throw HubError(HubErrorKind::network,
                         "the transfer ended after " + std::to_string(got) + " of " + std::to_string(f.size) +
                             " bytes; run the download again to resume",
                         what);
        continue;
      }
      if (!f.lfs_sha256.empty()) {
        const std::string sum = sha256_file(inc, inner.get_token());
        if (sum != f.lfs_sha256) {
          fs::remove(inc, e2);
          tracker.add(-written, f.path);
          if (attempt >= rq.retries)
            throw HubError(HubErrorKind::checksum,
                           "the downloaded file's sha256 " + sum + " differs from the Hub's " + f.lfs_sha256 +
                               "; the file was removed, run the download again",
                           what);
          continue;
        }
      }
      fs::rename(inc, blob);
      link_snapshot(snap, f, blob);
      {
        std::lock_guard lock(counts.m);
        ++counts.fetched;
      }
      tracker.file_done(f.path);
      return;
    }
  };

  auto worker = [&] {
    for (;;) {
      const std::size_t i = next++;
      if (i >= wanted.size() || inner.stop_requested()) return;
      try {
        fetch_one(wanted[i]);
      } catch (...) {
        std::lock_guard lock(err_m);
        if (!first_error) first_error = std::current_exception();
        inner.request_stop();
        return;
      }
    }
  };
  const int n_threads = std::max(1, std::min<int>(rq.parallel, static_cast<int>(wanted.size())));
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < n_threads; ++t) pool.emplace_back(worker);
  }
  if (first_error) std::rethrow_exception(first_error);
  if (stop.stop_requested()) throw HubError(HubErrorKind::cancelled, "download cancelled", ref);
  tracker.finish();
  result.snapshot = snap;
  result.commit = commit;
  result.files = static_cast<int>(wanted.size());
  result.fetched = counts.fetched;
  result.bytes_fetched = counts.bytes;
  result.resumed_bytes = counts.resumed;
  result.refetched_corrupt = counts.corrupt;
  return result;
}

}  // namespace exl::hub
