// Fast CPU EXL3 tile encoder (spec ../shared/spec/EXL3.md §5.7): the same Viterbi search as
// exl3_encode_tile_ref (kernels/reference/exl3_quant_ref.cpp), giving the same states and values
// bit for bit. Threads take whole tiles (parallel_for; each chunk reuses one search state: two
// cost arrays of E = 65536 >> K floats and a back-pointer table [256][E] of bytes holding the
// best hi of each out-edge, from which the state (hi << (16-K)) | e and the in-edge state >> K
// follow); with fewer tiles than threads, all tiles advance step by step and each step is split
// over blocks of out-edges. The step is vectorized in exl3_quant_cpu_avx2.cpp where the CPU has
// AVX2/FMA/F16C; the portable form below does the same arithmetic one state at a time.
//
// Speed on the development machine (a 2-core AMD EPYC Zen 3 VM, AVX2, RelWithDebInfo, idle),
// tiles per second on unit Gaussian mul1 tiles (the codebook does not matter; the search costs
// 2 x 256 x 65536 state evaluations per tile whatever K is, so K changes little):
//                                     K = 1     K = 2     K = 4     K = 8
//   AVX2, 2 threads (8 tiles a call)    163       151       148       174
//   AVX2, 1 thread                       81        82        84        87
//   portable, 2 threads                 4.6       5.5       5.2       8.5
//   reference (1 thread)                1.9       2.5       2.9       3.1
// (About 23 us per step and core, i.e. 2.8 ns per 8 states. A layer of 4096 x 4096 weights,
// 65536 tiles, takes about 7 minutes on these 2 cores.)
//
// ---- Why this fp32 arithmetic gives ExLlamaV3's fp16 results exactly ----
// ExLlamaV3 computes, per state, dh = RN16(dec - w) (fp16 subtract) and c = RN16(dh*dh + prev)
// (fp16 fused multiply-add, one rounding); dec, w, prev are fp16 numbers, |dec| < 4, prev >= 0
// or +inf.
//
// (a) dh: RN16(RN32(dec - w)) = RN16(dec - w), so the fp32 difference is rounded once more,
//     to 11 significant bits, ties to even (on the bit pattern; no fp16 overflow or subnormal
//     case arises there, see rn16_normal). Proof: if the fp32 difference x is exact there is
//     nothing to show, and if both operands are below 2^-14 it is (multiples of 2^-24). Else let
//     a be the operand of larger magnitude, 2^ea <= |a| < 2^(ea+1), b the other. An inexact x
//     needs a set bit of b below ulp32(x); b has at most 11 significant bits, so |b| is below
//     2^(10 + log2 ulp32(x)): |b| < 2^(ea-13) if |x| < 2^(ea+1) (ulp32 <= 2^(ea-23)), and |x| >=
//     2^(ea+1) cannot happen (it would need |b| >= 2^(ea-10), the distance from the largest fp16
//     of a's binade to 2^(ea+1)). The fp16 midpoints next to a are at least 2^(ea-12) away from
//     it (half the smaller fp16 spacing around a), and x and RN32(x) are both within 2^(ea-13) +
//     2^(ea-24) of a: both round to a. (The classical statement: 24 >= 2 * 11 + 2, so rounding a
//     sum of two fp16 numbers first to fp32 is innocuous.)
// (b) c: dh*dh is exact in fp32 (22 significant bits), but x = dh*dh + prev can be inexact in
//     fp32, and RN32 can then land exactly on an fp16 midpoint that x is not on (for example dh
//     = 1.46875, dh^2 = 2.1572265625, a midpoint, and prev = 2^-24); RN16 then breaks a false tie.
//     Fix: round to odd. r = RN32(x); Fast2Sum (big = max, small = min: z = r - big is exact and
//     err = small - z = x - r exactly). If err != 0, x lies strictly between r and its fp32
//     neighbour r' towards err; take whichever of the two has an odd significand (r if odd,
//     else r' = bits(r) +- 1, which also crosses binades correctly for positive floats). An odd
//     fp32 value is neither an fp16 number nor an fp16 midpoint (those have at least 12 trailing
//     zero bits in fp32), and no fp16 number or midpoint lies strictly between r and r' (they are
//     fp32 numbers), so RN16(odd one) = RN16(x). In integer form: q = bits(r) - (err < 0), then
//     q |= (err != 0), i.e. q = bits(r) - (small < z), then q |= (small != z). With prev = +inf,
//     z is NaN, both comparisons are false and c = inf, as in fp16. Overflow past 65504 is the
//     IEEE conversion's (F16C, or float_to_half). (The fix matters only where r is exactly an
//     fp16 midpoint; 118798 of the 10^9 fp16 pairs (dh, prev) need it, none with a sum below
//     2^-14.) No product here is followed by an addition that FMA contraction could change:
//     dh*dh is exact, so fma(dh, dh, prev) = RN32(x) anyway.
// Both operations were checked exhaustively against exact rounding, through the test hook
// below, for the AVX2 and the portable forms: c for all 31744 finite fp16 dh >= 0 times all
// 31745 prev (0 .. 65504, +inf), dh for all 34816 fp16 dec with |dec| < 4 times all 63490 non-NaN
// fp16 w: no difference (about 25 s and 50 s on this machine; tests/kernels/test_exl3_quant.cpp
// `fp16_arithmetic` repeats it on a sample that contains 990 double-rounding cases).
// (c) Ties: per out-edge the minimum over hi = 0, 1, ... replaces only on a strictly smaller
//     cost, as the spec; fp16 costs >= 0 (and +inf) compare like their 16-bit patterns.
// The first step of each pass: c = RN16(dh*dh) (exact square, one rounding), and +inf where the
// in-edge differs from pre_state (pass 2), as the spec writes it. NaN targets are outside the
// contract.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "exl/kernels/cpu_features.h"
#include "exl/kernels/exl3.h"
#include "exl/kernels/exl3_quant.h"
#include "exl/kernels/threads.h"
#include "exl3_cpu_detail.h"
#include "simd.h"

namespace exl {

namespace detail {

int exl3_argmin_1024(const float* c, int E);  // kernels/reference/exl3_quant_ref.cpp
void exl3_viterbi_step_avx2(int K, const float* tab, float w, const float* prev, int e_begin, int e_end, float* cost,
                            std::uint8_t* back);
void exl3_viterbi_first_step_avx2(int K, const float* tab, float w, int pre_state, int e_begin, int e_end,
                                  float* cost, std::uint8_t* back);
void exl3_quant_fp16_ops_avx2(int n, const float* dec, const float* w, float* dh, const float* dh_in,
                              const float* prev, float* c);

}  // namespace detail

namespace {

// A 64-byte aligned float buffer.
struct AlignedFloats {
  std::vector<float> raw;
  float* p = nullptr;
  explicit AlignedFloats(std::size_t n) : raw(n + 16) {
    const auto a = reinterpret_cast<std::uintptr_t>(raw.data());
    p = raw.data() + ((64 - a % 64) % 64) / sizeof(float);
  }
  AlignedFloats(const AlignedFloats&) = delete;
  AlignedFloats& operator=(const AlignedFloats&) = delete;
};

float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// ---- portable step (the arithmetic of the AVX2 form, one state at a time) ----

// (a): dh = RN16(dec - w) from the fp32 difference, rounded to 11 significant bits on its bit
// pattern (ties to even; exact here for the same reasons as the AVX2 form's rn16_normal: below
// 2^-14 the difference is exact with at most 10 significant bits, and it never overflows).
inline float dh_scalar(float dec, float w) {
  const std::uint32_t b = float_bits(dec - w);
  return bits_float((b + 0xFFFu + ((b >> 13) & 1u)) & 0xFFFFE000u);
}

// RN16 of x >= 0 (or +inf): the same significand rounding on the bit pattern inside the fp16
// normal range [2^-14, 65520), the general conversion outside it.
inline float rn16_scalar(float x) {
  const std::uint32_t b = float_bits(x);
  if (b >= 0x38800000u && b < 0x477FF000u) return bits_float((b + 0xFFFu + ((b >> 13) & 1u)) & 0xFFFFE000u);
  return round_to_half(x);
}

inline float fma16_scalar(float dh, float pv) {  // (b): round to odd, then RN16
  const float sq = dh * dh;
  const float r = sq + pv;
  const float big = sq > pv ? sq : pv, small = sq > pv ? pv : sq;
  const float z = r - big;  // exact; err = small - z
  std::uint32_t q = float_bits(r);
  if (small < z) q -= 1u;
  if (small < z || small > z) q |= 1u;
  return rn16_scalar(bits_float(q));
}

void step_scalar(int K, const float* tab, float w, const float* prev, int e_begin, int e_end, float* cost,
                 std::uint8_t* back) {
  const int E = 65536 >> K, H = 1 << K;
  for (int e = e_begin; e < e_end; ++e) {
    float best = fma16_scalar(dh_scalar(tab[e], w), prev[e >> K]);
    int bh = 0;
    for (int hi = 1; hi < H; ++hi) {
      const int s = hi * E + e;
      const float c = fma16_scalar(dh_scalar(tab[s], w), prev[s >> K]);
      const bool lt = c < best;  // selects rather than branches: the outcome is data-dependent
      best = lt ? c : best;
      bh = lt ? hi : bh;
    }
    cost[e] = best;
    back[e] = std::uint8_t(bh);
  }
}

void first_step_scalar(int K, const float* tab, float w, int pre_state, int e_begin, int e_end, float* cost,
                       std::uint8_t* back) {
  const int E = 65536 >> K, H = 1 << K;
  for (int e = e_begin; e < e_end; ++e) {
    float best = 0.0f;
    int bh = 0;
    for (int hi = 0; hi < H; ++hi) {
      const int s = hi * E + e;
      const float dh = dh_scalar(tab[s], w);
      float c = round_to_half(dh * dh);
      if (pre_state >= 0 && (s >> K) != pre_state) c = std::numeric_limits<float>::infinity();
      if (hi == 0 || c < best) {
        best = c;
        bh = hi;
      }
    }
    cost[e] = best;
    back[e] = std::uint8_t(bh);
  }
}

// ---- the encoder ----

// One tile's search state: targets, double-buffered costs, back pointers [256][E] (best hi per
// position and out-edge), and the out-edge that pass 1 chose for position 255.
struct TileSearch {
  int K, E;
  const float* tab;
  bool simd;
  float w[256];
  AlignedFloats cost_a, cost_b;
  std::vector<std::uint8_t> back;
  int end_state = -1;

  TileSearch(int K_, const float* tab_, bool simd_)
      : K(K_), E(65536 >> K_), tab(tab_), simd(simd_), cost_a(std::size_t(E)), cost_b(std::size_t(E)),
        back(std::size_t(256) * E) {}

  void set_targets(const float* seq) {
    for (int t = 0; t < 256; ++t) w[t] = round_to_half(seq[t]);
    end_state = -1;
  }

  // Step i of a pass (pass 1: roll 128, pre_state -1; pass 2: roll 0, pre_state end_state) over the
  // out-edges [e0, e1). Step i writes the cost buffer i & 1: after pass 1, cost_a holds the costs
  // of step 254 (C254).
  void step(int pass, int i, int e0, int e1) {
    const int t = pass == 1 ? (i + 128) % 256 : i;
    float* cur = (i & 1) ? cost_b.p : cost_a.p;
    std::uint8_t* bk = back.data() + std::size_t(t) * E;
    if (i == 0) {
      const int pre = pass == 1 ? -1 : end_state;
      if (simd) detail::exl3_viterbi_first_step_avx2(K, tab, w[t], pre, e0, e1, cur, bk);
      else first_step_scalar(K, tab, w[t], pre, e0, e1, cur, bk);
    } else {
      const float* prev = (i & 1) ? cost_a.p : cost_b.p;
      if (simd) detail::exl3_viterbi_step_avx2(K, tab, w[t], prev, e0, e1, cur, bk);
      else step_scalar(K, tab, w[t], prev, e0, e1, cur, bk);
    }
  }

  // After pass 1: [quirk] the argmin over the second-to-last step's costs, treated as an out-edge
  // of position 127, walked back to position 0: the in-edge there is the out-edge of position 255.
  void choose_end_state() {
    int e = detail::exl3_argmin_1024(cost_a.p, E);
    for (int i = 255; i >= 0; --i) {
      const int t = (i + 128) % 256;
      const int hi = back[std::size_t(t) * E + std::size_t(e)];
      e = ((hi << (16 - K)) | e) >> K;
      if (t == 0) break;
    }
    end_state = e;
  }

  // After pass 2: walk back from out-edge end_state at position 255.
  void trace(std::uint16_t* states, float* values) const {
    int e = end_state;
    for (int t = 255; t >= 0; --t) {
      const int hi = back[std::size_t(t) * E + std::size_t(e)];
      const int s = (hi << (16 - K)) | e;
      states[t] = std::uint16_t(s);
      if (values) values[t] = tab[s];
      e = s >> K;
    }
  }

  void encode(const float* seq, std::uint16_t* states, float* values) {
    set_targets(seq);
    for (int i = 0; i < 256; ++i) step(1, i, 0, E);
    choose_end_state();
    for (int i = 0; i < 256; ++i) step(2, i, 0, E);
    trace(states, values);
  }
};

}  // namespace

namespace detail {

// Test hook (tests/kernels/test_exl3_quant.cpp checks it against exact rounding): the encoder's
// two fp16 operations on n lanes (n a multiple of 8), through the code the steps use (the AVX2
// form when cpu_simd_active(), else the portable one): dh[i] = RN16(dec[i] - w[i]) (dec[i] with
// |dec| < 4 and w[i] fp16 values), c[i] = RN16(dh_in[i]^2 + prev[i]) (dh_in[i] an fp16 value,
// prev[i] >= 0 an fp16 value or +inf).
void exl3_quant_fp16_ops(int n, const float* dec, const float* w, float* dh, const float* dh_in, const float* prev,
                         float* c) {
  if (cpu_simd_active()) {
    exl3_quant_fp16_ops_avx2(n, dec, w, dh, dh_in, prev, c);
    return;
  }
  for (int i = 0; i < n; ++i) {
    dh[i] = dh_scalar(dec[i], w[i]);
    c[i] = fma16_scalar(dh_in[i], prev[i]);
  }
}

}  // namespace detail

void exl3_encode_tiles_cpu(const float* seq, int tiles, int K, Exl3Codebook cb, std::uint16_t* states,
                           float* values) {
  if (tiles <= 0) return;
  const int E = 65536 >> K;
  AlignedFloats tab(65536);
  std::memcpy(tab.p, detail::exl3_state_table(cb), 65536 * sizeof(float));
  const bool simd = cpu_simd_active();
  const int threads = cpu_threads();

  if (tiles >= threads) {
    // Threads over tiles; a chunk's search state is reused for its tiles and, through the free
    // list, by later chunks (a K = 1 back-pointer table is 8 MiB).
    std::mutex mu;
    std::vector<std::unique_ptr<TileSearch>> free_list;
    parallel_for(tiles, 1, [&](std::int64_t b, std::int64_t end) {
      std::unique_ptr<TileSearch> ts;
      {
        std::lock_guard<std::mutex> lk(mu);
        if (!free_list.empty()) {
          ts = std::move(free_list.back());
          free_list.pop_back();
        }
      }
      if (!ts) ts = std::make_unique<TileSearch>(K, tab.p, simd);
      for (std::int64_t i = b; i < end; ++i)
        ts->encode(seq + i * 256, states + i * 256, values ? values + i * 256 : nullptr);
      std::lock_guard<std::mutex> lk(mu);
      free_list.push_back(std::move(ts));
    });
    return;
  }

  // Fewer tiles than threads: all tiles advance step by step together, each step split over
  // (tile, block of out-edges) items (blocks of a power-of-two size >= 256 out-edges).
  std::vector<std::unique_ptr<TileSearch>> ts;
  for (int i = 0; i < tiles; ++i) {
    ts.push_back(std::make_unique<TileSearch>(K, tab.p, simd));
    ts.back()->set_targets(seq + std::int64_t(i) * 256);
  }
  int parts = 1;
  while (parts * tiles < threads && E / (parts * 2) >= 256) parts *= 2;
  const int span = E / parts;
  for (int pass = 1; pass <= 2; ++pass) {
    for (int i = 0; i < 256; ++i)
      parallel_for(std::int64_t(tiles) * parts, 1, [&](std::int64_t b, std::int64_t end) {
        for (std::int64_t j = b; j < end; ++j) {
          const int part = int(j % parts);
          ts[std::size_t(j / parts)]->step(pass, i, part * span, (part + 1) * span);
        }
      });
    if (pass == 1)
      for (auto& t : ts) t->choose_end_state();
  }
  for (int i = 0; i < tiles; ++i)
    ts[std::size_t(i)]->trace(states + std::int64_t(i) * 256, values ? values + std::int64_t(i) * 256 : nullptr);
}

}  // namespace exl
