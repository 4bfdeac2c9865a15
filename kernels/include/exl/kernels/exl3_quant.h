// The EXL3 quantizer's tile encoder (spec ../shared/spec/EXL3.md §5.7, §5.8): the Viterbi search
// over the tail-biting trellis that finds, for 256 target values of one 16x16 tile in sequence
// order (§3.4), the cyclically consistent path of 16-bit states whose codebook values are closest
// in squared error, with ExLlamaV3's fp16 cost arithmetic and tie rules; and the packing of the
// path's K-bit values into the tile's trellis words (the inverse of exl3_tile_state).
#pragma once
#include <cstdint>

#include "exl/kernels/exl3.h"

namespace exl {

// ---- reference (kernels/reference): obviously correct, exact fp16 arithmetic ----

// seq: 256 targets in sequence order; K: 1..8 bits per weight; states: 256 16-bit states (a
// tail-biting path: state[0] >> K == state[255] & (2^(16-K) - 1), and state[t] >> K ==
// state[t-1] & (2^(16-K) - 1)); values (may be null): the decoded fp16 codebook values as fp32.
// Targets are rounded to fp16 first (beyond +-65504 they become +-inf); NaN targets are outside
// the contract. The path is tail-biting by construction while the fp16 costs stay finite; once
// they overflow to +inf (targets of magnitude ~100 and more), the spec's tie rules decide (the
// tests found those paths tail-biting too).
// 0.3 to 0.5 s per tile (every fp16 operation computed exactly, in the spec's order): for tests.
void exl3_encode_tile_ref(const float* seq, int K, Exl3Codebook cb, std::uint16_t* states, float* values);

// Packs the low K bits of each of a tile's 256 states MSB-first into 16*K uint16 words in the
// storage order of §3.2 (pairs of 16-bit words swapped), so that exl3_tile_state() reads the
// states back.
void exl3_pack_tile(const std::uint16_t* states, int K, std::uint16_t* words);

// ---- fast CPU (kernels/cpu) ----

// `tiles` tiles at once (seq [tiles][256] -> states [tiles][256], values [tiles][256] or null),
// threaded over the tiles (parallel_for; with fewer tiles than threads, each search step is
// split over the threads instead), vectorized (AVX2/F16C) where present. The same states and
// values as exl3_encode_tile_ref, bit for bit. Scratch per thread: (256 + 8) * 2^(16-K) bytes
// (8.3 MiB at K = 1, 66 KiB at K = 8). About 12 ms per tile and core with AVX2, any K.
void exl3_encode_tiles_cpu(const float* seq, int tiles, int K, Exl3Codebook cb, std::uint16_t* states,
                           float* values);

}  // namespace exl
