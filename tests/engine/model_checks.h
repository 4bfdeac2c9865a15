// End-to-end checks of a backend against the fixtures' reference outputs. Written once, run
// for the CPU backend under ctest and for the CUDA backend by `exl selftest` on a GPU machine.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "exl/backend.h"

namespace exl::test {

struct LogitBlock;

// One prompt's logits (rows x vocab) against a reference runtime's: top-1 equal except near-ties
// (top-1/top-2 gap < 0.02), max |dlogit| <= 0.1, mean KL <= 1e-4 (EXL2 and EXL3 alike).
void check_logit_block(const std::string& model, const std::string& prompt, const LogitBlock& ref,
                       const std::vector<float>& ours);

// Greedy continuations of every fixture prompt against a reference's (refs[prompt] holds new_ids and
// top1_top2_logit_margin): equal, or differing only at or after a step whose recorded margin is
// under 0.02 (an FP16-level tie).
void check_greedy_continuations(const std::string& model, const nlohmann::json& refs, Backend& backend);

// FP16 HF model vs the HF fp32 logits: same top-1 (unless the reference's gap < 1e-3) and
// relative L2 per position <= rel_l2_max.
void check_hf_logits(const std::string& device, const std::string& model, CacheType cache, double rel_l2_max);

// EXL2 model vs ExLlamaV2's logits: top-1 (unless gap < 0.02), max |dlogit| <= 0.1, mean KL <= 1e-4.
void check_exl2_logits(const std::string& device, const std::string& model);

// Greedy 48-token continuations equal ExLlamaV2's, or differ only after a step whose recorded
// margin is under 0.02.
void check_exl2_greedy(const std::string& device, const std::string& model);

// Last-position logits of the 300-token long prompt in one forward (ref-s-4.0bpw).
void check_long_prompt(const std::string& device);

// Perplexity (wiki and tiny, 4 windows of 512) within 0.2 % of ExLlamaV2's chunk_forward_nocache.
void check_exl2_ppl(const std::string& device, const std::string& model);

// Perplexity of `ids` (windows of 512, 511 predictions each: 2044 for the usual 4) within 0.2 % of `want`.
void check_perplexity(const std::string& model, Backend& backend, const std::vector<std::int32_t>& ids,
                      const std::string& dataset, double want);

}  // namespace exl::test
