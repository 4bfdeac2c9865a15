// Reference EXL3 decoder and linear (spec §3–§4, docs/EXL3.md): every step written out the
// plain way — one bit at a time for the trellis windows, the codebooks as integer hashes plus one
// exactly emulated fp16 operation, the Hadamard butterflies in ExLlamaV3's order — so that the
// decoded W-hat and the transformed activations equal ExLlamaV3's bit for bit. Single-threaded;
// the matmul accumulates in double.
#include <cmath>
#include <cstdint>
#include <vector>

#include "exl/kernels/exl3.h"

namespace exl {

const char* exl3_codebook_name(Exl3Codebook cb) {
  switch (cb) {
    case Exl3Codebook::inst3: return "3inst";
    case Exl3Codebook::mcg: return "mcg";
    case Exl3Codebook::mul1: return "mul1";
  }
  return "?";
}

bool exl3_valid_bits2(int bits2, Exl3Codebook cb) {
  if (bits2 < 2 || bits2 > 16) return false;
  if (bits2 % 2 == 0) return true;
  return cb == Exl3Codebook::mul1 && bits2 <= 7;  // 1.5, 2.5, 3.5
}

namespace {

// 3INST / MCG: keep the sign and low 12 bits of each half, force the exponent to 0b011xx, and add
// the two fp16 halves (exact in fp32, then one rounding to fp16).
half_bits decode_halves(std::uint32_t x) {
  const std::uint32_t y = (x & 0x8FFF8FFFu) ^ 0x3B603B60u;
  const float lo = half_to_float(half_bits(y & 0xFFFFu));
  const float hi = half_to_float(half_bits(y >> 16));
  return float_to_half(lo + hi);
}

// End bit (exclusive) of position t's value in the tile's stream. Integer rates: K bits each.
// Half-integer rates KA + 0.5: even positions take KA bits, odd positions KA + 1.
std::int64_t value_end_bit(int bits2, int t) {
  if (bits2 % 2 == 0) return std::int64_t(t + 1) * (bits2 / 2);
  const int ka = bits2 / 2;
  return std::int64_t(t / 2) * bits2 + ((t & 1) ? bits2 : ka);
}

}  // namespace

half_bits exl3_decode_state(std::uint32_t state, Exl3Codebook cb) {
  const std::uint32_t s = state & 0xFFFFu;
  switch (cb) {
    case Exl3Codebook::inst3: return decode_halves(s * 89226354u + 64248484u);
    case Exl3Codebook::mcg: return decode_halves(s * 0xCBAC1FEDu);
    case Exl3Codebook::mul1: {
      const std::uint32_t x = s * 0x83DCD12Du;
      const int S = int(x & 0xFF) + int((x >> 8) & 0xFF) + int((x >> 16) & 0xFF) + int(x >> 24);
      // fp16(1024 + S) * fp16 0x1EEE (1774 / 2^18) + fp16 0xC931 (-1329 / 128), one rounding:
      // the exact value is (1774 S - 905216) / 2^18, an integer below 2^24 over a power of two.
      const float v = float(1774 * S - 905216) / 262144.0f;
      return float_to_half(v);
    }
  }
  return 0;
}

std::uint32_t exl3_tile_state(const std::uint16_t* tile, int bits2, int t) {
  // Stream bit b lives in 32-bit word b / 32 (the uint16 pair 2q, 2q+1 read little-endian), most
  // significant bit first; the stream is cyclic over the tile.
  const std::int64_t total = std::int64_t(128) * bits2;
  const std::int64_t end = value_end_bit(bits2, t);
  std::uint32_t state = 0;
  for (int i = 0; i < 16; ++i) {
    const std::int64_t b = ((end - 16 + i) % total + total) % total;
    const std::int64_t q = b / 32;
    const std::uint32_t word = std::uint32_t(tile[2 * q]) | (std::uint32_t(tile[2 * q + 1]) << 16);
    state = (state << 1) | ((word >> (31 - b % 32)) & 1u);
  }
  return state;
}

void exl3_reconstruct_ref(const Exl3Weight& w, half_bits* out) {
  const int tiles_k = w.k / 16, tiles_n = w.n / 16, tw = w.tile_words();
  for (int i = 0; i < tiles_k; ++i)
    for (int j = 0; j < tiles_n; ++j) {
      const std::uint16_t* tile = w.trellis + (std::int64_t(i) * tiles_n + j) * tw;
      for (int t = 0; t < 256; ++t) {
        const int r = 16 * i + exl3_pos_row(t), c = 16 * j + exl3_pos_col(t);
        out[std::int64_t(r) * w.n + c] = exl3_decode_state(exl3_tile_state(tile, w.bits2, t), w.codebook);
      }
    }
}

void exl3_had128_f32_ref(float* v) {
  // Stage A: a 4-point transform inside each group of four (one GPU lane's elements).
  for (int l = 0; l < 32; ++l) {
    float* p = v + 4 * l;
    const float s0 = p[0] + p[1], d0 = p[0] - p[1], s1 = p[2] + p[3], d1 = p[2] - p[3];
    p[0] = s0 + s1;
    p[1] = d0 + d1;
    p[2] = s0 - s1;
    p[3] = d0 - d1;
  }
  // Stage B: butterflies across the 32 groups, distances 1, 2, 4, 8, 16.
  float nv[128];
  for (int dist = 1; dist < 32; dist *= 2) {
    for (int l = 0; l < 32; ++l) {
      const int partner = l ^ dist;
      for (int e = 0; e < 4; ++e) {
        const float own = v[4 * l + e], other = v[4 * partner + e];
        nv[4 * l + e] = (l & dist) == 0 ? own + other : other - own;
      }
    }
    for (int i = 0; i < 128; ++i) v[i] = nv[i];
  }
  const float c = 0.088388347648f;  // 1/sqrt(128), fp32 0x3DB504F3
  for (int i = 0; i < 128; ++i) v[i] = v[i] * c;
}

void exl3_had128_fp16_ref(const half_bits* x, int rows, int cols, const half_bits* pre, half_bits* out) {
  float v[128];
  for (int r = 0; r < rows; ++r)
    for (int c0 = 0; c0 < cols; c0 += 128) {
      const half_bits* xr = x + std::int64_t(r) * cols + c0;
      for (int i = 0; i < 128; ++i) {
        float a = half_to_float(xr[i]);
        if (pre) a = round_to_half(a * half_to_float(pre[c0 + i]));  // fp16 multiply
        v[i] = a;
      }
      exl3_had128_f32_ref(v);
      for (int i = 0; i < 128; ++i) out[std::int64_t(r) * cols + c0 + i] = float_to_half(v[i]);
    }
}

void exl3_matmul_ref(const Exl3Weight& w, const float* x, int m, float* y) {
  std::vector<half_bits> what(std::size_t(w.k) * std::size_t(w.n));
  exl3_reconstruct_ref(w, what.data());
  std::vector<half_bits> xh(std::size_t(m) * w.k), x2(xh.size());
  for (std::size_t i = 0; i < xh.size(); ++i) xh[i] = float_to_half(x[i]);
  exl3_had128_fp16_ref(xh.data(), m, w.k, w.suh, x2.data());
  std::vector<double> acc(std::size_t(w.n));
  std::vector<float> z(std::size_t(w.n));
  for (int r = 0; r < m; ++r) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int i = 0; i < w.k; ++i) {
      const double xv = half_to_float(x2[std::size_t(r) * w.k + i]);
      if (xv == 0.0) continue;
      const half_bits* wr = what.data() + std::int64_t(i) * w.n;
      for (int j = 0; j < w.n; ++j) acc[j] += xv * double(half_to_float(wr[j]));
    }
    for (int j = 0; j < w.n; ++j) z[j] = float(acc[j]);
    for (int c0 = 0; c0 < w.n; c0 += 128) exl3_had128_f32_ref(z.data() + c0);
    for (int j = 0; j < w.n; ++j) y[std::int64_t(r) * w.n + j] = z[j] * half_to_float(w.svh[j]);
  }
}

}  // namespace exl
