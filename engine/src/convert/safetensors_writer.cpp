// Safetensors writer: sorted-key JSON header padded with spaces so the data section starts on an
// 8-byte boundary, every tensor's data 8-byte aligned (zero padding between tensors), data in
// the order given. Atomic: "<name>.tmp-<pid>" is written, flushed and renamed over the target.
#include "exl/safetensors_writer.h"

#include <cstdio>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "exl/error.h"
#include "exl/tensor_store.h"

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace exl {
namespace fs = std::filesystem;

std::int64_t TensorData::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

namespace {

std::uint64_t align8(std::uint64_t x) { return (x + 7) & ~std::uint64_t(7); }

fs::path temp_path(const fs::path& path) {
#if defined(__unix__) || defined(__APPLE__)
  const long pid = long(::getpid());
#else
  const long pid = 0;
#endif
  return path.parent_path() / (path.filename().string() + ".tmp-" + std::to_string(pid));
}

// Writes through a temporary file and renames it; removes the temporary on any failure.
template <class WriteFn>
void write_atomic(const fs::path& path, WriteFn&& write_body) {
  const fs::path tmp = temp_path(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::io, "cannot create file", tmp.string());
    try {
      write_body(out);
      out.flush();
      if (!out) throw Error(ErrorKind::io, "write failed (disk full?)", tmp.string());
    } catch (...) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(ErrorKind::io, "cannot rename the temporary file into place: " + ec.message(), path.string());
  }
}

}  // namespace

void write_file_atomic(const fs::path& path, const std::string& contents) {
  write_atomic(path, [&](std::ofstream& out) { out.write(contents.data(), std::streamsize(contents.size())); });
}

namespace {
void write_tensor_list(const fs::path& path, const std::vector<const TensorData*>& list) {
  nlohmann::json header = nlohmann::json::object();
  std::set<std::string> seen;
  std::uint64_t offset = 0;
  std::vector<std::uint64_t> offsets;
  for (const TensorData* tp : list) {
    const TensorData& t = *tp;
    if (!seen.insert(t.name).second)
      throw Error(ErrorKind::invalid_argument, "duplicate tensor name", path.string(), t.name);
    for (std::int64_t d : t.shape)
      if (d < 0) throw Error(ErrorKind::invalid_argument, "negative dimension", path.string(), t.name);
    const std::uint64_t expect = std::uint64_t(t.numel()) * dtype_size(t.dtype);
    if (expect != t.bytes.size())
      throw Error(ErrorKind::invalid_argument,
                  "tensor holds " + std::to_string(t.bytes.size()) + " bytes, its shape needs " + std::to_string(expect),
                  path.string(), t.name);
    offset = align8(offset);
    offsets.push_back(offset);
    header[t.name] = {{"dtype", dtype_name(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  header["__metadata__"] = {{"format", "pt"}};
  std::string text = header.dump();  // nlohmann's object keeps keys sorted
  text.resize(align8(text.size()), ' ');
  const std::uint64_t total = align8(offset);

  write_atomic(path, [&](std::ofstream& out) {
    std::uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = std::uint8_t(std::uint64_t(text.size()) >> (8 * i));
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(text.data(), std::streamsize(text.size()));
    std::uint64_t pos = 0;
    static const char zeros[8] = {};
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (offsets[i] > pos) out.write(zeros, std::streamsize(offsets[i] - pos));
      const auto& b = list[i]->bytes;
      out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
      pos = offsets[i] + b.size();
      if (!out) throw Error(ErrorKind::io, "write failed (disk full?)", path.string(), list[i]->name);
    }
    if (total > pos) out.write(zeros, std::streamsize(total - pos));
  });
}
}  // namespace

void write_safetensors(const fs::path& path, const std::vector<TensorData>& tensors) {
  std::vector<const TensorData*> list;
  for (const TensorData& t : tensors) list.push_back(&t);
  write_tensor_list(path, list);
}

std::vector<fs::path> write_safetensors_shards(const fs::path& dir, const std::vector<TensorData>& tensors,
                                               std::uint64_t max_shard_bytes) {
  std::vector<std::vector<const TensorData*>> shards(1);
  std::uint64_t acc = 0;
  for (const TensorData& t : tensors) {
    const std::uint64_t sz = t.bytes.size();
    if (max_shard_bytes && sz > max_shard_bytes)
      throw Error(ErrorKind::invalid_argument,
                  "tensor of " + std::to_string(sz) + " bytes exceeds the shard size limit", dir.string(), t.name);
    if (max_shard_bytes && acc + sz > max_shard_bytes && !shards.back().empty()) {
      shards.emplace_back();
      acc = 0;
    }
    shards.back().push_back(&t);
    acc += align8(sz);
  }
  std::vector<fs::path> written;
  const std::size_t n = shards.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = "output.safetensors";
    if (n > 1) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "output-%05zu-of-%05zu.safetensors", i + 1, n);
      name = buf;
    }
    const fs::path p = dir / name;
    write_tensor_list(p, shards[i]);
    written.push_back(p);
  }
  return written;
}

}  // namespace exl
