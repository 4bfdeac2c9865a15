// The Hugging Face Hub client (Qt-free, one implementation for `exl` and the app): search, model info,
// refs (branches), file lists with LFS sizes and sha256, config.json of any branch without the weights,
// and resumable downloads into the huggingface_hub cache layout
//   $HF_HUB_CACHE | $HF_HOME/hub | ~/.cache/huggingface/hub
//     models--ORG--NAME/blobs/<etag>                  file contents (LFS: sha256, others: git blob sha1)
//     models--ORG--NAME/blobs/<etag>.incomplete       a download in progress (resumed with HTTP Range)
//     models--ORG--NAME/snapshots/<commit>/<path>     relative symlinks to ../../blobs/<etag>
//     models--ORG--NAME/refs/<branch>                 the branch's commit hash
// so models fetched by `hf download` / snapshot_download are found here and ours by them.
//
// The HTTP transport is an interface (cpp-httplib with TLS for `exl`, Qt Network in the app). The client is
// used from a worker thread: calls block, progress arrives through a callback, std::stop_token cancels.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "exl/error.h"

namespace exl::hub {

// ---- errors ----

enum class HubErrorKind { network, http, auth, not_found, offline, disk_full, checksum, cancelled, bad_reply };

// Every failure of the client: what went wrong, with the repo, file or URL involved and what to do.
class HubError : public Error {
 public:
  HubError(HubErrorKind kind, std::string message, std::string item = {}, int http_status = 0);
  HubErrorKind hub_kind() const noexcept { return hub_kind_; }
  int http_status() const noexcept { return status_; }

 private:
  HubErrorKind hub_kind_;
  int status_;
};

// ---- transport ----

struct HttpRequest {
  std::string method = "GET";  // GET or HEAD
  std::string url;             // absolute: http(s)://host[:port]/path?query
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;                            // the body when no sink took it (errors, JSON, redirects)
  std::string header(const std::string& lower_name) const;
};

// Receives the body of a 200/206 answer piece by piece, with the answer's status and headers (`head`, body
// empty); returning false stops the transfer.
using BodySink = std::function<bool(const HttpResponse& head, const char* data, std::size_t size)>;

class Transport {
 public:
  virtual ~Transport() = default;
  // One request (called from several threads at once); redirects are not followed (the client does that). With a sink, the body of a 200/206
  // answer goes to it. Throws HubError(network) when the connection fails or drops before the end of the
  // body, and HubError(cancelled) when the sink stopped the transfer.
  virtual HttpResponse send(const HttpRequest& request, const BodySink& sink) = 0;
};

// cpp-httplib, TLS through OpenSSL (library exl_hub_http).
std::unique_ptr<Transport> make_httplib_transport();

// ---- configuration ----

struct HubConfig {
  std::string endpoint = "https://huggingface.co";
  std::string token;                // empty: anonymous
  std::filesystem::path cache_dir;  // the hub cache (models--ORG--NAME folders)
  bool offline = false;
  // HF_ENDPOINT, HF_TOKEN (else the file $HF_TOKEN_PATH or $HF_HOME/token), HF_HUB_CACHE / HF_HOME /
  // XDG_CACHE_HOME, HF_HUB_OFFLINE (1/ON/YES/TRUE).
  static HubConfig from_environment();
};

// ---- what the Hub answers ----

struct ModelSummary {
  std::string id;  // ORG/NAME
  std::string author;
  std::int64_t downloads = 0;
  std::int64_t likes = 0;
  std::string last_modified;  // ISO 8601
  std::vector<std::string> tags;
  std::string pipeline_tag;
  bool gated = false;
  bool has_tag(const std::string& t) const;
};

enum class SearchSort { relevance, downloads, recent, likes };

struct SearchQuery {
  std::string text;
  std::vector<std::string> tags;  // all must match, e.g. {"exl2"}
  std::string author;
  SearchSort sort = SearchSort::downloads;
  int limit = 30;
};

struct ModelInfo {
  ModelSummary summary;
  std::string commit;              // the revision's commit hash
  std::vector<std::string> files;  // siblings
};

struct RepoRef {
  std::string name;    // branch or tag name
  std::string commit;  // target commit
  bool is_tag = false;
};

struct RepoFile {
  std::string path;
  std::int64_t size = 0;    // the real size (the LFS object's for LFS files)
  std::string blob_id;      // git blob sha1
  std::string lfs_sha256;   // empty when the file is not in LFS
  std::string etag() const { return lfs_sha256.empty() ? blob_id : lfs_sha256; }
};

// ---- downloads ----

struct DownloadRequest {
  std::string repo;                   // ORG/NAME
  std::string revision = "main";      // branch, tag or commit
  std::vector<std::string> include;   // glob patterns (*, ?, [..]); empty: every file
  int parallel = 4;                   // files at once
  int retries = 3;                    // resumptions of a dropped transfer before giving up
};

struct DownloadProgress {
  std::int64_t bytes_done = 0;   // of the files to fetch (already cached ones not counted)
  std::int64_t bytes_total = 0;
  double bytes_per_second = 0;   // over the last few seconds
  double seconds_left = -1;      // -1: unknown
  int files_done = 0;
  int files_total = 0;
  std::string file;              // the file that last advanced
  bool finished = false;
};
// Called from download threads, one call at a time, at most ~10 times a second and once when finished.
using ProgressFn = std::function<void(const DownloadProgress&)>;

struct DownloadResult {
  std::filesystem::path snapshot;  // snapshots/<commit>
  std::string commit;
  int files = 0;                     // files in the snapshot that matched
  int fetched = 0;                   // files that had to be downloaded
  std::int64_t bytes_fetched = 0;
  std::int64_t resumed_bytes = 0;    // bytes kept from earlier incomplete downloads
  int refetched_corrupt = 0;         // cached blobs whose sha256 was wrong, fetched again
};

class HubClient {
 public:
  HubClient(HubConfig config, std::shared_ptr<Transport> transport);
  const HubConfig& config() const { return config_; }

  std::vector<ModelSummary> search(const SearchQuery& query) const;
  ModelInfo model_info(const std::string& repo, const std::string& revision = "main") const;
  std::vector<RepoRef> refs(const std::string& repo) const;
  // Files of a revision (recursive), optionally below `folder`.
  std::vector<RepoFile> files(const std::string& repo, const std::string& revision, const std::string& folder = {}) const;
  // A (small) file's contents, through the resolve URL; config.json's quantization_config sits in it.
  std::string read_file(const std::string& repo, const std::string& revision, const std::string& path) const;
  // `length` bytes of a file from `offset` (HTTP Range), e.g. a safetensors header without the weights.
  std::string read_range(const std::string& repo, const std::string& revision, const std::string& path,
                         std::int64_t offset, std::int64_t length) const;

  // For the planner without the weights: into `dir`, the revision's config.json (and safetensors index) and its
  // *.safetensors as sparse files of their full size holding only their headers (two Range requests each).
  // `folder`: a subfolder of the repo holding the model ("" = the top level).
  void fetch_headers(const std::string& repo, const std::string& revision, const std::filesystem::path& dir,
                     const std::string& folder = {}) const;

  // Fetches the matching files of a revision into the cache; returns the snapshot folder. Offline, answers
  // from the cache alone. Throws HubError (disk_full before starting when the files do not fit).
  DownloadResult download(const DownloadRequest& request, const ProgressFn& progress = {},
                          std::stop_token stop = {}) const;

  // Low level: one request with auth and redirects followed; HTTP errors become HubError.
  HttpResponse request(HttpRequest req, const BodySink& sink = {}, const std::string& what = {}) const;

 private:
  std::string resolve_url(const std::string& repo, const std::string& revision, const std::string& path) const;
  void require_online(const std::string& what) const;
  [[noreturn]] void throw_http_error(const HttpResponse& resp, const std::string& item) const;

  HubConfig config_;
  std::shared_ptr<Transport> transport_;
};

// ---- the cache ----

std::string repo_folder_name(const std::string& repo);  // "models--ORG--NAME"
// "ORG/NAME[:REVISION]" -> {repo, revision or "main"}; throws invalid_argument for anything else.
std::pair<std::string, std::string> parse_repo_ref(const std::string& text);
bool glob_match(const std::string& pattern, const std::string& path);

struct CachedSnapshot {
  std::string repo;                   // ORG/NAME
  std::string commit;
  std::vector<std::string> branches;  // refs pointing at this commit
  std::filesystem::path path;         // snapshots/<commit>
};

// Every snapshot in the cache (no network).
std::vector<CachedSnapshot> scan_cache(const std::filesystem::path& cache_dir);
// The snapshot folder of a revision (branch via refs/, or a commit hash), when cached.
std::optional<std::filesystem::path> find_cached(const std::filesystem::path& cache_dir, const std::string& repo,
                                                 const std::string& revision);

// sha256 of a file, lower-case hex.
std::string sha256_file(const std::filesystem::path& path, std::stop_token stop = {});

}  // namespace exl::hub
