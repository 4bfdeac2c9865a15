// GGUF files (llama.cpp's model format), versions 2 and 3: memory-mapped, strictly validated
// header (metadata of every value type, tensor infos, alignment), dequantization of the common
// ggml tensor types to fp32 (bit-exact with the `gguf` Python package's `dequantize`), and the
// import of llama / qwen2 models into an HF-style folder (config.json, tokenizer.json,
// tokenizer_config.json, generation_config.json, model.safetensors) that Model::open loads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace exl {

class MappedFile;

enum class GgufValueType : std::uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7, string = 8, array = 9,
  u64 = 10, i64 = 11, f64 = 12,
};
const char* gguf_value_type_name(GgufValueType t);

// One metadata value. Integers are held in `i` (signed types) / `u` (unsigned and bool), floats in
// `f`; arrays hold their elements (of `elem_type`; nested arrays are arrays of arrays).
struct GgufValue {
  GgufValueType type = GgufValueType::u32;
  std::uint64_t u = 0;
  std::int64_t i = 0;
  double f = 0.0;
  std::string s;
  GgufValueType elem_type = GgufValueType::u32;
  std::vector<GgufValue> arr;

  bool is_integer() const;
  bool is_float() const { return type == GgufValueType::f32 || type == GgufValueType::f64; }
  // Numeric value of an integer/float/bool scalar as a double / int64 (nullopt otherwise).
  std::optional<double> as_number() const;
  std::optional<std::int64_t> as_int() const;
};

// The ggml tensor types we read (ids as in ggml.h).
enum class GgmlType : std::uint32_t {
  f32 = 0, f16 = 1, q4_0 = 2, q4_1 = 3, q5_0 = 6, q5_1 = 7, q8_0 = 8, q8_1 = 9, q2_k = 10, q3_k = 11,
  q4_k = 12, q5_k = 13, q6_k = 14, q8_k = 15, bf16 = 30,
};
// Known name ("Q4_K") of a type id, "type N" for unknown ids.
std::string ggml_type_name(std::uint32_t type);
// Elements per block and bytes per block; false for ids we cannot dequantize.
bool ggml_type_layout(std::uint32_t type, std::int64_t* block_elems, std::int64_t* block_bytes);

struct GgufTensor {
  std::string name;
  std::uint32_t type = 0;           // GgmlType id (validated: one we can dequantize)
  std::vector<std::uint64_t> dims;  // ggml order: dims[0] is the contiguous (row) length
  std::uint64_t offset = 0;         // relative to the data section
  const std::byte* data = nullptr;  // inside the memory map / buffer
  std::size_t nbytes = 0;

  std::int64_t numel() const;
  // PyTorch/HF order (dims reversed): {rows, cols} for a matrix.
  std::vector<std::int64_t> shape() const;
};

class GgufFile {
 public:
  // Maps and validates the whole file. Throws Error(io/format/unsupported) naming the file and the
  // key or tensor involved.
  static std::unique_ptr<GgufFile> open(const std::filesystem::path& path);
  // Parses an in-memory file (tests, fuzzer). `data` must outlive the result.
  static std::unique_ptr<GgufFile> parse(const std::byte* data, std::size_t size, const std::string& display_name);
  ~GgufFile();

  std::uint32_t version() const { return version_; }
  std::uint64_t alignment() const { return alignment_; }
  std::uint64_t data_offset() const { return data_offset_; }
  const std::string& display_name() const { return name_; }
  const std::map<std::string, GgufValue>& metadata() const { return meta_; }
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* find_tensor(const std::string& name) const;
  const GgufValue* find(const std::string& key) const;

  // Typed getters: nullopt when absent; Error(format) naming the key when of the wrong type.
  std::optional<std::string> get_string(const std::string& key) const;
  std::optional<std::int64_t> get_int(const std::string& key) const;
  std::optional<double> get_number(const std::string& key) const;
  std::optional<bool> get_bool(const std::string& key) const;
  std::vector<std::string> get_string_array(const std::string& key) const;  // empty when absent
  std::vector<double> get_number_array(const std::string& key) const;

 private:
  GgufFile() = default;
  std::unique_ptr<MappedFile> map_;
  std::string name_;
  std::uint32_t version_ = 0;
  std::uint64_t alignment_ = 32;
  std::uint64_t data_offset_ = 0;
  std::map<std::string, GgufValue> meta_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, std::size_t> index_;
};

// Dequantizes `n` elements (a multiple of the type's block size) of `type` at `src` into `dst`.
// Throws Error(unsupported) for types we do not handle, Error(invalid_argument) for a bad `n`.
void gguf_dequantize(std::uint32_t type, const std::byte* src, std::int64_t n, float* dst);
std::vector<float> gguf_dequantize(const GgufTensor& t);

// ---- import into our model (llama, qwen2) ----

struct GgufImportTensor {
  std::string hf_name;                // "model.layers.0.self_attn.q_proj.weight"
  const GgufTensor* src = nullptr;
  std::vector<std::int64_t> shape;    // HF shape
  int unpermute_heads = 0;            // > 0: undo llama.cpp's Q/K row permutation with this many heads
};

struct GgufImportPlan {
  std::string architecture;  // general.architecture
  std::string config_json;
  std::string generation_config_json;
  std::string tokenizer_json;
  std::string tokenizer_config_json;
  std::vector<GgufImportTensor> tensors;  // module order
};

// Maps hyperparameters, tensor names and the tokenizer. Throws Error(unsupported) for other
// architectures / tokenizer models, Error(missing_tensor / format) naming the GGUF file.
GgufImportPlan plan_gguf_import(const GgufFile& f);
// Dequantized fp32 values of one planned tensor in HF layout (permutation undone).
std::vector<float> load_import_tensor(const GgufImportTensor& t);

enum class ImportDType { f16, bf16 };
// Writes the whole folder (atomically per file). `progress(done, total, name)` per tensor.
void import_gguf(const std::filesystem::path& gguf_path, const std::filesystem::path& out_dir, ImportDType dtype,
                 const std::function<void(std::size_t, std::size_t, const std::string&)>& progress = {});

}  // namespace exl
