// The Hub's JSON API: search, model info, refs, file trees, and reading one small file.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "exl/hub.h"
#include "hub_internal.h"

namespace exl::hub {

namespace {

using nlohmann::json;

json parse_json(const std::string& body, const std::string& what) {
  try {
    return json::parse(body);
  } catch (const json::exception& e) {
    throw HubError(HubErrorKind::bad_reply, std::string("the Hub's answer is not JSON: ") + e.what(), what);
  }
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t num(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

ModelSummary summary_of(const json& j) {
  ModelSummary m;
  m.id = str(j, "id");
  if (m.id.empty()) m.id = str(j, "modelId");
  m.author = str(j, "author");
  if (m.author.empty() && m.id.find('/') != std::string::npos) m.author = m.id.substr(0, m.id.find('/'));
  m.downloads = num(j, "downloads");
  m.likes = num(j, "likes");
  m.last_modified = str(j, "lastModified");
  m.pipeline_tag = str(j, "pipeline_tag");
  if (auto t = j.find("tags"); t != j.end() && t->is_array())
    for (const auto& x : *t)
      if (x.is_string()) m.tags.push_back(x.get<std::string>());
  if (auto g = j.find("gated"); g != j.end()) m.gated = g->is_string() || (g->is_boolean() && g->get<bool>());
  return m;
}

// The next page's URL from a Link header (`<URL>; rel="next"`), or empty.
std::string next_link(const std::string& link) {
  auto rel = link.find("rel=\"next\"");
  if (rel == std::string::npos) return {};
  auto open = link.rfind('<', rel);
  auto close = link.find('>', open);
  if (open == std::string::npos || close == std::string::npos || close > rel) return {};
  return link.substr(open + 1, close - open - 1);
}

void check_repo_id(const std::string& repo) {
  auto slash = repo.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == repo.size() || repo.find('/', slash + 1) != std::string::npos)
    throw HubError(HubErrorKind::not_found, "a repository is named ORG/NAME", repo);
}

}  // namespace

bool ModelSummary::has_tag(const std::string& t) const {
  for (const auto& x : tags)
    if (x == t) return true;
  return false;
}

std::vector<ModelSummary> HubClient::search(const SearchQuery& q) const {
  std::string url = config_.endpoint + "/api/models?limit=" + std::to_string(q.limit > 0 ? q.limit : 30);
  if (!q.text.empty()) url += "&search=" + url_quote(q.text, false);
  if (!q.author.empty()) url += "&author=" + url_quote(q.author, false);
  for (const auto& t : q.tags) url += "&filter=" + url_quote(t, false);
  switch (q.sort) {
    case SearchSort::downloads: url += "&sort=downloads&direction=-1"; break;
    case SearchSort::recent: url += "&sort=lastModified&direction=-1"; break;
    case SearchSort::likes: url += "&sort=likes&direction=-1"; break;
    case SearchSort::relevance: break;
  }
  HttpResponse r = request({"GET", url, {}}, {}, "search \"" + q.text + "\"");
  json j = parse_json(r.body, url);
  if (!j.is_array()) throw HubError(HubErrorKind::bad_reply, "the search answer is not a list", url);
  std::vector<ModelSummary> out;
  for (const auto& m : j) {
    if (!m.is_object()) continue;
    out.push_back(summary_of(m));
    if (static_cast<int>(out.size()) >= q.limit && q.limit > 0) break;
  }
  return out;
}

ModelInfo HubClient::model_info(const std::string& repo, const std::string& revision) const {
  check_repo_id(repo);
  const std::string url = config_.endpoint + "/api/models/" + repo + "/revision/" + url_quote(revision, false);
  json j = parse_json(request({"GET", url, {}}, {}, repo + ":" + revision).body, url);
  if (!j.is_object()) throw HubError(HubErrorKind::bad_reply, "model info is not an object", url);
  ModelInfo info;
  info.summary = summary_of(j);
  info.commit = str(j, "sha");
  if (info.commit.empty()) throw HubError(HubErrorKind::bad_reply, "model info without a commit (sha)", url);
  if (auto s = j.find("siblings"); s != j.end() && s->is_array())
    for (const auto& f : *s)
      if (f.is_object()) info.files.push_back(str(f, "rfilename"));
  return info;
}

std::vector<RepoRef> HubClient::refs(const std::string& repo) const {
  check_repo_id(repo);
  const std::string url = config_.endpoint + "/api/models/" + repo + "/refs";
  json j = parse_json(request({"GET", url, {}}, {}, repo).body, url);
  std::vector<RepoRef> out;
  for (const char* kind : {"branches", "tags"}) {
    auto it = j.find(kind);
    if (it == j.end() || !it->is_array()) continue;
    for (const auto& r : *it) out.push_back({str(r, "name"), str(r, "targetCommit"), std::string(kind) == "tags"});
  }
  if (out.empty()) throw HubError(HubErrorKind::bad_reply, "the repository lists no branches", url);
  return out;
}

std::vector<RepoFile> HubClient::files(const std::string& repo, const std::string& revision,
                                       const std::string& folder) const {
  check_repo_id(repo);
  std::string url = config_.endpoint + "/api/models/" + repo + "/tree/" + url_quote(revision, false) +
                    (folder.empty() ? "" : "/" + url_quote(folder, false)) + "?recursive=true&expand=false";
  std::vector<RepoFile> out;
  for (int page = 0; page < 10000 && !url.empty(); ++page) {
    HttpResponse r = request({"GET", url, {}}, {}, repo + ":" + revision + (folder.empty() ? "" : "/" + folder));
    json j = parse_json(r.body, url);
    if (!j.is_array()) throw HubError(HubErrorKind::bad_reply, "the file list is not a list", url);
    for (const auto& e : j) {
      if (!e.is_object() || str(e, "type") != "file") continue;
      RepoFile f;
      f.path = str(e, "path");
      f.size = num(e, "size");
      f.blob_id = str(e, "oid");
      if (auto l = e.find("lfs"); l != e.end() && l->is_object()) {
        f.lfs_sha256 = str(*l, "oid");
        if (num(*l, "size") > 0) f.size = num(*l, "size");
      }
      if (f.path.empty() || f.etag().empty())
        throw HubError(HubErrorKind::bad_reply, "a file entry without a path or id", url);
      out.push_back(std::move(f));
    }
    url = next_link(r.header("link"));
  }
  return out;
}

std::string HubClient::read_file(const std::string& repo, const std::string& revision, const std::string& path) const {
  check_repo_id(repo);
  HttpRequest req{"GET", resolve_url(repo, revision, path), {{"Accept-Encoding", "identity"}}};
  std::string body;
  request(req, [&](const HttpResponse&, const char* d, std::size_t n) { body.append(d, n); return body.size() < (64u << 20); },
          repo + ":" + revision + "/" + path);
  return body;
}

std::string HubClient::read_range(const std::string& repo, const std::string& revision, const std::string& path,
                                  std::int64_t offset, std::int64_t length) const {
  check_repo_id(repo);
  if (length <= 0) return {};
  HttpRequest req{"GET", resolve_url(repo, revision, path),
                  {{"Accept-Encoding", "identity"},
                   {"Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1)}}};
  std::string body;
  std::int64_t skip = 0;  // a server that ignores Range sends the file from its start
  bool first = true;
  auto sink = [&](const HttpResponse& head, const char* d, std::size_t n) {
    if (first) {
      first = false;
      if (head.status == 200) skip = offset;
    }
    std::size_t from = 0;
    if (skip > 0) {
      from = static_cast<std::size_t>(std::min<std::int64_t>(skip, static_cast<std::int64_t>(n)));
      skip -= static_cast<std::int64_t>(from);
    }
    body.append(d + from, n - from);
    return static_cast<std::int64_t>(body.size()) < length;
  };
  try {
    request(req, sink, repo + ":" + revision + "/" + path);
  } catch (const HubError& e) {
    if (e.hub_kind() != HubErrorKind::cancelled || static_cast<std::int64_t>(body.size()) < length) throw;
  }
  if (static_cast<std::int64_t>(body.size()) < length)
    throw HubError(HubErrorKind::bad_reply,
                   "asked for " + std::to_string(length) + " bytes at " + std::to_string(offset) + ", got " +
                       std::to_string(body.size()),
                   repo + ":" + revision + "/" + path);
  body.resize(static_cast<std::size_t>(length));
  return body;
}

}  // namespace exl::hub
