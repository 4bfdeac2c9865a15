// Loading one EXL3 linear layer (spec §2.1, §2.3, docs/EXL3.md): every tensor's dtype and shape,
// the bit rate from the trellis tile width, the codebook from the marker tensors, the sign
// vectors. Anything off is an Error naming the file and the tensor.
#include "exl/exl3_layer.h"

#include <cstring>
#include <string>

#include "exl/error.h"

namespace exl {
namespace {

int pad128(int n) { return (n + 127) / 128 * 128; }

[[noreturn]] void fail(ErrorKind kind, const TensorInfo& t, const std::string& what) {
  throw Error(kind, what, t.file, t.name);
}

void expect_dtype(const TensorInfo& t, DType want) {
  if (t.dtype != want)
    fail(ErrorKind::shape, t, std::string("dtype is ") + dtype_name(t.dtype) + ", expected " + dtype_name(want));
}

void expect_shape(const TensorInfo& t, const std::vector<std::int64_t>& want, const std::string& why) {
  if (t.shape != want) fail(ErrorKind::shape, t, "shape is " + shape_text(t.shape) + ", expected " + shape_text(want) + why);
}

template <class T>
std::vector<T> copy_of(const TensorInfo& t) {
  std::vector<T> v(std::size_t(t.nbytes / sizeof(T)));
  if (!v.empty()) std::memcpy(v.data(), t.data, v.size() * sizeof(T));
  return v;
}

// The legacy packed sign words (I16 [len/16]): element 16w + b is -1 where bit b of word w is set.
std::vector<half_bits> unpack_signs(const TensorInfo& t, int len) {
  expect_dtype(t, DType::i16);
  expect_shape(t, {len / 16}, " (packed sign bits of " + std::to_string(len) + " features)");
  const std::vector<std::uint16_t> words = copy_of<std::uint16_t>(t);
  std::vector<half_bits> out(static_cast<std::size_t>(len));
  for (int i = 0; i < len; ++i) out[std::size_t(i)] = (words[std::size_t(i / 16)] >> (i % 16)) & 1 ? 0xBC00 : 0x3C00;
  return out;
}

std::vector<half_bits> sign_vector(const TensorStore& store, const std::string& prefix, const char* unpacked,
                                   const char* packed, int len, const std::string& file, const char* side) {
  if (const TensorInfo* t = store.find(prefix + "." + unpacked)) {
    expect_dtype(*t, DType::f16);
    expect_shape(*t, {len}, std::string(" (") + side + " features padded to 128)");
    return copy_of<half_bits>(*t);
  }
  if (const TensorInfo* t = store.find(prefix + "." + packed)) return unpack_signs(*t, len);
  throw Error(ErrorKind::missing_tensor,
              std::string("EXL3 layer has a trellis but no ") + side + " sign vector (" + unpacked + " or " + packed + ")",
              file, prefix + "." + unpacked);
}

// mcg / mul1 markers: I32 scalars holding the multiplier of their codebook.
Exl3Codebook codebook_of(const TensorStore& store, const std::string& prefix) {
  const TensorInfo* mcg = store.find(prefix + ".mcg");
  const TensorInfo* mul1 = store.find(prefix + ".mul1");
  if (mcg && mul1) fail(ErrorKind::format, *mul1, "both codebook markers (mcg and mul1) are present");
  const TensorInfo* m = mcg ? mcg : mul1;
  if (!m) return Exl3Codebook::inst3;
  expect_dtype(*m, DType::i32);
  if (!(m->shape.empty() || m->shape == std::vector<std::int64_t>{1}))
    fail(ErrorKind::shape, *m, "shape is " + shape_text(m->shape) + ", expected a scalar");
  std::uint32_t v = 0;
  std::memcpy(&v, m->data, 4);
  const std::uint32_t want = mcg ? 0xCBAC1FEDu : 0x83DCD12Du;
  if (v != want)
    fail(ErrorKind::unsupported, *m, "codebook multiplier " + std::to_string(v) + " is not the format's " + std::to_string(want) +
                                         " (experimental multipliers are not supported)");
  return mcg ? Exl3Codebook::mcg : Exl3Codebook::mul1;
}

}  // namespace

std::uint64_t Exl3Tensors::storage_bits() const {
  const std::uint64_t trellis_bits = std::uint64_t(view.k / 16) * (view.n / 16) * view.tile_words() * 16;
  const std::uint64_t marker = view.codebook == Exl3Codebook::inst3 ? 0 : 32;
  return trellis_bits + 16ull * (std::uint64_t(view.k) + view.n) + marker;
}

std::unique_ptr<Exl3Tensors> load_exl3(const TensorStore& store, const std::string& prefix, int in_features,
                                       int out_features) {
  const TensorInfo& tr = store.get(prefix + ".trellis");
  const std::string& file = tr.file;
  const int k = pad128(in_features), n = pad128(out_features);
  expect_dtype(tr, DType::i16);
  if (tr.shape.size() != 3) fail(ErrorKind::shape, tr, "shape is " + shape_text(tr.shape) + ", expected 3 dimensions [k/16, n/16, 16*K]");
  if (tr.shape[0] * 16 != k || tr.shape[1] * 16 != n)
    fail(ErrorKind::shape, tr, "shape is " + shape_text(tr.shape) + ": " + std::to_string(tr.shape[0]) + " x " +
                                   std::to_string(tr.shape[1]) + " tiles of 16x16 do not cover " + std::to_string(in_features) +
                                   " x " + std::to_string(out_features) + " padded to multiples of 128 (expected [" +
                                   std::to_string(k / 16) + "," + std::to_string(n / 16) + ",16*K])");
  const Exl3Codebook cb = codebook_of(store, prefix);
  const std::int64_t words = tr.shape[2];
  const int bits2 = words % 8 == 0 ? int(words / 8) : 0;
  if (!exl3_valid_bits2(bits2, cb))
    fail(bits2 % 2 == 1 && bits2 >= 3 && bits2 <= 7 ? ErrorKind::unsupported : ErrorKind::shape, tr,
         "tile width " + std::to_string(words) + " words is no bit rate of the " + exl3_codebook_name(cb) +
             " codebook (16*K for K = 1..8" + (cb == Exl3Codebook::mul1 ? ", 16*K + 8 for 1.5 / 2.5 / 3.5" : "") + ")");

  auto t = std::make_unique<Exl3Tensors>();
  t->prefix = prefix;
  t->trellis = &tr;
  t->suh = sign_vector(store, prefix, "suh", "su", k, file, "input");
  t->svh = sign_vector(store, prefix, "svh", "sv", n, file, "output");
  Exl3Weight& w = t->view;
  if (reinterpret_cast<std::uintptr_t>(tr.data) % 2 != 0) {
    t->trellis_copy = copy_of<std::uint16_t>(tr);
    w.trellis = t->trellis_copy.data();
  } else {
    w.trellis = tr.as<std::uint16_t>();
  }
  w.suh = t->suh.data();
  w.svh = t->svh.data();
  w.k = k;
  w.n = n;
  w.bits2 = bits2;
  w.codebook = cb;

  if (const TensorInfo* bias = store.find(prefix + ".bias")) {
    if (bias->dtype != DType::f16 && bias->dtype != DType::f32)
      fail(ErrorKind::shape, *bias, std::string("dtype is ") + dtype_name(bias->dtype) + ", expected F16 or F32");
    if (bias->shape != std::vector<std::int64_t>{n} && bias->shape != std::vector<std::int64_t>{out_features})
      fail(ErrorKind::shape, *bias, "shape is " + shape_text(bias->shape) + ", expected [" + std::to_string(n) + "] or [" +
                                        std::to_string(out_features) + "]");
    t->bias = bias;
  }
  return t;
}

}  // namespace exl
