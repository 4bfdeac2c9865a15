// TensorStore: one name -> tensor index over every shard of a model folder. Shards come from
// model.safetensors.index.json when the folder has one (HF sharded checkpoints), otherwise from
// every *.safetensors file in the folder (the EXL2 converter's output-*.safetensors).
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exl/error.h"
#include "exl/tensor_store.h"

namespace exl {
namespace {

using json = nlohmann::json;

constexpr const char* index_file_name = "model.safetensors.index.json";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, "cannot read file", path.string());
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Error(ErrorKind::io, "read failed", path.string());
  return s.str();
}

// A shard name from the index must stay inside the model folder.
bool is_safe_shard_name(const std::string& name) {
  if (name.empty()) return false;
  const std::filesystem::path p(name);
  if (p.is_absolute()) return false;
  for (const auto& part : p)
    if (part == "..") return false;
  return true;
}

struct ShardIndex {
  std::vector<std::string> shards;                     // distinct, in first-seen order
  std::map<std::string, std::string> tensor_to_shard;  // weight_map
};

ShardIndex read_shard_index(const std::filesystem::path& path) {
  const std::string file = path.string();
  json j;
  try {
    j = json::parse(read_text(path));
  } catch (const json::parse_error& e) {
    throw Error(ErrorKind::format, "malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what(), file);
  }
  if (!j.is_object()) throw Error(ErrorKind::format, "index is not a JSON object", file);
  const auto wm = j.find("weight_map");
  if (wm == j.end() || !wm->is_object())
    throw Error(ErrorKind::format, "missing or non-object weight_map", file, "weight_map");
  ShardIndex idx;
  std::set<std::string> seen;
  for (const auto& [tensor, shard] : wm->items()) {
    if (!shard.is_string()) throw Error(ErrorKind::format, "shard name is not a string", file, tensor);
    const std::string s = shard.get<std::string>();
    if (!is_safe_shard_name(s))
      throw Error(ErrorKind::format, "shard name '" + s + "' leaves the model folder", file, tensor);
    idx.tensor_to_shard[tensor] = s;
    if (seen.insert(s).second) idx.shards.push_back(s);
  }
  if (idx.shards.empty()) throw Error(ErrorKind::format, "weight_map lists no tensors", file, "weight_map");
  return idx;
}

}  // namespace

TensorStore TensorStore::open_files(const std::vector<std::filesystem::path>& files) {
  TensorStore store;
  for (const auto& path : files) {
    store.shards_.push_back(SafetensorsFile::open(path));
    store.files_.push_back(path);
    for (const TensorInfo& t : store.shards_.back()->tensors()) {
      auto [it, inserted] = store.index_.emplace(t.name, &t);
      if (!inserted)
        throw Error(ErrorKind::format, "tensor is stored twice (also in " + it->second->file + ")",
                    path.string(), t.name);
    }
  }
  return store;
}

TensorStore TensorStore::open_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(ErrorKind::io, "model folder does not exist or is not a folder", dir.string());

  const auto index_path = dir / index_file_name;
  if (std::filesystem::exists(index_path, ec)) {
    const ShardIndex idx = read_shard_index(index_path);
    std::vector<std::filesystem::path> files;
    for (const auto& shard : idx.shards) {
      const auto p = dir / shard;
      if (!std::filesystem::is_regular_file(p, ec))
        throw Error(ErrorKind::io, "shard '" + shard + "' named by the index is missing", index_path.string(),
                    shard);
      files.push_back(p);
    }
    TensorStore store = open_files(files);
    for (const auto& [tensor, shard] : idx.tensor_to_shard) {
      const TensorInfo* t = store.find(tensor);
      const auto expected = (dir / shard).string();
      if (t == nullptr || t->file != expected)
        throw Error(ErrorKind::missing_tensor, "tensor listed by the index is not in shard '" + shard + "'",
                    index_path.string(), tensor);
    }
    return store;
  }

  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".safetensors" && entry.is_regular_file(ec)) files.push_back(entry.path());
  }
  if (ec) throw Error(ErrorKind::io, "cannot list folder: " + ec.message(), dir.string());
  if (files.empty()) throw Error(ErrorKind::io, "no *.safetensors files in the model folder", dir.string());
  std::sort(files.begin(), files.end());
  return open_files(files);
}

const TensorInfo* TensorStore::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

const TensorInfo& TensorStore::get(const std::string& name) const {
  if (const TensorInfo* t = find(name)) return *t;
  std::string where;
  for (std::size_t i = 0; i < files_.size() && i < 3; ++i) where += (i ? ", " : "") + files_[i].string();
  if (files_.size() > 3) where += ", ...";
  throw Error(ErrorKind::missing_tensor, "tensor not found (searched " + where + ")", "", name);
}

std::vector<std::string> TensorStore::names() const {
  std::vector<std::string> out;
  out.reserve(index_.size());
  for (const auto& [name, t] : index_) out.push_back(name);
  return out;
}

std::size_t TensorStore::total_bytes() const {
  std::size_t n = 0;
  for (const auto& [name, t] : index_) n += t->nbytes;
  return n;
}

}  // namespace exl
