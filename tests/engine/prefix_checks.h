// The paged KV cache and prefix reuse, end to end on one backend with the fixture model
// (ref-s-4.0bpw). Written once, run for the CPU backend under ctest (test_prefix_cache.cpp) and for
// the CUDA backend by `exl selftest` on a GPU machine (test_cuda_model.cpp).
#pragma once
#include <string>
#include <vector>

#include "exl/backend.h"

namespace exl::test {

// A paged cache (another sequence first, so this one lands on other pages than 0, 1, ...) gives
// the same logits, bit for bit, as the contiguous one: chunks across a page boundary, decode
// steps and verify-sized chunks with rollbacks.
void check_paged_logits_equal_contiguous(const std::string& device, const std::vector<CacheType>& types);
// A 3-turn conversation through the generator prefills only each turn's new tokens (the reported
// counts) and, with `same_output`, its greedy output equals running each turn from scratch.
void check_conversation(const std::string& device, CacheType type, bool same_output = true);
// Switching between two conversations reuses each one's pages.
void check_earlier_conversations_stay_cached(const std::string& device);
// `runs` generations cancelled at random points of prefill and decode (a small pool, so pages are
// evicted) leave a cache whose later generations equal fresh ones.
void check_cancelled_generations(const std::string& device, int runs);
// A prompt longer than the context is a clear error and the backend stays usable.
void check_prompt_longer_than_context(const std::string& device);

}  // namespace exl::test
