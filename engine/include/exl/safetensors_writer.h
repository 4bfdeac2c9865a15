// Writing safetensors files: the header JSON (tensor names sorted, `__metadata__`
// {"format": "pt"}), the data section 8-byte aligned, tensors laid out in the order they were
// added (module order). Files are written atomically: a temporary file in the same folder is
// renamed over the target once complete, so a crash never leaves a truncated file under the
// final name. Shards follow ExLlamaV2's naming (spec §1.4).
#pragma once
#include <cstdint>
#include <cstring>
#include <filesystem>
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
// limit; a single tensor over the limit is an error. Writes `output.safetensors` for one shard,
// else `output-00001-of-0000N.safetensors` ... and returns the file names written.
std::vector<std::filesystem::path> write_safetensors_shards(const std::filesystem::path& dir,
                                                            const std::vector<TensorData>& tensors,
                                                            std::uint64_t max_shard_bytes);

// Writes a text file atomically (temporary file + rename). Throws Error(io).
void write_file_atomic(const std::filesystem::path& path, const std::string& contents);

}  // namespace exl
