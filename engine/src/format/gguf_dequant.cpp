// Dequantization of ggml block types to fp32, written from the ggml block layouts and matching the
// `gguf` Python package's `gguf.quants.dequantize` bit for bit: the same fp32 operations in the
// same order (products and sums rounded separately: no FMA contraction in this file).
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#include <cstring>

#include "exl/error.h"
#include "exl/gguf.h"
#include "exl/kernels/half.h"

namespace exl {
namespace {

constexpr int QK_K = 256;

inline float h2f(const std::uint8_t* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return half_to_float(half_bits(h));
}

void deq_q4_0(const std::uint8_t* b, float* y) {
  const float d = h2f(b);
  const std::uint8_t* qs = b + 2;
  for (int l = 0; l < 16; ++l) {
    y[l] = d * float(int(qs[l] & 0xF) - 8);
    y[l + 16] = d * float(int(qs[l] >> 4) - 8);
  }
}
void deq_q4_1(const std::uint8_t* b, float* y) {
  const float d = h2f(b), m = h2f(b + 2);
  const std::uint8_t* qs = b + 4;
  for (int l = 0; l < 16; ++l) {
    y[l] = d * float(qs[l] & 0xF) + m;
    y[l + 16] = d * float(qs[l] >> 4) + m;
  }
}
void deq_q5_0(const std::uint8_t* b, float* y) {
  const float d = h2f(b);
  std::uint32_t qh;
  std::memcpy(&qh, b + 2, 4);
  const std::uint8_t* qs = b + 6;
  for (int l = 0; l < 16; ++l) {
    const int lo = (qs[l] & 0xF) | int((qh >> l) & 1) << 4;
    const int hi = (qs[l] >> 4) | int((qh >> (l + 16)) & 1) << 4;
    y[l] = d * float(lo - 16);
    y[l + 16] = d * float(hi - 16);
  }
}
void deq_q5_1(const std::uint8_t* b, float* y) {
  const float d = h2f(b), m = h2f(b + 2);
  std::uint32_t qh;
  std::memcpy(&qh, b + 4, 4);
  const std::uint8_t* qs = b + 8;
  for (int l = 0; l < 16; ++l) {
    const int lo = (qs[l] & 0xF) | int((qh >> l) & 1) << 4;
    const int hi = (qs[l] >> 4) | int((qh >> (l + 16)) & 1) << 4;
    y[l] = d * float(lo) + m;
    y[l + 16] = d * float(hi) + m;
  }
}
void deq_q8_0(const std::uint8_t* b, float* y) {
  const float d = h2f(b);
  for (int l = 0; l < 32; ++l) y[l] = float(std::int8_t(b[2 + l])) * d;
}

void deq_q2_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* scales = b;       // 16
  const std::uint8_t* qs = b + 16;      // 64
  const float d = h2f(b + 80), dmin = h2f(b + 82);
  for (int j = 0; j < 2; ++j)
    for (int s = 0; s < 4; ++s)
      for (int l = 0; l < 32; ++l) {
        const int idx = j * 128 + s * 32 + l;
        const int g = idx / 16;
        const float dl = d * float(scales[g] & 0xF);
        const float ml = dmin * float(scales[g] >> 4);
        const float q = float((qs[j * 32 + l] >> (2 * s)) & 3);
        y[idx] = dl * q - ml;
      }
}

void deq_q3_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* hmask = b;        // 32
  const std::uint8_t* qs = b + 32;      // 64
  const std::uint8_t* sc = b + 96;      // 12
  const float d = h2f(b + 108);
  float dl[16];
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? (sc[i] & 0xF) : (sc[i - 8] >> 4);
    const int high = (sc[8 + (i % 4)] >> (2 * (i / 4))) & 3;
    const int s = std::int8_t(std::uint8_t(low | (high << 4))) - 32;
    dl[i] = d * float(s);
  }
  for (int j = 0; j < 2; ++j)
    for (int s = 0; s < 4; ++s)
      for (int l = 0; l < 32; ++l) {
        const int idx = j * 128 + s * 32 + l;
        const int ql = (qs[j * 32 + l] >> (2 * s)) & 3;
        const int hbit = (hmask[l] >> (idx / 32)) & 1;
        const int q = ql - ((hbit ^ 1) << 2);
        y[idx] = dl[idx / 16] * float(q);
      }
}

void k_scale_min(const std::uint8_t* s, int* sc, int* mn) {
  for (int i = 0; i < 4; ++i) {
    sc[i] = s[i] & 0x3F;
    mn[i] = s[4 + i] & 0x3F;
    sc[4 + i] = (s[8 + i] & 0x0F) | ((s[i] >> 2) & 0x30);
    mn[4 + i] = (s[8 + i] >> 4) | ((s[4 + i] >> 2) & 0x30);
  }
}

void deq_q4_k(const std::uint8_t* b, float* y) {
  const float d = h2f(b), dmin = h2f(b + 2);
  int sc[8], mn[8];
  k_scale_min(b + 4, sc, mn);
  const std::uint8_t* qs = b + 16;  // 128
  for (int j = 0; j < 4; ++j)
    for (int s = 0; s < 2; ++s) {
      const int sub = j * 2 + s;
      const float ds = d * float(sc[sub]), dm = dmin * float(mn[sub]);
      for (int l = 0; l < 32; ++l) y[sub * 32 + l] = ds * float((qs[j * 32 + l] >> (4 * s)) & 0xF) - dm;
    }
}

void deq_q5_k(const std::uint8_t* b, float* y) {
  const float d = h2f(b), dmin = h2f(b + 2);
  int sc[8], mn[8];
  k_scale_min(b + 4, sc, mn);
  const std::uint8_t* qh = b + 16;  // 32
  const std::uint8_t* qs = b + 48;  // 128
  for (int j = 0; j < 4; ++j)
    for (int s = 0; s < 2; ++s) {
      const int sub = j * 2 + s;
      const float ds = d * float(sc[sub]), dm = dmin * float(mn[sub]);
      for (int l = 0; l < 32; ++l) {
        const int q = ((qs[j * 32 + l] >> (4 * s)) & 0xF) | (((qh[l] >> sub) & 1) << 4);
        y[sub * 32 + l] = ds * float(q) - dm;
      }
    }
}

void deq_q6_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* ql = b;         // 128
  const std::uint8_t* qh = b + 128;   // 64
  const std::uint8_t* sc = b + 192;   // 16 int8
  const float d = h2f(b + 208);
  for (int idx = 0; idx < QK_K; ++idx) {
    const int j = idx / 128, r = idx % 128;
    const int lo = (ql[j * 64 + (r % 64)] >> (4 * (r / 64))) & 0xF;
    const int hi = (qh[j * 32 + (r % 32)] >> (2 * (r / 32))) & 3;
    const int q = (lo | (hi << 4)) - 32;
    const float dl = d * float(std::int8_t(sc[idx / 16]));
    y[idx] = dl * float(q);
  }
}

}  // namespace

std::string ggml_type_name(std::uint32_t type) {
  switch (GgmlType(type)) {
    case GgmlType::f32: return "F32";
    case GgmlType::f16: return "F16";
    case GgmlType::bf16: return "BF16";
    case GgmlType::q4_0: return "Q4_0";
    case GgmlType::q4_1: return "Q4_1";
    case GgmlType::q5_0: return "Q5_0";
    case GgmlType::q5_1: return "Q5_1";
    case GgmlType::q8_0: return "Q8_0";
    case GgmlType::q8_1: return "Q8_1";
    case GgmlType::q2_k: return "Q2_K";
    case GgmlType::q3_k: return "Q3_K";
    case GgmlType::q4_k: return "Q4_K";
    case GgmlType::q5_k: return "Q5_K";
    case GgmlType::q6_k: return "Q6_K";
    case GgmlType::q8_k: return "Q8_K";
  }
  return "type " + std::to_string(type);
}

bool ggml_type_layout(std::uint32_t type, std::int64_t* be, std::int64_t* bb) {
  std::int64_t e = 0, s = 0;
  switch (GgmlType(type)) {
    case GgmlType::f32: e = 1; s = 4; break;
    case GgmlType::f16: case GgmlType::bf16: e = 1; s = 2; break;
    case GgmlType::q4_0: e = 32; s = 18; break;
    case GgmlType::q4_1: e = 32; s = 20; break;
    case GgmlType::q5_0: e = 32; s = 22; break;
    case GgmlType::q5_1: e = 32; s = 24; break;
    case GgmlType::q8_0: e = 32; s = 34; break;
    case GgmlType::q2_k: e = 256; s = 84; break;
    case GgmlType::q3_k: e = 256; s = 110; break;
    case GgmlType::q4_k: e = 256; s = 144; break;
    case GgmlType::q5_k: e = 256; s = 176; break;
    case GgmlType::q6_k: e = 256; s = 210; break;
    default: return false;
  }
  *be = e;
  *bb = s;
  return true;
}

void gguf_dequantize(std::uint32_t type, const std::byte* src, std::int64_t n, float* dst) {
  std::int64_t be = 0, bb = 0;
  if (!ggml_type_layout(type, &be, &bb))
    throw Error(ErrorKind::unsupported, "cannot dequantize ggml type " + ggml_type_name(type));
  if (n < 0 || n % be != 0)
    throw Error(ErrorKind::invalid_argument, "element count " + std::to_string(n) + " is not a multiple of the " +
                                                 ggml_type_name(type) + " block size");
  const auto* b = reinterpret_cast<const std::uint8_t*>(src);
  const std::int64_t blocks = n / be;
  switch (GgmlType(type)) {
    case GgmlType::f32: std::memcpy(dst, src, std::size_t(n) * 4); return;
    case GgmlType::f16:
      for (std::int64_t i = 0; i < n; ++i) dst[i] = h2f(b + 2 * i);
      return;
    case GgmlType::bf16:
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint32_t u = std::uint32_t(b[2 * i] | (b[2 * i + 1] << 8)) << 16;
        std::memcpy(&dst[i], &u, 4);
      }
      return;
    default: break;
  }
  void (*fn)(const std::uint8_t*, float*) = nullptr;
  switch (GgmlType(type)) {
    case GgmlType::q4_0: fn = deq_q4_0; break;
    case GgmlType::q4_1: fn = deq_q4_1; break;
    case GgmlType::q5_0: fn = deq_q5_0; break;
    case GgmlType::q5_1: fn = deq_q5_1; break;
    case GgmlType::q8_0: fn = deq_q8_0; break;
    case GgmlType::q2_k: fn = deq_q2_k; break;
    case GgmlType::q3_k: fn = deq_q3_k; break;
    case GgmlType::q4_k: fn = deq_q4_k; break;
    case GgmlType::q5_k: fn = deq_q5_k; break;
    case GgmlType::q6_k: fn = deq_q6_k; break;
    default: throw Error(ErrorKind::unsupported, "cannot dequantize ggml type " + ggml_type_name(type));
  }
  for (std::int64_t i = 0; i < blocks; ++i) fn(b + i * bb, dst + i * be);
}

std::vector<float> gguf_dequantize(const GgufTensor& t) {
  std::vector<float> out(std::size_t(t.numel()));
  gguf_dequantize(t.type, t.data, t.numel(), out.data());
  return out;
}

}  // namespace exl
