// The paged KV cache and prefix reuse through a backend and the generator, with the fixture
// model (ref-s-4.0bpw; ref-xs-4.0bpw, a third of its layers, in the sanitizer build): see prefix_checks.h.
#include "prefix_checks.h"

#include <cstdio>
#include <random>

#include "exl/error.h"
#include "exl/generator.h"
#include "exl/model.h"
#include "exl_test.h"
#include "refs.h"

namespace exl::test {
namespace {

std::shared_ptr<const Model> fixture_model() {
  static std::shared_ptr<const Model> model = Model::open(test::fixture(test::kSanitized ? "models/exl2/ref-xs-4.0bpw" : "models/exl2/ref-s-4.0bpw"));
  return model;
}

std::unique_ptr<Backend> open_backend(const std::string& device, CacheType type, int ctx, bool paged = true,
                                      int cache_tokens = 0, int max_chunk = 2048) {
  BackendOptions bo;
  bo.max_chunk_size = max_chunk;
  auto b = make_backend(device, bo);
  b->load(fixture_model());
  CacheOptions co;
  co.max_seq_len = ctx;
  co.type = type;
  co.paged = paged;
  co.cache_tokens = cache_tokens;
  b->allocate_cache(co);
  return b;
}

std::vector<std::int32_t> long_prompt() {
  return test::read_json("refs/prompts.json")["long_prompt"]["ids"].get<std::vector<std::int32_t>>();
}

GenerateOptions greedy(int n, int max_chunk = 2048) {
  GenerateOptions o;
  o.max_new_tokens = n;
  o.ignore_eos = true;
  o.sampler.greedy = true;
  o.max_chunk_size = max_chunk;
  return o;
}

// Forwards everything to a real backend and requests a stop after a set number of forward
// calls (prefill chunks and decode steps), as a user pressing Stop between steps.
class StopAfter final : public Backend {
 public:
  StopAfter(Backend& inner, std::stop_source& stop, int after) : inner_(inner), stop_(stop), left_(after) {}
  std::string name() const override { return inner_.name(); }
  void load(std::shared_ptr<const Model> m) override { inner_.load(std::move(m)); }
  void allocate_cache(const CacheOptions& o) override { inner_.allocate_cache(o); }
  int cache_capacity() const override { return inner_.cache_capacity(); }
  int cache_length() const override { return inner_.cache_length(); }
  void truncate_cache(int n) override { inner_.truncate_cache(n); }
  int reuse_prefix(std::span<const std::int32_t> t, int m) override { return inner_.reuse_prefix(t, m); }
  void forward(std::span<const std::int32_t> ids, LogitsWanted w, std::vector<float>& logits) override {
    inner_.forward(ids, w, logits);
    if (--left_ == 0) stop_.request_stop();
  }
  int vocab_size() const override { return inner_.vocab_size(); }
  MemoryStats memory() const override { return inner_.memory(); }

 private:
  Backend& inner_;
  std::stop_source& stop_;
  int left_;
};

}  // namespace

// `same_output`: the reused turns' greedy output equals the from-scratch one. Not asked of the
// Q4 cache: a quantized block that is written token by token (decode) is re-quantized at every
// write, one written in one chunk (a from-scratch prefill) once, and at 4 bits that history moves
// the logits enough to flip a near tie (ExLlamaV2's cache does the same).
void check_conversation(const std::string& device, CacheType type, bool same_output) {
  auto b = open_backend(device, type, 1024);
  auto fresh = open_backend(device, type, 1024);
  const auto prompts = test::read_prompts();
  // Turn 1 crosses a page boundary (300 tokens); later turns append another prompt's ids.
  std::vector<std::int32_t> convo = long_prompt();
  int expected_cached = 0;
  for (int turn = 1; turn <= 3; ++turn) {
    if (turn > 1) {
      const auto& extra = prompts[std::size_t(turn - 1)].ids;
      convo.insert(convo.end(), extra.begin() + 1, extra.end());  // without its BOS
    }
    const GenerateResult r = generate(*b, nullptr, convo, greedy(16));
    CHECK_EQ(r.cached_tokens, expected_cached);
    CHECK_EQ(r.prefilled_tokens, int(convo.size()) - expected_cached);
    auto scratch_options = greedy(16);
    scratch_options.reuse_cache = false;
    const GenerateResult s = generate(*fresh, nullptr, convo, scratch_options);
    CHECK_EQ(s.cached_tokens, 0);
    if (same_output)
      CHECK_MSG(r.ids == s.ids, cache_type_name(type) << " turn " << turn << ": reused output differs from scratch");
    if (test::options().verbose)
      std::printf("  %s turn %d: %zu prompt tokens, %d reused, %d prefilled\n", cache_type_name(type), turn,
                  convo.size(), r.cached_tokens, r.prefilled_tokens);
    // The cache holds the prompt and every new token but the last (sampled, never forwarded).
    expected_cached = int(convo.size() + r.ids.size()) - 1;
    convo.insert(convo.end(), r.ids.begin(), r.ids.end());
  }
}

void check_paged_logits_equal_contiguous(const std::string& device, const std::vector<CacheType>& types) {
  const auto prompt = long_prompt();
  std::mt19937 rng(7);
  for (CacheType type : types) {
    auto paged = open_backend(device, type, 1024, true, 2048);
    auto flat = open_backend(device, type, 1024, false);
    // Another sequence first, so the paged one lands on other pages than 0, 1, ...
    std::vector<float> logits_p, logits_f;
    std::vector<std::int32_t> other(prompt.rbegin(), prompt.rend());
    prefill(*paged, other, 128, LogitsWanted::none, logits_p);
    CHECK_EQ(paged->reuse_prefix(prompt, 0), 0);
    // Chunks that straddle the page boundary, then decode steps and a verify-style chunk with a rollback.
    for (auto* b : {paged.get(), flat.get()}) CHECK_EQ(b->cache_length(), 0);
    std::size_t at = 0;
    for (std::size_t n : {100u, 150u, 40u, 10u}) {
      const auto chunk = std::span<const std::int32_t>(prompt).subspan(at, n);
      paged->forward(chunk, LogitsWanted::all, logits_p);
      flat->forward(chunk, LogitsWanted::all, logits_f);
      CHECK_MSG(logits_p == logits_f, cache_type_name(type) << ": paged logits differ after " << at + n << " tokens");
      at += n;
    }
    for (int step = 0; step < 20; ++step) {
      std::vector<std::int32_t> ids(1 + rng() % 4);
      for (auto& id : ids) id = std::int32_t(rng() % 8000);
      paged->forward(ids, LogitsWanted::all, logits_p);
      flat->forward(ids, LogitsWanted::all, logits_f);
      CHECK_MSG(logits_p == logits_f, cache_type_name(type) << ": paged logits differ at step " << step);
      const int keep = paged->cache_length() - int(rng() % ids.size());
      paged->truncate_cache(keep);
      flat->truncate_cache(keep);
    }
  }
}

void check_earlier_conversations_stay_cached(const std::string& device) {
  // Room for three sequences: switching between two conversations reuses each one's pages.
  auto b = open_backend(device, CacheType::fp16, 512, true, 1536);
  const auto a = long_prompt();
  const auto prompts = test::read_prompts();
  std::vector<std::int32_t> other = prompts[0].ids;
  other.insert(other.end(), a.begin() + 1, a.end());
  CHECK_EQ(generate(*b, nullptr, a, greedy(4)).cached_tokens, 0);
  CHECK_EQ(generate(*b, nullptr, other, greedy(4)).cached_tokens, 1);  // the BOS
  const GenerateResult again = generate(*b, nullptr, a, greedy(4));
  CHECK_EQ(again.cached_tokens, int(a.size()) - 1);
  CHECK_EQ(again.prefilled_tokens, 1);
}

void check_cancelled_generations(const std::string& device, int runs) {
  const auto base = long_prompt();
  // A small pool (eviction happens) and small chunks (prefill has several steps).
  auto b = open_backend(device, CacheType::fp16, 512, true, 1024, 32);
  auto fresh = open_backend(device, CacheType::fp16, 512, true, 0, 32);
  std::mt19937 rng(2024);
  auto random_prompt = [&] {
    // A prefix of the long prompt (shared by many requests) and a random tail of up to 3 chunks.
    std::vector<std::int32_t> p(base.begin(), base.begin() + 1 + std::ptrdiff_t(rng() % base.size()));
    for (int i = int(rng() % 80); i > 0; --i) p.push_back(std::int32_t(rng() % 8000));
    return p;
  };
  int cancelled_in_prefill = 0, cancelled_in_decode = 0, checks = 0;
  for (int run = 0; run < runs; ++run) {
    const auto prompt = random_prompt();
    std::stop_source stop;
    StopAfter s(*b, stop, 1 + int(rng() % 6));
    auto o = greedy(1 + int(rng() % 8), 32);
    const GenerateResult r = generate(s, nullptr, prompt, o, {}, stop.get_token());
    if (r.stop == StopReason::cancelled) {
      (r.prefilled_tokens < int(prompt.size()) - r.cached_tokens ? cancelled_in_prefill : cancelled_in_decode)++;
      CHECK(r.ids.size() < std::size_t(o.max_new_tokens));
    }
    if (run % 50 == 49) {  // a later, uncancelled generation equals a fresh one
      const auto p = random_prompt();
      auto scratch = greedy(6, 32);
      scratch.reuse_cache = false;
      const auto want = generate(*fresh, nullptr, p, scratch).ids;
      CHECK_MSG(generate(*b, nullptr, p, greedy(6, 32)).ids == want, "run " << run << ": output differs from fresh");
      ++checks;
    }
  }
  if (test::options().verbose)
    std::printf("  %d runs: %d cancelled in prefill, %d in decode, %d checks\n", runs, cancelled_in_prefill,
                cancelled_in_decode, checks);
  CHECK(cancelled_in_prefill > 0);
  CHECK(cancelled_in_decode > 0);
}

void check_prompt_longer_than_context(const std::string& device) {
  auto b = open_backend(device, CacheType::fp16, 128);
  const auto prompt = long_prompt();  // 300 tokens
  CHECK_THROWS_ERROR(generate(*b, nullptr, prompt, greedy(4)), ErrorKind::invalid_argument,
                     "does not fit the context of 128 tokens");
  // The backend stays usable.
  const std::vector<std::int32_t> shorter(prompt.begin(), prompt.begin() + 100);
  CHECK_EQ(generate(*b, nullptr, shorter, greedy(4)).ids.size(), 4u);
}

}  // namespace exl::test
