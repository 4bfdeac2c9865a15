// Writing safetensors files: the header JSON (tensor names sorted, `__metadata__`
// {"format": "pt"}), the data section starting 8-byte aligned and holding the tensors back to
// back with no holes (as the format requires), 8-, 4-, 2- then 1-byte element types, each in the
// order added (module order), so every tensor is aligned to its element size. Files are written
// atomically: a temporary file in the same folder is renamed over the target once complete, so a crash never leaves a truncated file under the
// final name. Shards follow ExLlamaV2's naming (spec §1.4).
#pragma once
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "exl/kernels/linear.h"  // DType

namespace exl {

struct TensorData {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;  // numel(shape) * dtype_size(dtype) bytes, little-endian

  std::int64_t numel() const;
};

// Makes a tensor from a typed buffer (copies `count` elements of T).
template <class T>
TensorData make_tensor(std::string name, DType dtype, std::vector<std::int64_t> shape, const T* data,
                       std::size_t count) {
  TensorData t{std::move(name), dtype, std::move(shape), {}};
  t.bytes.resize(count * sizeof(T));
  if (count) std::memcpy(t.bytes.data(), data, count * sizeof(T));
  return t;
}

// Writes one safetensors file atomically. Throws Error(invalid_argument) on a size/shape
// mismatch or a duplicate name, Error(io) naming the file when writing fails (e.g. a full disk);
// the temporary file is removed on failure.
void write_safetensors(const std::filesystem::path& path, const std::vector<TensorData>& tensors);

// Splits `tensors` (in module order) into shards of at most `max_shard_bytes` of data (0 =
// unlimited): greedily, a new shard is started when adding the next tensor would exceed the
// limit; a single tensor over the limit is an error. Writes `<stem>.safetensors` for one shard,
// else `<stem>-00001-of-0000N.safetensors` ... and returns the file names written (EXL2 files
// use the stem "output" as ExLlamaV2 does, EXL3 files "model" as ExLlamaV3 does).
std::vector<std::filesystem::path> write_safetensors_shards(const std::filesystem::path& dir,
                                                            const std::vector<TensorData>& tensors,
                                                            std::uint64_t max_shard_bytes,
                                                            const std::string& stem = "output");

// Splits tensors of `sizes` bytes (module order) into shards as write_safetensors_shards does;
// returns the tensor indices of each shard. `names`/`dir` only label errors.
std::vector<std::vector<std::size_t>> plan_safetensors_shards(const std::vector<std::uint64_t>& sizes,
                                                              std::uint64_t max_shard_bytes,
                                                              const std::vector<std::string>& names = {},
                                                              const std::filesystem::path& dir = {});

// A tensor's name, dtype and shape, without its data.
struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  std::uint64_t nbytes() const;
};

// Writes the same shards as write_safetensors_shards (names, headers, layout) from tensors that
// arrive one at a time in the planned order, so a model larger than memory can be written: the
// headers are computed up front from the specs. Files are written in place (not atomically):
// callers write into a folder that only becomes the model's once complete (`exl synth` writes
// DIR.partial and renames it). Throws Error(io) naming the file on a failed write (disk full).
class SafetensorsStreamWriter {
 public:
  SafetensorsStreamWriter(std::filesystem::path dir, std::vector<TensorSpec> specs, std::uint64_t max_shard_bytes);
  ~SafetensorsStreamWriter();
  SafetensorsStreamWriter(const SafetensorsStreamWriter&) = delete;
  SafetensorsStreamWriter& operator=(const SafetensorsStreamWriter&) = delete;

  // The next tensor's data; `name` must be the next spec's and `bytes` its size.
  void write(const std::string& name, const void* data, std::size_t bytes);
  bool done() const;
  std::vector<std::filesystem::path> files() const;  // every shard, planned names

 private:
  struct Shard;
  std::filesystem::path dir_;
  std::vector<TensorSpec> specs_;
  std::vector<Shard> shards_;
  std::unique_ptr<std::ofstream> out_;
  std::size_t next_ = 0, shard_ = 0, pos_in_shard_ = 0;
};

// Writes a text file atomically (temporary file + rename). Throws Error(io).
void write_file_atomic(const std::filesystem::path& path, const std::string& contents);

}  // namespace exl
