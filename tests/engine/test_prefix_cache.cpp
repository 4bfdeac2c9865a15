// Prefix reuse and the paged cache on the CPU backend (prefix_checks.h; the CUDA backend runs the
// same checks in `exl selftest`).
#include "exl_test.h"
#include "prefix_checks.h"

using exl::CacheType;
using namespace exl::test;

namespace {
// Random cancelled generations: 1000, or the first 100 of the same sequence under AddressSanitizer
// (each run is about 14 times slower there, and the sanitizer build runs them on ref-xs).
constexpr int kCancelRuns = kSanitized ? 100 : 1000;
}  // namespace

EXL_TEST(prefix_cache, paged_logits_equal_contiguous) {
  check_paged_logits_equal_contiguous("cpu", {CacheType::fp32, CacheType::fp16, CacheType::fp8, CacheType::q8,
                                              CacheType::q6, CacheType::q4});
}
EXL_TEST(prefix_cache, conversation_fp16_prefills_only_new_tokens) { check_conversation("cpu", CacheType::fp16); }
EXL_TEST(prefix_cache, conversation_q8_prefills_only_new_tokens) { check_conversation("cpu", CacheType::q8); }
// Not asked of the Q4 cache: see check_conversation.
EXL_TEST(prefix_cache, conversation_q4_prefills_only_new_tokens) { check_conversation("cpu", CacheType::q4, false); }
EXL_TEST(prefix_cache, earlier_conversations_stay_cached) { check_earlier_conversations_stay_cached("cpu"); }
EXL_TEST(prefix_cache, cancelled_generations_leave_a_consistent_cache) { check_cancelled_generations("cpu", kCancelRuns); }
EXL_TEST(prefix_cache, prompt_longer_than_context_is_a_clear_error) { check_prompt_longer_than_context("cpu"); }
