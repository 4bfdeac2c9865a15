// Speculative decoding with the fixture pair (target ref-s-4.0bpw, draft ref-xs-4.0bpw): greedy
// speculative output equals plain greedy for K = 1..8 on the CPU and (in exl selftest --device cuda)
// on the CUDA backend; on the CPU the first 48 ids equal ExLlamaV2's (refs/speculative_exl2.json)
// and acceptance is compared with ExLlamaV2's; n-gram likewise.
#include <cstdio>
#include <map>

#include "exl/generator.h"
#include "exl/model.h"
#include "exl_test.h"
#include "refs.h"

namespace {

struct Loaded {
  std::shared_ptr<const exl::Model> model;
  std::unique_ptr<exl::Backend> backend;
};

Loaded load(const std::string& name, const std::string& device = "cpu", const exl::BackendOptions& options = {},
            int ctx = 1024) {
  Loaded l;
  l.model = exl::Model::open(exl::test::fixture("models/exl2/" + name));
  l.backend = exl::make_backend(device, options);
  l.backend->load(l.model);
  l.backend->allocate_cache({ctx, exl::CacheType::fp16});
  return l;
}

exl::GenerateOptions greedy(int n) {
  exl::GenerateOptions o;
  o.max_new_tokens = n;
  o.ignore_eos = true;  // the references run without stop conditions
  o.sampler.greedy = true;
  return o;
}

// Plain greedy (48 new ids) of a fixture prompt on the CPU target as load() makes it (ref-s-4.0bpw,
// fp16 cache of 1024, default options): generated once per process, on the first such backend a
// case passes, and shared by the cases that compare speculative output against it.
const std::vector<std::int32_t>& cpu_plain_greedy(exl::Backend& target, const exl::test::Prompt& p) {
  static std::map<std::string, std::vector<std::int32_t>> done;
  auto it = done.find(p.name);
  if (it == done.end()) it = done.emplace(p.name, exl::generate(target, nullptr, p.ids, greedy(48)).ids).first;
  return it->second;
}

// `device` "cpu": also against ExLlamaV2's ids and acceptance (same arithmetic class as its
// reference); "cuda": speculative equals plain greedy on the GPU, acceptance reported. `split`: the
// target's layers in device segments, the draft where exl::draft_device puts it.
void check_draft_greedy(const std::string& device, const std::vector<exl::LayerSegment>& split = {}) {
  const bool vs_reference = device == "cpu";
  const auto refs = exl::test::read_json("refs/speculative_exl2.json")["results"];
  const auto prompts = exl::test::read_prompts();
  exl::BackendOptions to;
  to.split = split;
  Loaded target = load("ref-s-4.0bpw", device, to);
  Loaded draft = load("ref-xs-4.0bpw", split.empty() ? device : exl::draft_device(*target.backend));
  exl::check_draft_vocabulary(*target.model->tokenizer(), *draft.model->tokenizer());
  std::vector<std::vector<std::int32_t>> plain;
  for (const auto& p : prompts) {
    plain.push_back(vs_reference && split.empty() ? cpu_plain_greedy(*target.backend, p)
                                                  : exl::generate(*target.backend, nullptr, p.ids, greedy(48)).ids);
    const auto want = refs["plain_greedy_dynamic_generator"][p.name]["new_ids"].get<std::vector<std::int32_t>>();
    if (vs_reference) CHECK_MSG(plain.back() == want, "plain greedy differs from ExLlamaV2 for " + p.name);
  }
  // K = 1..8; the sanitizer build takes 3 (compared with ExLlamaV2): the same code, an eighth of the time.
  for (int k = 1; k <= 8; ++k) {
    if (exl::test::kSanitized && k != 3) continue;
    int accepted = 0, drafted = 0, passes = 0, tokens = 0;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      auto o = greedy(48);
      o.draft = draft.backend.get();
      o.draft_tokens = k;
      const auto r = exl::generate(*target.backend, nullptr, prompts[i].ids, o);
      CHECK_MSG(r.ids == plain[i], "K=" + std::to_string(k) + " differs from plain greedy for " + prompts[i].name);
      CHECK_EQ(r.drafted_tokens, r.accepted_draft_tokens + r.rejected_draft_tokens);
      accepted += r.accepted_draft_tokens;
      drafted += r.drafted_tokens;
      passes += r.target_passes;
      tokens += r.decoded_tokens;
    }
    const double rate = double(accepted) / drafted;
    std::printf("  K=%d: accepted %d / drafted %d = %.3f, %.2f tokens per target pass\n", k, accepted, drafted, rate,
                double(tokens) / passes);
    // ExLlamaV2 0.2.7: 0.252 (K=3), 0.154 (K=5), same greedy drafts and exact-match rule. Our
    // drafts are the same arg-maxes of the same quantized draft, so the counts differ only by the
    // end of the job (ExLlamaV2 drafts K past token 48, we clamp K to what is left) and by
    // near-tie arg-max flips in the draft; 0.03 absolute covers both.
    if (vs_reference && (k == 3 || k == 5)) {
      const double exl = refs[k == 3 ? "speculative_k3" : "speculative_k5"]["acceptance_rate"].get<double>();
      CHECK_MSG(rate >= exl - 0.03, "acceptance " + std::to_string(rate) + " vs ExLlamaV2 " + std::to_string(exl));
    }
  }
}

}  // namespace

EXL_TEST(speculative, fixture_draft_greedy_equals_plain_and_exllamav2) { check_draft_greedy("cpu"); }

// Issue #5: identical to plain greedy for K = 1..8 on both backends.
EXL_GPU_TEST(cuda_model, speculative_draft_greedy_equals_plain) { check_draft_greedy("cuda"); }
// Issue #13: the same with the target's layers in two segments (one GPU) and the draft beside them.
EXL_GPU_TEST(cuda_model, speculative_with_a_layer_split) { check_draft_greedy("cuda", {{0, 3}, {0, 0}}); }

EXL_TEST(speculative, fixture_ngram_equals_plain_and_speeds_up_repeated_text) {
  const auto prompts = exl::test::read_prompts();
  Loaded target = load("ref-s-4.0bpw");
  for (const auto& p : prompts) {
    const auto& plain = cpu_plain_greedy(*target.backend, p);
    auto o = greedy(48);
    o.ngram = true;
    o.draft_tokens = 4;
    const auto r = exl::generate(*target.backend, nullptr, p.ids, o);
    CHECK_MSG(r.ids == plain, "n-gram differs from plain greedy for " + p.name);
    std::printf("  n-gram %s: %d/%d accepted, %.2f tokens per target pass\n", p.name.c_str(), r.accepted_draft_tokens,
                r.drafted_tokens, r.tokens_per_pass());
    CHECK(r.tokens_per_pass() >= 1.0);
  }
  // The long prompt twice: the second copy continues the first, so prompt lookup drafts well.
  const auto lp = exl::test::read_json("refs/prompts.json")["long_prompt"]["ids"].get<std::vector<std::int32_t>>();
  std::vector<std::int32_t> twice = lp;
  twice.insert(twice.end(), lp.begin() + 1, lp.begin() + std::ptrdiff_t(lp.size() / 2));  // no second BOS
  auto o = greedy(64);
  const auto plain = exl::generate(*target.backend, nullptr, twice, o).ids;
  o.ngram = true;
  o.draft_tokens = 5;
  const auto r = exl::generate(*target.backend, nullptr, twice, o);
  int copied = 0;  // how far plain greedy follows the first copy
  while (copied < int(plain.size()) && plain[std::size_t(copied)] == lp[lp.size() / 2 + std::size_t(copied)]) ++copied;
  std::printf("  n-gram, repeated long prompt: %d/%d accepted, %.2f tokens per target pass (greedy copies %d ids)\n",
              r.accepted_draft_tokens, r.drafted_tokens, r.tokens_per_pass(), copied);
  CHECK(r.ids == plain);
  // The issue asks for > 1.5 tokens per pass here, but ref-s does not copy in context: its greedy
  // continuation follows the first copy for only `copied` ids (1 when measured), so no lookup
  // drafter can be accepted often; the number is reported, and equality is what is asserted.
  CHECK(r.drafted_tokens > 0);
}
