// Safetensors writer: sorted-key JSON header padded with spaces so the data section starts on an
// 8-byte boundary; the data section holds the tensors back to back with no holes (the format
// forbids them: the reference `safetensors` library rejects such a file), larger element sizes
// first (stable: the order given within one size), so every tensor is aligned to its element
// size. Atomic: "<name>.tmp-<pid>" is written, flushed and renamed over the target.
#include "exl/safetensors_writer.h"

#include <algorithm>
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

std::uint64_t TensorSpec::nbytes() const {
  std::uint64_t n = 1;
  for (std::int64_t d : shape) n *= std::uint64_t(d);
  return n * dtype_size(dtype);
}

namespace {

// List indices in data-section order: larger element sizes first (8, 4, 2, 1 bytes), the given
// order within one size, so back-to-back tensors each start at a multiple of their element size.
std::vector<std::size_t> data_order(const std::vector<const TensorSpec*>& list) {
  std::vector<std::size_t> order(list.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return dtype_size(list[a]->dtype) > dtype_size(list[b]->dtype);
  });
  return order;
}

// The header of one file: names unique, shapes non-negative. Returns the header text (padded to
// 8 bytes) and each tensor's offset in the data section (list index order), laid out back to back
// in data_order.
std::string header_text(const fs::path& path, const std::vector<const TensorSpec*>& list,
                        std::vector<std::uint64_t>& offsets) {
  nlohmann::json header = nlohmann::json::object();
  std::set<std::string> seen;
  for (const TensorSpec* t : list) {
    if (!seen.insert(t->name).second)
      throw Error(ErrorKind::invalid_argument, "duplicate tensor name", path.string(), t->name);
    for (std::int64_t d : t->shape)
      if (d < 0) throw Error(ErrorKind::invalid_argument, "negative dimension", path.string(), t->name);
  }
  std::uint64_t offset = 0;
  offsets.assign(list.size(), 0);
  for (std::size_t i : data_order(list)) {
    const TensorSpec* t = list[i];
    offsets[i] = offset;
    header[t->name] = {{"dtype", dtype_name(t->dtype)},
                       {"shape", t->shape},
                       {"data_offsets", {offset, offset + t->nbytes()}}};
    offset += t->nbytes();
  }
  header["__metadata__"] = {{"format", "pt"}};
  std::string text = header.dump();  // nlohmann's object keeps keys sorted
  text.resize(align8(text.size()), ' ');
  return text;
}

void write_header(std::ostream& out, const std::string& text) {
  std::uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = std::uint8_t(std::uint64_t(text.size()) >> (8 * i));
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(text.data(), std::streamsize(text.size()));
}

void write_tensor_list(const fs::path& path, const std::vector<const TensorData*>& list) {
  std::vector<TensorSpec> specs;
  for (const TensorData* t : list) {
    const std::uint64_t expect = std::uint64_t(t->numel()) * dtype_size(t->dtype);
    if (expect != t->bytes.size())
      throw Error(ErrorKind::invalid_argument,
                  "tensor holds " + std::to_string(t->bytes.size()) + " bytes, its shape needs " + std::to_string(expect),
                  path.string(), t->name);
    specs.push_back({t->name, t->dtype, t->shape});
  }
  std::vector<const TensorSpec*> sp;
  for (const TensorSpec& t : specs) sp.push_back(&t);
  std::vector<std::uint64_t> offsets;
  const std::string text = header_text(path, sp, offsets);

  write_atomic(path, [&](std::ofstream& out) {
    write_header(out, text);
    for (std::size_t i : data_order(sp)) {
      const auto& b = list[i]->bytes;
      out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
      if (!out) throw Error(ErrorKind::io, "write failed (disk full?)", path.string(), list[i]->name);
    }
  });
}

std::string shard_name(std::size_t i, std::size_t n, const std::string& stem = "output") {
  if (n == 1) return stem + ".safetensors";
  char buf[64];
  std::snprintf(buf, sizeof buf, "-%05zu-of-%05zu.safetensors", i + 1, n);
  return stem + buf;
}

}  // namespace

std::vector<std::vector<std::size_t>> plan_safetensors_shards(const std::vector<std::uint64_t>& sizes,
                                                              std::uint64_t max_shard_bytes,
                                                              const std::vector<std::string>& names,
                                                              const fs::path& dir) {
  std::vector<std::vector<std::size_t>> shards(1);
  std::uint64_t acc = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::uint64_t sz = sizes[i];
    if (max_shard_bytes && sz > max_shard_bytes)
      throw Error(ErrorKind::invalid_argument, "tensor of " + std::to_string(sz) + " bytes exceeds the shard size limit",
                  dir.string(), i < names.size() ? names[i] : std::string());
    if (max_shard_bytes && acc + sz > max_shard_bytes && !shards.back().empty()) {
      shards.emplace_back();
      acc = 0;
    }
    shards.back().push_back(i);
    acc += sz;
  }
  return shards;
}

void write_safetensors(const fs::path& path, const std::vector<TensorData>& tensors) {
  std::vector<const TensorData*> list;
  for (const TensorData& t : tensors) list.push_back(&t);
  write_tensor_list(path, list);
}

std::vector<fs::path> write_safetensors_shards(const fs::path& dir, const std::vector<TensorData>& tensors,
                                               std::uint64_t max_shard_bytes, const std::string& stem) {
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> names;
  for (const TensorData& t : tensors) {
    sizes.push_back(t.bytes.size());
    names.push_back(t.name);
  }
  const auto shards = plan_safetensors_shards(sizes, max_shard_bytes, names, dir);
  std::vector<fs::path> written;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    std::vector<const TensorData*> list;
    for (std::size_t j : shards[i]) list.push_back(&tensors[j]);
    const fs::path p = dir / shard_name(i, shards.size(), stem);
    write_tensor_list(p, list);
    written.push_back(p);
  }
  return written;
}

// ---- streaming ----

struct SafetensorsStreamWriter::Shard {
  fs::path path;
  std::vector<std::size_t> tensors;      // indices into specs_
  std::vector<std::uint64_t> offsets;    // data offsets
  std::string header;
};

SafetensorsStreamWriter::SafetensorsStreamWriter(fs::path dir, std::vector<TensorSpec> specs,
                                                 std::uint64_t max_shard_bytes)
    : dir_(std::move(dir)), specs_(std::move(specs)) {
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> names;
  for (const TensorSpec& t : specs_) {
    sizes.push_back(t.nbytes());
    names.push_back(t.name);
  }
  const auto plan = plan_safetensors_shards(sizes, max_shard_bytes, names, dir_);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    Shard s;
    s.path = dir_ / shard_name(i, plan.size());
    s.tensors = plan[i];
    std::vector<const TensorSpec*> list;
    for (std::size_t j : s.tensors) list.push_back(&specs_[j]);
    s.header = header_text(s.path, list, s.offsets);
    shards_.push_back(std::move(s));
  }
}

SafetensorsStreamWriter::~SafetensorsStreamWriter() = default;

std::vector<fs::path> SafetensorsStreamWriter::files() const {
  std::vector<fs::path> out;
  for (const Shard& s : shards_) out.push_back(s.path);
  return out;
}

void SafetensorsStreamWriter::write(const std::string& name, const void* data, std::size_t bytes) {
  if (next_ >= specs_.size() || specs_[next_].name != name)
    throw Error(ErrorKind::internal,
                "tensors must be written in the planned order (expected " +
                    (next_ < specs_.size() ? specs_[next_].name : std::string("none")) + ")",
                dir_.string(), name);
  if (bytes != specs_[next_].nbytes())
    throw Error(ErrorKind::invalid_argument,
                "tensor holds " + std::to_string(bytes) + " bytes, its shape needs " + std::to_string(specs_[next_].nbytes()),
                dir_.string(), name);
  Shard& s = shards_[shard_];
  if (pos_in_shard_ == 0) {
    out_ = std::make_unique<std::ofstream>(s.path, std::ios::binary | std::ios::trunc);
    if (!*out_) throw Error(ErrorKind::io, "cannot create file", s.path.string());
    write_header(*out_, s.header);
  }
  // Tensors arrive in list order; their places in the data section may be in another (element
  // sizes, see header_text): each is written at its own offset, and the last one fills the file.
  const std::uint64_t off = s.offsets[pos_in_shard_];
  out_->seekp(std::streamoff(8 + s.header.size() + off));
  out_->write(static_cast<const char*>(data), std::streamsize(bytes));
  if (!*out_) throw Error(ErrorKind::io, "write failed (disk full?)", s.path.string(), name);
  ++next_;
  if (++pos_in_shard_ == s.tensors.size()) {
    out_->flush();
    if (!*out_) throw Error(ErrorKind::io, "write failed (disk full?)", s.path.string(), name);
    out_->close();
    if (!*out_) throw Error(ErrorKind::io, "closing the file failed (disk full?)", s.path.string());
    out_.reset();
    ++shard_;
    pos_in_shard_ = 0;
  }
}

bool SafetensorsStreamWriter::done() const { return next_ == specs_.size(); }

}  // namespace exl
