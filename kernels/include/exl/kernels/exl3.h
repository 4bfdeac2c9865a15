// EXL3 quantized linear layers: views of the on-disk tensors and the ops over them
// (docs/EXL3.md; spec ../shared/spec/EXL3.md §2–§4).
// Layout: the trellis matrix W-hat is input-major [k, n] (k, n multiples of 128), cut into 16x16
// tiles; trellis[i][j] holds tile (rows 16i.., columns 16j..) as 16*K uint16 words (16*K + 8 for
// the half-integer rates 1.5 / 2.5 / 3.5), a cyclic bitstream of one K-bit value per weight in
// the tensor-core sequence order. Each weight is a procedural codebook value of its 16-bit state.
// The linear is y = had128((had128(x * suh)) . W-hat) * svh, had128 = the 128-point Sylvester
// Hadamard transform scaled by 1/sqrt(128), applied blockwise along the features.
#pragma once
#include <cstdint>

#include "exl/kernels/exl3_splits.h"
#include "exl/kernels/half.h"

namespace exl {

enum class Exl3Codebook : std::uint8_t { inst3, mcg, mul1 };

const char* exl3_codebook_name(Exl3Codebook cb);

// Non-owning view of one EXL3 layer. All pointers stay valid while the owner lives.
struct Exl3Weight {
  const std::uint16_t* trellis = nullptr;  // [k/16][n/16][tile_words]
  const half_bits* suh = nullptr;          // [k] input signs x scales
  const half_bits* svh = nullptr;          // [n] output signs x scales
  int k = 0;                               // in_features, padded to a multiple of 128
  int n = 0;                               // out_features, padded to a multiple of 128
  int bits2 = 0;                           // twice the bit rate: 2..16, odd = half-integer rate (3, 5, 7)
  Exl3Codebook codebook = Exl3Codebook::mul1;

  int tile_words() const { return 8 * bits2; }  // uint16 words per 16x16 tile
};

// True for the bit rates the format defines: K = 1..8, and 1.5 / 2.5 / 3.5 with the mul1 codebook.
bool exl3_valid_bits2(int bits2, Exl3Codebook cb);

// ---- reference (kernels/reference): obviously-correct, bit-exact to ExLlamaV3's kernels ----

// The fp16 codebook value of a 16-bit state (spec §3.5).
half_bits exl3_decode_state(std::uint32_t state, Exl3Codebook cb);

// Sequence position t (0..255) of a tile -> row r and column c inside it (spec §3.4).
inline int exl3_pos_row(int t) { const int l = t / 8, e = t % 8; return 2 * (l % 4) + (e % 2) + 8 * ((e % 4) / 2); }
inline int exl3_pos_col(int t) { const int l = t / 8, e = t % 8; return l / 4 + 8 * (e / 4); }

// The 16-bit state of sequence position t of one tile (tile = tile_words uint16 words).
std::uint32_t exl3_tile_state(const std::uint16_t* tile, int bits2, int t);

// W-hat as fp16, input-major [k, n] row-major: bit-exact with ExLlamaV3's reconstruct kernel.
void exl3_reconstruct_ref(const Exl3Weight& w, half_bits* out);

// ExLlamaV3's 128-point transform of fp16 rows (had_r_128 with an optional fp16 pre-scale):
// x [rows, cols] fp16, cols a multiple of 128, pre [cols] fp16 or null. Bit-exact (spec §4.2).
void exl3_had128_fp16_ref(const half_bits* x, int rows, int cols, const half_bits* pre, half_bits* out);
// The fp32 form of the butterfly on one 128-chunk, scaled by 1/sqrt(128) (no rounding to fp16).
void exl3_had128_f32_ref(float* v);

// y[m, n] = EXL3 linear of x[m, k] (fp32 in, fp32 out), the steps of spec §4.3: x rounded to fp16
// (ExLlamaV3's activations are fp16), * suh in fp16, input transform (fp16), dot products with
// W-hat accumulated in double, output transform in fp32, * svh in fp32. n = w.n (padded).
void exl3_matmul_ref(const Exl3Weight& w, const float* x, int m, float* y);

// ---- fast CPU (kernels/cpu) ----

// Same contract as exl3_matmul_ref; tiles decoded on the fly through a state -> fp32 table,
// fp32 accumulation, threaded over output columns (AVX2/FMA, AVX-512 where present).
void exl3_matmul_cpu(const Exl3Weight& w, const float* x, int m, float* y);

// W-hat as fp16 [k, n] like exl3_reconstruct_ref, from the fast threaded decoder (same bits).
void exl3_reconstruct_cpu(const Exl3Weight& w, half_bits* out);

}  // namespace exl
