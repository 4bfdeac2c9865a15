// Device side of the paged KV cache (kernels.h, "paged KV cache"): the store row of a position.
#pragma once
#include "kernels.h"

namespace exl::cuda {

// Row of cache position `pos` in a layer's store: through the page table, or `pos` itself for a
// contiguous store (pages null). Read after pdl_wait(): the table is written by the host's copy.
__device__ __forceinline__ int kv_row(const int* pages, int pos) {
  if (!pages) return pos;
  return (__ldg(pages + (pos >> k_kv_page_shift)) << k_kv_page_shift) | (pos & (k_kv_page_tokens - 1));
}

}  // namespace exl::cuda
