// Safetensors files, memory-mapped, and the per-model tensor index over all shards.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exl/kernels/linear.h"  // DType

namespace exl {

const char* dtype_name(DType t);
std::size_t dtype_size(DType t);

// A shape as error messages write it: "[384,1024]".
std::string shape_text(const std::vector<std::int64_t>& shape);

struct TensorInfo {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  const std::byte* data = nullptr;  // inside the memory map (or an aligned copy); valid while the store lives
  std::size_t nbytes = 0;
  std::string file;                 // path of the shard that holds it

  std::int64_t numel() const;
  template <class T> const T* as() const { return reinterpret_cast<const T*>(data); }
};

// Read-only memory map of a whole file (RAII; platform details behind this class).
class MappedFile {
 public:
  static std::unique_ptr<MappedFile> open(const std::filesystem::path& path);  // throws Error(io)
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile() = default;
  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

// One .safetensors file. Validates the whole header on open: 8-byte length within bounds, JSON
// well-formed, known dtypes, shape x dtype size == byte range, ranges inside the data section,
// non-overlapping. Throws Error(format/io) naming the file and tensor.
class SafetensorsFile {
 public:
  static std::unique_ptr<SafetensorsFile> open(const std::filesystem::path& path);
  // Parses a header from memory (used by the fuzzer and tests); `file_size` is the whole file's size.
  static std::vector<TensorInfo> parse_header(const std::byte* data, std::size_t file_size,
                                              const std::string& display_name,
                                              std::map<std::string, std::string>* metadata = nullptr);
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::filesystem::path& path() const { return map_->path(); }

 private:
  std::unique_ptr<MappedFile> map_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
  // Copies of the tensors whose data the file leaves misaligned for their element type (some
  // writers, ExLlamaV3's among them, do not pad the header to 8 bytes): `data` points here.
  std::vector<std::unique_ptr<std::uint64_t[]>> aligned_copies_;
};

// All tensors of a model folder: every *.safetensors file (through model.safetensors.index.json
// when present, which must then name existing shards holding the listed tensors). A tensor name
// present in two shards is an error.
class TensorStore {
 public:
  static TensorStore open_dir(const std::filesystem::path& dir);
  static TensorStore open_files(const std::vector<std::filesystem::path>& files);

  const TensorInfo* find(const std::string& name) const;  // nullptr when absent
  const TensorInfo& get(const std::string& name) const;   // throws Error(missing_tensor)
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  std::vector<std::string> names() const;
  std::size_t total_bytes() const;
  const std::vector<std::filesystem::path>& files() const { return files_; }

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  std::map<std::string, const TensorInfo*> index_;
  std::vector<std::filesystem::path> files_;
};

}  // namespace exl
