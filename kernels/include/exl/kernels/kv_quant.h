// Quantized KV cache storage (spec §6.2, §6.3): ExLlamaV2's FP8 (E5M2 by truncation of fp16)
// and Q4/Q8 blocks (512 fp16 elements, 32-lane Walsh-Hadamard rotation of the even and odd
// elements of each 64-element warp, one fp16 scale per 32 rotated elements, fp16 arithmetic
// throughout, bit-exact with ExLlamaV2's kernels). A layer's K (or V) cache is a flat
// token-major array of capacity x row_elements values (row_elements = n_kv_heads * head_dim).
#pragma once
#include <cstdint>
#include <vector>

#include "exl/kernels/attention.h"
#include "exl/kernels/half.h"

namespace exl {

enum class KvFormat : std::uint8_t { f32, f16, fp8, q8, q4 };
const char* kv_format_name(KvFormat f);
double kv_format_bits(KvFormat f);  // storage bits per element, scales included (q8: 8.5, q4: 4.5)

// One 512-element block: x fp16 [512] -> q [512 * bits / 8] bytes + scales fp16 [16].
void kv_quant_block_ref(const half_bits* x, int bits, std::uint8_t* q, half_bits* scales);
// The inverse: fp16 [512].
void kv_dequant_block_ref(const std::uint8_t* q, const half_bits* scales, int bits, half_bits* x);

// FP8 E5M2 = the upper byte of an fp16 value, as ExLlamaV2 stores it. ExLlamaV2 truncates the
// lower byte (a biased error of up to 25 %); we round to nearest even (at most 12.5 %, unbiased),
// which keeps the same storage and decoding and lowers token-by-token perplexity. Values that
// would round past the largest finite E5M2 number saturate to it.
inline std::uint8_t fp8_from_half(half_bits h) {
  std::uint16_t hi = std::uint16_t(h >> 8);
  const std::uint16_t lo = std::uint16_t(h & 0xff);
  if ((h & 0x7c00) == 0x7c00) return std::uint8_t(hi | (lo ? 1 : 0));  // inf stays inf, NaN stays NaN
  if (lo > 0x80 || (lo == 0x80 && (hi & 1))) ++hi;
  if ((hi & 0x7c) == 0x7c) hi = std::uint16_t((hi & 0x80) | 0x7b);
  return std::uint8_t(hi);
}
inline std::uint8_t fp8_from_half_truncate(half_bits h) { return std::uint8_t(h >> 8); }
inline half_bits half_from_fp8(std::uint8_t b) { return half_bits(std::uint16_t(b) << 8); }

// Smallest token count q with q * row_elements a multiple of 512 (ExLlamaV2's q_block).
int kv_q_block(int row_elements);

// Owning storage of one layer's K or V cache in one format.
class KvStore {
 public:
  KvStore() = default;
  // capacity is rounded up to a multiple of kv_q_block(row_elements) for the q formats.
  KvStore(KvFormat format, int capacity, int row_elements);

  KvFormat format() const { return format_; }
  int capacity() const { return capacity_; }
  int row_elements() const { return row_; }
  std::uint64_t bytes() const { return data_.size() + scales_.size() * 2; }
  // The raw element array (f32/f16: the layout attention_cpu reads directly; fp8/q8/q4: the
  // stored bytes, data_bytes() of them) and the Q8/Q4 scales (scale_count() fp16 values).
  const void* raw() const { return data_.data(); }
  std::size_t data_bytes() const { return data_.size(); }
  const half_bits* scale_data() const { return scales_.data(); }
  std::size_t scale_count() const { return scales_.size(); }

  // Stores tokens [past, past + tokens) from fp32 rows [tokens, row_elements]. Values are rounded
  // to fp16 first (as in an fp16 cache). For q formats the touched token range is rounded outwards
  // to q_block tokens and those whole blocks are re-quantized from their current contents, exactly
  // as ExLlamaV2 does.
  void write(const float* x, int tokens, int past);
  // Reads tokens [t0, t1) into fp32 rows [t1 - t0, row_elements].
  void read(int t0, int t1, float* out) const;
  // Copies the stored bytes (and scales) of rows [src, src + rows) to [dst, dst + rows), exactly
  // (a paged cache's copy on write). For q formats src, dst and rows are multiples of q_block.
  void copy_rows(int dst, int src, int rows);

 private:
  KvFormat format_ = KvFormat::f16;
  int capacity_ = 0;
  int row_ = 0;
  std::vector<std::uint8_t> data_;
  std::vector<half_bits> scales_;
};

// Sequence positions [t0, t1) through p's page table (kv_row) into fp32 rows, and the inverse
// for `tokens` rows starting at position `past`. A page must span whole q_block runs (page_tokens
// a multiple of kv_q_block) so that a write never re-quantizes a block of another page.
void kv_read_positions(const KvStore& s, const AttentionParams& p, int t0, int t1, float* out);
void kv_write_positions(KvStore& s, const AttentionParams& p, const float* x, int tokens, int past);

// Causal GQA attention where keys/values of positions < p.past come from the stores and the
// current chunk's keys/values (positions past .. past + tokens - 1) from fp32 arrays
// [tokens, n_kv_heads, head_dim], rounded to fp16 (ExLlamaV2 attends to the chunk's own K/V
// before they are quantized); cached positions are read through p's page table. q/out as in
// attention_ref. The reference dequantizes the whole
// prefix; the CPU kernel streams it through a small staging tile with an online softmax.
void attention_kvstore_ref(const AttentionParams& p, const float* q, const KvStore& k, const KvStore& v,
                           const float* k_new, const float* v_new, float* out);
void attention_kvstore_cpu(const AttentionParams& p, const float* q, const KvStore& k, const KvStore& v,
                           const float* k_new, const float* v_new, float* out);

}  // namespace exl
