// Safetensors header parsing and validation. Every weights file the app opens passes through
// parse_header, so it treats the header as untrusted input: bounded length, well-formed JSON,
// known dtypes, exact byte sizes, ranges inside the data section and no overlaps.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "exl/error.h"
#include "exl/tensor_store.h"

namespace exl {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

using json = nlohmann::json;

// A header larger than this is not a model we can load (real headers are a few hundred KB).
constexpr std::uint64_t max_header_bytes = 100ull << 20;

[[noreturn]] void fail(ErrorKind kind, const std::string& file, const std::string& item,
                       const std::string& what) {
  throw Error(kind, what, file, item);
}

bool parse_dtype(const std::string& s, DType& out) {
  static const std::pair<const char*, DType> table[] = {
      {"F16", DType::f16}, {"BF16", DType::bf16}, {"F32", DType::f32}, {"I32", DType::i32},
      {"I16", DType::i16}, {"I8", DType::i8},     {"U8", DType::u8}};
  for (const auto& [name, t] : table) {
    if (s == name) {
      out = t;
      return true;
    }
  }
  return false;
}

// Dtypes defined by the safetensors format that the engine does not load.
bool is_known_safetensors_dtype(const std::string& s) {
  static const char* known[] = {"F64",    "I64",     "U64",     "U32",    "U16",     "BOOL",
                                "F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4",
                                "C64"};
  for (const char* k : known)
    if (s == k) return true;
  return false;
}

// A JSON number that is a non-negative integer (floats and negatives are rejected).
bool as_u64(const json& v, std::uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.get<std::uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < 0) return false;
    out = static_cast<std::uint64_t>(i);
    return true;
  }
  return false;
}

struct Range {
  std::uint64_t begin, end;
  std::size_t index;
};

TensorInfo parse_entry(const std::string& name, const json& v, const std::byte* data_section,
                       std::uint64_t data_size, const std::string& file, Range& range) {
  if (!v.is_object()) fail(ErrorKind::format, file, name, "tensor entry is not a JSON object");
  TensorInfo t;
  t.name = name;
  t.file = file;

  const auto dt = v.find("dtype");
  if (dt == v.end() || !dt->is_string()) fail(ErrorKind::format, file, name, "missing or non-string dtype");
  const std::string dtype = dt->get<std::string>();
  if (!parse_dtype(dtype, t.dtype)) {
    if (is_known_safetensors_dtype(dtype))
      fail(ErrorKind::unsupported, file, name, "dtype " + dtype + " is not supported");
    fail(ErrorKind::format, file, name, "unknown dtype '" + dtype.substr(0, 32) + "'");
  }

  const auto sh = v.find("shape");
  if (sh == v.end() || !sh->is_array()) fail(ErrorKind::format, file, name, "missing or non-array shape");
  if (sh->size() > 8) fail(ErrorKind::format, file, name, "shape has more than 8 dimensions");
  std::uint64_t numel = 1;
  bool overflow = false, has_zero = false;
  for (const auto& d : *sh) {
    std::uint64_t dim = 0;
    if (!as_u64(d, dim) || dim > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      fail(ErrorKind::format, file, name, "shape dimension is not a non-negative integer");
    t.shape.push_back(static_cast<std::int64_t>(dim));
    if (dim == 0) has_zero = true;
    if (dim != 0 && numel > std::numeric_limits<std::uint64_t>::max() / dim) overflow = true;
    numel *= dim;
  }
  const std::uint64_t elem = dtype_size(t.dtype);
  if (has_zero) overflow = false;  // a zero dimension makes the tensor empty whatever the others are
  if (overflow || numel > std::numeric_limits<std::uint64_t>::max() / elem)
    fail(ErrorKind::format, file, name, "shape " + shape_text(t.shape) + " overflows the byte size");
  const std::uint64_t nbytes = numel * elem;

  const auto off = v.find("data_offsets");
  if (off == v.end() || !off->is_array() || off->size() != 2)
    fail(ErrorKind::format, file, name, "data_offsets must be an array of two integers");
  std::uint64_t begin = 0, end = 0;
  if (!as_u64((*off)[0], begin) || !as_u64((*off)[1], end))
    fail(ErrorKind::format, file, name, "data_offsets must be non-negative integers");
  if (begin > end)
    fail(ErrorKind::format, file, name,
         "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] are reversed");
  if (end > data_size)
    fail(ErrorKind::format, file, name,
         "data_offsets end " + std::to_string(end) + " is past the data section (" +
             std::to_string(data_size) + " bytes; file truncated?)");
  if (end - begin != nbytes)
    fail(ErrorKind::format, file, name,
         "dtype " + dtype + " x shape " + shape_text(t.shape) + " is " + std::to_string(nbytes) +
             " bytes but data_offsets span " + std::to_string(end - begin));
  t.data = data_section + begin;
  t.nbytes = static_cast<std::size_t>(nbytes);
  range.begin = begin;
  range.end = end;
  return t;
}

void parse_metadata(const json& v, const std::string& file, std::map<std::string, std::string>* out) {
  if (!v.is_object()) fail(ErrorKind::format, file, "__metadata__", "must be an object of strings");
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string()) fail(ErrorKind::format, file, "__metadata__", "value of '" + key + "' is not a string");
    if (out) (*out)[key] = value.get<std::string>();
  }
}

}  // namespace

std::vector<TensorInfo> SafetensorsFile::parse_header(const std::byte* data, std::size_t file_size,
                                                      const std::string& file,
                                                      std::map<std::string, std::string>* metadata) {
  if (file_size < 8)
    fail(ErrorKind::format, file, "", "file of " + std::to_string(file_size) +
                                          " bytes is too small for a safetensors header");
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | std::to_integer<std::uint64_t>(data[i]);
  if (header_len > file_size - 8)
    fail(ErrorKind::format, file, "", "header length " + std::to_string(header_len) +
                                          " is past the end of the file (" + std::to_string(file_size) +
                                          " bytes; file truncated?)");
  if (header_len > max_header_bytes)
    fail(ErrorKind::format, file, "", "header length " + std::to_string(header_len) + " exceeds the " +
                                          std::to_string(max_header_bytes) + "-byte limit");

  const char* text = reinterpret_cast<const char*>(data + 8);
  json header;
  try {
    header = json::parse(text, text + header_len);
  } catch (const json::parse_error& e) {
    fail(ErrorKind::format, file, "", "malformed header JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const json::exception& e) {
    fail(ErrorKind::format, file, "", std::string("malformed header JSON: ") + e.what());
  }
  if (!header.is_object()) fail(ErrorKind::format, file, "", "header is not a JSON object");

  const std::byte* data_section = data + 8 + header_len;
  const std::uint64_t data_size = file_size - 8 - header_len;
  std::vector<TensorInfo> tensors;
  std::vector<Range> ranges;
  tensors.reserve(header.size());
  ranges.reserve(header.size());
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      parse_metadata(value, file, metadata);
      continue;
    }
    Range r{0, 0, tensors.size()};
    tensors.push_back(parse_entry(name, value, data_section, data_size, file, r));
    ranges.push_back(r);
  }

  // Ranges must not share bytes: sort by start and compare each with the furthest end so far.
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t max_end = 0;
  std::size_t max_owner = 0;
  for (const Range& r : ranges) {
    if (r.begin == r.end) continue;  // empty tensors occupy no bytes
    if (r.begin < max_end)
      fail(ErrorKind::format, file, tensors[r.index].name,
           "data_offsets [" + std::to_string(r.begin) + ", " + std::to_string(r.end) + "] overlap tensor '" +
               tensors[max_owner].name + "'");
    max_end = r.end;
    max_owner = r.index;
  }
  return tensors;
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
  auto file = std::make_unique<SafetensorsFile>();
  file->map_ = MappedFile::open(path);
  file->tensors_ = parse_header(file->map_->data(), file->map_->size(), path.string(), &file->metadata_);
  for (TensorInfo& t : file->tensors_) {
    const std::size_t align = dtype_size(t.dtype);
    if (t.nbytes == 0 || align <= 1 || reinterpret_cast<std::uintptr_t>(t.data) % align == 0) continue;
    auto copy = std::make_unique<std::uint64_t[]>((t.nbytes + 7) / 8);  // 8-byte aligned
    std::memcpy(copy.get(), t.data, t.nbytes);
    t.data = reinterpret_cast<const std::byte*>(copy.get());
    file->aligned_copies_.push_back(std::move(copy));
  }
  return file;
}

std::int64_t TensorInfo::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

}  // namespace exl
