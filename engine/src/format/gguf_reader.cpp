// GGUF header parsing with strict validation (magic, version, bounded counts and string lengths,
// value types, tensor dims, offsets inside the file and aligned, no overlaps).
#include <algorithm>
#include <cstring>
#include <string_view>
#include <limits>

#include "exl/error.h"
#include "exl/gguf.h"
#include "exl/tensor_store.h"

namespace exl {
namespace {

constexpr std::uint64_t kMaxString = 64ull << 20;     // 64 MiB (chat templates, merges are short)
constexpr std::uint64_t kMaxArray = 64ull << 20;      // elements of one metadata array
constexpr std::uint64_t kMaxCount = 1ull << 24;       // tensors / metadata keys
constexpr int kMaxDepth = 8;                          // nested arrays
constexpr std::uint32_t kMaxDims = 4;                 // GGML_MAX_DIMS

// Strict UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF). GGUF strings
// are UTF-8 by the format's definition; the import writes them into JSON, which needs it too.
bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned c = p[i];
    if (c < 0x80) { ++i; continue; }
    std::size_t len;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
    else return false;
    if (n - i < len || p[i + 1] < lo || p[i + 1] > hi) return false;
    for (std::size_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

class Cursor {
 public:
  Cursor(const std::byte* d, std::size_t n, const std::string& file) : d_(d), n_(n), file_(file) {}
  std::size_t pos() const { return pos_; }
  [[noreturn]] void fail(const std::string& msg, const std::string& item) const {
    throw Error(ErrorKind::format, file_ + ": " + msg + (item.empty() ? "" : " (" + item + ")") + " at byte " +
                                       std::to_string(pos_),
                file_, item);
  }
  void need(std::uint64_t bytes, const std::string& item) const {
    if (bytes > n_ - pos_) fail("truncated: needs " + std::to_string(bytes) + " more bytes", item);
  }
  template <class T> T read(const std::string& item) {
    need(sizeof(T), item);
    T v;
    std::memcpy(&v, d_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string str(const std::string& item) {
    const auto len = read<std::uint64_t>(item);
    if (len > kMaxString) fail("string length " + std::to_string(len) + " is absurd", item);
    need(len, item);
    std::string s(reinterpret_cast<const char*>(d_ + pos_), std::size_t(len));
    if (!valid_utf8(s)) fail("string is not valid UTF-8", item);
    pos_ += std::size_t(len);
    return s;
  }

 private:
  const std::byte* d_;
  std::size_t n_;
  std::size_t pos_ = 0;
  const std::string& file_;
};

bool valid_value_type(std::uint32_t t) { return t <= 12; }

GgufValue read_value(Cursor& c, GgufValueType type, const std::string& key, int depth) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufValueType::u8: v.u = c.read<std::uint8_t>(key); v.i = std::int64_t(v.u); break;
    case GgufValueType::i8: v.i = c.read<std::int8_t>(key); break;
    case GgufValueType::u16: v.u = c.read<std::uint16_t>(key); v.i = std::int64_t(v.u); break;
    case GgufValueType::i16: v.i = c.read<std::int16_t>(key); break;
    case GgufValueType::u32: v.u = c.read<std::uint32_t>(key); v.i = std::int64_t(v.u); break;
    case GgufValueType::i32: v.i = c.read<std::int32_t>(key); break;
    case GgufValueType::u64: v.u = c.read<std::uint64_t>(key); v.i = std::int64_t(v.u); break;
    case GgufValueType::i64: v.i = c.read<std::int64_t>(key); break;
    case GgufValueType::f32: v.f = c.read<float>(key); break;
    case GgufValueType::f64: v.f = c.read<double>(key); break;
    case GgufValueType::boolean: {
      const auto b = c.read<std::uint8_t>(key);
      if (b > 1) c.fail("bool value " + std::to_string(b) + " is not 0 or 1", key);
      v.u = b;
      break;
    }
    case GgufValueType::string: v.s = c.str(key); break;
    case GgufValueType::array: {
      if (depth >= kMaxDepth) c.fail("arrays nested too deeply", key);
      const auto et = c.read<std::uint32_t>(key);
      if (!valid_value_type(et)) c.fail("unknown array element type " + std::to_string(et), key);
      const auto n = c.read<std::uint64_t>(key);
      if (n > kMaxArray) c.fail("array length " + std::to_string(n) + " is absurd", key);
      v.elem_type = GgufValueType(et);
      // Fixed-size elements: the whole array must fit before we allocate anything.
      static const std::uint64_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
      if (sizes[et]) c.need(n * sizes[et], key);
      else c.need(n * 8, key);  // strings / arrays need at least their 8-byte length each
      v.arr.reserve(std::size_t(n));
      for (std::uint64_t i = 0; i < n; ++i) v.arr.push_back(read_value(c, v.elem_type, key, depth + 1));
      break;
    }
    default: c.fail("unknown value type " + std::to_string(std::uint32_t(type)), key);
  }
  return v;
}

}  // namespace

const char* gguf_value_type_name(GgufValueType t) {
  static const char* names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = std::uint32_t(t);
  return i <= 12 ? names[i] : "unknown";
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufValueType::u8: case GgufValueType::i8: case GgufValueType::u16: case GgufValueType::i16:
    case GgufValueType::u32: case GgufValueType::i32: case GgufValueType::u64: case GgufValueType::i64: return true;
    default: return false;
  }
}
std::optional<double> GgufValue::as_number() const {
  if (is_float()) return f;
  if (type == GgufValueType::u64) return double(u);
  if (is_integer()) return double(i);
  if (type == GgufValueType::boolean) return double(u);
  return std::nullopt;
}
std::optional<std::int64_t> GgufValue::as_int() const {
  if (type == GgufValueType::u64 && u > std::uint64_t(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  if (is_integer()) return i;
  if (type == GgufValueType::boolean) return std::int64_t(u);
  return std::nullopt;
}

std::int64_t GgufTensor::numel() const {
  std::int64_t n = 1;
  for (auto d : dims) n *= std::int64_t(d);
  return n;
}
std::vector<std::int64_t> GgufTensor::shape() const {
  std::vector<std::int64_t> s;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) s.push_back(std::int64_t(*it));
  return s;
}

GgufFile::~GgufFile() = default;

std::unique_ptr<GgufFile> GgufFile::open(const std::filesystem::path& path) {
  auto map = MappedFile::open(path);
  auto f = parse(map->data(), map->size(), path.string());
  f->map_ = std::move(map);
  return f;
}

std::unique_ptr<GgufFile> GgufFile::parse(const std::byte* data, std::size_t size, const std::string& display_name) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->name_ = display_name;
  Cursor c(data, size, f->name_);
  const auto magic = c.read<std::uint32_t>("magic");
  if (magic != 0x46554747u) c.fail("not a GGUF file (bad magic)", "magic");
  f->version_ = c.read<std::uint32_t>("version");
  if (f->version_ != 2 && f->version_ != 3)
    throw Error(ErrorKind::unsupported, f->name_ + ": GGUF version " + std::to_string(f->version_) +
                                            " is not supported (2 and 3 are)", f->name_, "version");
  const auto n_tensors = c.read<std::uint64_t>("tensor_count");
  const auto n_kv = c.read<std::uint64_t>("kv_count");
  if (n_tensors > kMaxCount) c.fail("tensor count " + std::to_string(n_tensors) + " is absurd", "tensor_count");
  if (n_kv > kMaxCount) c.fail("metadata count " + std::to_string(n_kv) + " is absurd", "kv_count");

  for (std::uint64_t k = 0; k < n_kv; ++k) {
    const std::string key = c.str("metadata key " + std::to_string(k));
    if (key.empty()) c.fail("empty metadata key", "metadata key " + std::to_string(k));
    const auto t = c.read<std::uint32_t>(key);
    if (!valid_value_type(t)) c.fail("unknown value type " + std::to_string(t), key);
    GgufValue v = read_value(c, GgufValueType(t), key, 0);
    if (!f->meta_.emplace(key, std::move(v)).second) c.fail("duplicate metadata key", key);
  }
  if (const GgufValue* a = f->find("general.alignment")) {
    const auto al = a->as_int();
    if (!a->is_integer() || !al || *al <= 0 || (*al & (*al - 1)) != 0 || *al > (1 << 20))
      c.fail("general.alignment must be a power of two", "general.alignment");
    f->alignment_ = std::uint64_t(*al);
  }

  f->tensors_.reserve(std::size_t(std::min<std::uint64_t>(n_tensors, size / 24)));
  for (std::uint64_t k = 0; k < n_tensors; ++k) {
    GgufTensor t;
    t.name = c.str("tensor " + std::to_string(k) + " name");
    const auto n_dims = c.read<std::uint32_t>(t.name);
    if (n_dims == 0 || n_dims > kMaxDims) c.fail("tensor has " + std::to_string(n_dims) + " dims (1..4 allowed)", t.name);
    std::uint64_t numel = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const auto dim = c.read<std::uint64_t>(t.name);
      if (dim == 0 || dim > (1ull << 40)) c.fail("dimension " + std::to_string(dim) + " is out of range", t.name);
      if (numel > (std::uint64_t(1) << 62) / dim) c.fail("element count overflows", t.name);
      numel *= dim;
      t.dims.push_back(dim);
    }
    t.type = c.read<std::uint32_t>(t.name);
    t.offset = c.read<std::uint64_t>(t.name);
    std::int64_t be = 0, bb = 0;
    if (!ggml_type_layout(t.type, &be, &bb))
      throw Error(ErrorKind::unsupported, f->name_ + ": tensor '" + t.name + "' has unsupported type " +
                                              ggml_type_name(t.type), f->name_, t.name);
    if (t.dims[0] % std::uint64_t(be) != 0)
      c.fail("row length " + std::to_string(t.dims[0]) + " is not a multiple of the " + ggml_type_name(t.type) +
                 " block size " + std::to_string(be), t.name);
    t.nbytes = std::size_t(numel / std::uint64_t(be) * std::uint64_t(bb));
    if (t.offset % f->alignment_ != 0) c.fail("tensor offset " + std::to_string(t.offset) + " is not aligned", t.name);
    if (f->index_.count(t.name)) c.fail("duplicate tensor name", t.name);
    f->index_[t.name] = f->tensors_.size();
    f->tensors_.push_back(std::move(t));
  }
  const std::uint64_t data_start = (std::uint64_t(c.pos()) + f->alignment_ - 1) / f->alignment_ * f->alignment_;
  f->data_offset_ = data_start;
  if (n_tensors > 0 && data_start > size) c.fail("data section starts past the end of the file", "data");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (auto& t : f->tensors_) {
    const std::uint64_t avail = size - data_start;
    if (t.offset > avail || t.nbytes > avail - t.offset)
      throw Error(ErrorKind::format, f->name_ + ": tensor '" + t.name + "' data [" + std::to_string(t.offset) + ", +" +
                                         std::to_string(t.nbytes) + ") lies past the end of the file",
                  f->name_, t.name);
    t.data = data + data_start + t.offset;
    ranges.emplace_back(t.offset, t.offset + t.nbytes);
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      throw Error(ErrorKind::format, f->name_ + ": tensor data ranges overlap", f->name_, "data");
  return f;
}

const GgufTensor* GgufFile::find_tensor(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}
const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = meta_.find(key);
  return it == meta_.end() ? nullptr : &it->second;
}

namespace {
[[noreturn]] void wrong_type(const GgufFile& f, const std::string& key, const char* want) {
  throw Error(ErrorKind::format, f.display_name() + ": metadata '" + key + "' is not " + want, f.display_name(), key);
}
}  // namespace

std::optional<std::string> GgufFile::get_string(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufValueType::string) wrong_type(*this, key, "a string");
  return v->s;
}
std::optional<std::int64_t> GgufFile::get_int(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  auto i = v->as_int();
  if (!i) wrong_type(*this, key, "an integer");
  return i;
}
std::optional<double> GgufFile::get_number(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  auto d = v->as_number();
  if (!d) wrong_type(*this, key, "a number");
  return d;
}
std::optional<bool> GgufFile::get_bool(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufValueType::boolean) wrong_type(*this, key, "a bool");
  return v->u != 0;
}
std::vector<std::string> GgufFile::get_string_array(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return {};
  if (v->type != GgufValueType::array || v->elem_type != GgufValueType::string) wrong_type(*this, key, "a string array");
  std::vector<std::string> out;
  out.reserve(v->arr.size());
  for (auto& e : v->arr) out.push_back(e.s);
  return out;
}
std::vector<double> GgufFile::get_number_array(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return {};
  if (v->type != GgufValueType::array) wrong_type(*this, key, "an array");
  std::vector<double> out;
  out.reserve(v->arr.size());
  for (auto& e : v->arr) {
    auto d = e.as_number();
    if (!d) wrong_type(*this, key, "a numeric array");
    out.push_back(*d);
  }
  return out;
}

}  // namespace exl
