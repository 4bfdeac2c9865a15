// ExLlamaV2-compatible KV cache quantization (spec §6.3) in emulated fp16 arithmetic: every
// add, multiply and division is rounded to fp16 as the CUDA kernels do. Block = 512 elements;
// warp w owns elements 64w .. 64w+63; lane l owns the pair (64w + 2l, 64w + 2l + 1).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "exl/kernels/kv_quant.h"

namespace exl {
namespace {

// Unnormalised 32-point Walsh-Hadamard butterflies over the even and the odd elements of every
// 64-element warp of a 512-element block, fp16 rounding after every stage. Lane l of element
// e = 64w + 2l + parity has its stage-i partner at e ^ (2i).
void rotate_block(float* x) {
  float y[512];
  for (int i = 1; i < 32; i <<= 1) {
    const int stride = 2 * i;
    for (int e = 0; e < 512; ++e) {
      const int p = e ^ stride;
      y[e] = (e & stride) ? x[p] - x[e] : x[e] + x[p];
    }
    round_to_half_n(y, 512);
    std::memcpy(x, y, sizeof y);
  }
}

}  // namespace

const char* kv_format_name(KvFormat f) {
  switch (f) {
    case KvFormat::f32: return "fp32";
    case KvFormat::f16: return "fp16";
    case KvFormat::fp8: return "fp8";
    case KvFormat::q8: return "q8";
    case KvFormat::q4: return "q4";
  }
  return "?";
}

double kv_format_bits(KvFormat f) {
  switch (f) {
    case KvFormat::f32: return 32;
    case KvFormat::f16: return 16;
    case KvFormat::fp8: return 8;
    case KvFormat::q8: return 8.5;
    case KvFormat::q4: return 4.5;
  }
  return 0;
}

void kv_quant_block_ref(const half_bits* xh, int bits, std::uint8_t* q, half_bits* scales) {
  float x[512];
  for (int i = 0; i < 512; ++i) x[i] = half_to_float(xh[i]);
  rotate_block(x);
  const float zero = bits == 4 ? 8.0f : 128.0f;
  const int qmax = bits == 4 ? 15 : 255;
  float u[512];
  for (int g = 0; g < 16; ++g) {
    float absmax = 0.0f;
    for (int i = 0; i < 32; ++i) absmax = std::max(absmax, std::fabs(x[32 * g + i]));
    scales[g] = float_to_half(absmax * (1.0f / zero));  // fp16(absmax * fp16(1/zero)); 1/zero is exact
    for (int i = 0; i < 32; ++i) u[32 * g + i] = x[32 * g + i] / absmax;  // fp16 division: fp32 divide, round
  }
  round_to_half_n(u, 512);
  for (int e = 0; e < 512; ++e) u[e] = u[e] * zero + zero;  // one fused multiply-add: exact in fp32, one rounding
  round_to_half_n(u, 512);
  for (int g = 0; g < 16; ++g) {
    for (int i = 0; i < 32; ++i) {
      const int e = 32 * g + i;
      const int v = std::clamp(int(std::nearbyint(u[e])), 0, qmax);
      if (bits == 4) {
        if (e & 1)
          q[e / 2] = std::uint8_t((q[e / 2] & 0x0f) | (v << 4));
        else
          q[e / 2] = std::uint8_t((q[e / 2] & 0xf0) | v);
      } else {
        q[e] = std::uint8_t(v);
      }
    }
  }
}

void kv_dequant_block_ref(const std::uint8_t* q, const half_bits* scales, int bits, half_bits* out) {
  float x[512];
  const int zero = bits == 4 ? 8 : 128;
  for (int e = 0; e < 512; ++e) {
    const int v = bits == 4 ? ((e & 1) ? q[e / 2] >> 4 : q[e / 2] & 15) : q[e];
    x[e] = float(v - zero) * half_to_float(scales[e / 32]);
  }
  round_to_half_n(x, 512);
  rotate_block(x);
  for (int e = 0; e < 512; ++e) x[e] *= 1.0f / 32.0f;
  float_to_half_n(x, out, 512);
}

int kv_q_block(int row_elements) {
  int q = 1;
  while ((std::int64_t(q) * row_elements) % 512 != 0) ++q;
  return q;
}

KvStore::KvStore(KvFormat format, int capacity, int row_elements) : format_(format), row_(row_elements) {
  if (format == KvFormat::q8 || format == KvFormat::q4) {
    const int qb = kv_q_block(row_elements);
    capacity = (capacity + qb - 1) / qb * qb;
  }
  capacity_ = capacity;
  const std::size_t n = std::size_t(capacity) * std::size_t(row_elements);
  switch (format) {
    case KvFormat::f32: data_.assign(n * 4, 0); break;
    case KvFormat::f16: data_.assign(n * 2, 0); break;
    case KvFormat::fp8: data_.assign(n, 0); break;
    case KvFormat::q8: data_.assign(n, 0); scales_.assign(n / 32, 0); break;
    case KvFormat::q4: data_.assign(n / 2, 0); scales_.assign(n / 32, 0); break;
  }
}

void KvStore::write(const float* x, int tokens, int past) {
  const std::size_t row = std::size_t(row_);
  const std::size_t first = std::size_t(past) * row, n = std::size_t(tokens) * row;
  switch (format_) {
    case KvFormat::f32: std::memcpy(data_.data() + first * 4, x, n * 4); return;
    case KvFormat::f16: float_to_half_n(x, reinterpret_cast<half_bits*>(data_.data()) + first, n); return;
    case KvFormat::fp8:
      for (std::size_t i = 0; i < n; ++i) data_[first + i] = fp8_from_half(float_to_half(x[i]));
      return;
    case KvFormat::q8:
    case KvFormat::q4: break;
  }
  const int bits = format_ == KvFormat::q4 ? 4 : 8;
  const int qb = kv_q_block(row_);
  const std::size_t t0 = std::size_t(past / qb * qb), t1 = std::size_t((past + tokens + qb - 1) / qb * qb);
  half_bits block[512];
  for (std::size_t b = t0 * row / 512; b < t1 * row / 512; ++b) {
    const std::size_t e0 = b * 512;
    std::uint8_t* qd = data_.data() + e0 * std::size_t(bits) / 8;
    half_bits* sc = scales_.data() + e0 / 32;
    kv_dequant_block_ref(qd, sc, bits, block);  // earlier contents of the block, as ExLlamaV2 re-reads them
    for (std::size_t i = 0; i < 512; ++i) {
      const std::size_t e = e0 + i;
      if (e >= first && e < first + n) block[i] = float_to_half(x[e - first]);
    }
    kv_quant_block_ref(block, bits, qd, sc);
  }
}

void KvStore::read(int t0, int t1, float* out) const {
  const std::size_t row = std::size_t(row_);
  const std::size_t first = std::size_t(t0) * row, n = std::size_t(t1 - t0) * row;
  switch (format_) {
    case KvFormat::f32: std::memcpy(out, data_.data() + first * 4, n * 4); return;
    case KvFormat::f16: half_to_float_n(reinterpret_cast<const half_bits*>(data_.data()) + first, out, n); return;
    case KvFormat::fp8:
      for (std::size_t i = 0; i < n; ++i) out[i] = half_to_float(half_from_fp8(data_[first + i]));
      return;
    case KvFormat::q8:
    case KvFormat::q4: break;
  }
  const int bits = format_ == KvFormat::q4 ? 4 : 8;
  half_bits block[512];
  for (std::size_t b = first / 512; b * 512 < first + n; ++b) {
    const std::size_t e0 = b * 512;
    kv_dequant_block_ref(data_.data() + e0 * std::size_t(bits) / 8, scales_.data() + e0 / 32, bits, block);
    for (std::size_t i = 0; i < 512; ++i) {
      const std::size_t e = e0 + i;
      if (e >= first && e < first + n) out[e - first] = half_to_float(block[i]);
    }
  }
}

// A run of positions never crosses a page, so each piece is one contiguous range of rows.
template <typename F>
static void for_each_row_run(const AttentionParams& p, int t0, int t1, F&& f) {
  for (int t = t0; t < t1;) {
    const int n = p.page_table ? std::min(t1, (t / p.page_tokens + 1) * p.page_tokens) - t : t1 - t;
    f(int(kv_row(p, t)), n, t - t0);
    t += n;
  }
}

void kv_read_positions(const KvStore& s, const AttentionParams& p, int t0, int t1, float* out) {
  const std::size_t row = std::size_t(s.row_elements());
  for_each_row_run(p, t0, t1, [&](int r, int n, int off) { s.read(r, r + n, out + std::size_t(off) * row); });
}

void kv_write_positions(KvStore& s, const AttentionParams& p, const float* x, int tokens, int past) {
  const std::size_t row = std::size_t(s.row_elements());
  for_each_row_run(p, past, past + tokens, [&](int r, int n, int off) { s.write(x + std::size_t(off) * row, n, r); });
}

void KvStore::copy_rows(int dst, int src, int rows) {
  if (rows <= 0 || dst == src) return;
  const std::size_t row = std::size_t(row_);
  const std::size_t bytes_per_row = format_ == KvFormat::f32   ? row * 4
                                    : format_ == KvFormat::f16 ? row * 2
                                    : format_ == KvFormat::q4  ? row / 2
                                                               : row;
  std::memmove(data_.data() + std::size_t(dst) * bytes_per_row, data_.data() + std::size_t(src) * bytes_per_row,
               std::size_t(rows) * bytes_per_row);
  if (!scales_.empty())
    std::memmove(scales_.data() + std::size_t(dst) * row / 32, scales_.data() + std::size_t(src) * row / 32,
                 std::size_t(rows) * row / 32 * sizeof(half_bits));
}

void attention_kvstore_ref(const AttentionParams& p, const float* q, const KvStore& k, const KvStore& v,
                           const float* k_new, const float* v_new, float* out) {
  const std::size_t row = std::size_t(p.n_kv_heads) * std::size_t(p.head_dim);
  const std::size_t total = std::size_t(p.past + p.tokens);
  std::vector<float> kc(total * row), vc(total * row);
  if (p.past > 0) {
    kv_read_positions(k, p, 0, p.past, kc.data());
    kv_read_positions(v, p, 0, p.past, vc.data());
  }
  for (std::size_t i = 0; i < std::size_t(p.tokens) * row; ++i) {
    kc[std::size_t(p.past) * row + i] = round_to_half(k_new[i]);
    vc[std::size_t(p.past) * row + i] = round_to_half(v_new[i]);
  }
  AttentionParams a = p;
  a.cache_dtype = DType::f32;
  a.page_table = nullptr;  // kc/vc hold the positions in order
  attention_ref(a, q, kc.data(), vc.data(), out);
}

}  // namespace exl
