// The EXL3 reference models (tests/data/exl3: ref-s converted by ExLlamaV3 1.6.5, see its README)
// and the end-to-end checks of a backend against ExLlamaV3's outputs. The repository keeps each
// model without its embedding shard (the fp16 embedding equals the fixture ref-s's bit for bit,
// checked when the references were made); exl3_model_dir() assembles a full model folder once
// per process: the stored files, the embedding shard rebuilt from fixtures/models/hf/ref-s, and
// the fixtures' tokenizer files.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "exl/backend.h"

namespace exl::test {

// The stored reference data (tests/data/exl3).
std::filesystem::path exl3_data_dir();
// Names of the reference models (ref-s-2.0bpw ...), from refs/manifest.json.
std::vector<std::string> exl3_model_names();
// A complete model folder for `name` (skips the case when the fixtures are missing).
std::filesystem::path exl3_model_dir(const std::string& name);

// Logits of every prompt vs ExLlamaV3's: top-1 equal unless the reference gap < 0.02,
// max |dlogit| <= 0.1, mean KL <= 1e-4.
void check_exl3_logits(const std::string& device, const std::string& model, CacheType cache = CacheType::fp16);
// Greedy 48-token continuations equal ExLlamaV3's up to the first step whose margin is < 0.02.
void check_exl3_greedy(const std::string& device, const std::string& model);
// Perplexity (wiki and tiny, 4 windows of 512; on the CPU the first window of each, against the
// reference's chunk_mean_nll[0]) within 0.2 % of ExLlamaV3's.
void check_exl3_ppl(const std::string& device, const std::string& model);

}  // namespace exl::test
