// Causal self-attention with grouped-query heads over a KV cache (spec §4.5).
// q: [t, n_heads, d] fp32 for the new tokens at positions past .. past+t-1.
// Cache: k/v [seq_capacity, n_kv_heads, d] in fp32 or fp16 (per cache_dtype); positions
// 0 .. past+t-1 are valid (the new tokens' keys/values already appended).
// Paged cache (spec §6.1 paged mode): with a page table, the cache is a pool of pages of
// page_tokens rows each, and position j of the sequence lives in row
// page_table[j / page_tokens] * page_tokens + j % page_tokens of the pool (kv_row()).
// out: [t, n_heads, d] fp32. Masking is causal bottom-right: query i sees keys <= past + i.
#pragma once
#include <cstdint>

#include "exl/kernels/linear.h"

namespace exl {

struct AttentionParams {
  int tokens = 0;      // new query tokens t
  int past = 0;        // tokens already in the cache before this chunk
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  float scale = 0.0f;  // usually 1/sqrt(head_dim)
  DType cache_dtype = DType::f32;  // f32 or f16
  int window = 0;      // sliding window in tokens, 0 = full attention
  float softcap = 0.0f;  // attention-logit soft-capping (Gemma 2): s = cap * tanh(s / cap); 0 = none
  const std::int32_t* page_table = nullptr;  // null: contiguous cache (row j = position j)
  int page_tokens = 0;                       // rows per page when page_table is set
};

// The cache row holding sequence position j.
inline std::int64_t kv_row(const AttentionParams& p, int j) {
  if (!p.page_table) return j;
  return std::int64_t(p.page_table[j / p.page_tokens]) * p.page_tokens + j % p.page_tokens;
}

void attention_ref(const AttentionParams& p, const float* q, const void* k_cache, const void* v_cache,
                   float* out);
void attention_cpu(const AttentionParams& p, const float* q, const void* k_cache, const void* v_cache,
                   float* out);

// Writes t rows of k/v ([t, n_kv_heads, d] fp32) into the cache at rows past .. past+t-1,
// converting to the cache dtype (f16: round to nearest even).
void kv_cache_write_cpu(const float* k, const float* v, int tokens, int past, int n_kv_heads, int head_dim,
                        DType cache_dtype, void* k_cache, void* v_cache);

}  // namespace exl
