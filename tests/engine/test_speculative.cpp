// Speculative decoding on synthetic backends: the rejection rule keeps the target's distribution
// (chi-square over the first sampled tokens), greedy speculation equals plain greedy, telemetry
// adds up, n-gram drafting follows spec §9.7.
#include <algorithm>
#include <cmath>
#include <map>

#include "exl/error.h"
#include "exl/generator.h"
#include "exl_test.h"

namespace {

// A tiny deterministic "model": the logits at a position depend on that position's token and
// index, so the cache (a token list) fully determines them. Different `salt` = different model.
class SyntheticBackend final : public exl::Backend {
 public:
  SyntheticBackend(int vocab, float salt, float sharpness) : vocab_(vocab), salt_(salt), sharp_(sharpness) {}
  std::string name() const override { return "synthetic"; }
  void load(std::shared_ptr<const exl::Model>) override {}
  void allocate_cache(const exl::CacheOptions& o) override { cap_ = o.max_seq_len; }
  int cache_capacity() const override { return cap_; }
  int cache_length() const override { return int(cache_.size()); }
  void truncate_cache(int n) override {
    if (n < int(cache_.size())) cache_.resize(std::size_t(n));
  }
  void forward(std::span<const std::int32_t> ids, exl::LogitsWanted wanted, std::vector<float>& logits) override {
    ++forwards;
    logits.clear();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      cache_.push_back(ids[i]);
      if (wanted == exl::LogitsWanted::all || (wanted == exl::LogitsWanted::last && i + 1 == ids.size()))
        for (int v = 0; v < vocab_; ++v) logits.push_back(logit(ids[i], int(cache_.size()) - 1, v));
    }
  }
  int vocab_size() const override { return vocab_; }
  exl::MemoryStats memory() const override { return {}; }
  float logit(int tok, int pos, int v) const {
    return sharp_ * std::sin(1.7f * float(tok) + 2.3f * float(v) * (1 + salt_) + 0.9f * float(pos) + salt_);
  }
  int forwards = 0;

 private:
  int vocab_;
  float salt_, sharp_;
  int cap_ = 0;
  std::vector<std::int32_t> cache_;
};

SyntheticBackend make(int vocab, float salt, float sharp) {
  SyntheticBackend b(vocab, salt, sharp);
  b.allocate_cache({64, exl::CacheType::fp32});
  return b;
}

// Chi-square over the sequences of the first `n` new tokens: with a draft vs the exact target
// distribution (the product of the target's filtered conditionals).
void check_distribution(const exl::SamplerSettings& ss, bool draft_greedy, int k) {
  const int vocab = 5, n = 3, runs = 40000;
  auto target = make(vocab, 0.0f, 1.5f);
  auto draft = make(vocab, 0.37f, 2.0f);
  const std::vector<std::int32_t> prompt = {1, 3};
  std::map<std::vector<std::int32_t>, int> seen;
  int accepted = 0, drafted = 0;
  for (int i = 0; i < runs; ++i) {
    exl::GenerateOptions o;
    o.max_new_tokens = n;
    o.sampler = ss;
    o.sampler.seed = std::uint64_t(i) * 7919u + 1;
    o.draft = &draft;
    o.draft_tokens = k;
    o.draft_greedy = draft_greedy;
    const auto r = exl::generate(target, nullptr, prompt, o);
    CHECK_EQ(int(r.ids.size()), n);
    ++seen[r.ids];
    accepted += r.accepted_draft_tokens;
    drafted += r.drafted_tokens;
  }
  CHECK(drafted > 0);
  CHECK(accepted > 0);
  CHECK(accepted < drafted);
  // Exact distribution by enumeration.
  exl::Sampler ref(ss);
  std::map<std::vector<std::int32_t>, double> expect;
  std::vector<std::vector<std::int32_t>> frontier = {{}};
  std::vector<double> mass = {1.0};
  for (int step = 0; step < n; ++step) {
    std::vector<std::vector<std::int32_t>> next;
    std::vector<double> next_mass;
    for (std::size_t f = 0; f < frontier.size(); ++f) {
      std::vector<std::int32_t> ctx = prompt;
      ctx.insert(ctx.end(), frontier[f].begin(), frontier[f].end());
      std::vector<float> row;
      for (int v = 0; v < vocab; ++v) row.push_back(target.logit(ctx.back(), int(ctx.size()) - 1, v));
      std::vector<exl::Candidate> dist;
      ref.distribution(row, ctx, dist);
      for (const auto& c : dist) {
        auto seq = frontier[f];
        seq.push_back(c.id);
        next.push_back(seq);
        next_mass.push_back(mass[f] * c.p);
      }
    }
    frontier = next;
    mass = next_mass;
  }
  for (std::size_t f = 0; f < frontier.size(); ++f) expect[frontier[f]] = mass[f];
  double chi = 0;
  int bins = 0;
  for (const auto& [seq, count] : seen) CHECK_MSG(expect.count(seq), "a sequence the target cannot produce");
  for (const auto& [seq, p] : expect) {
    const double e = p * runs;
    const double o = seen.count(seq) ? seen[seq] : 0;
    chi += (o - e) * (o - e) / e;
    ++bins;
  }
  const double df = bins - 1;
  const double crit = df * std::pow(1 - 2 / (9 * df) + 3.0902 * std::sqrt(2 / (9 * df)), 3);
  CHECK_MSG(chi < crit, "chi-square " + std::to_string(chi) + " >= " + std::to_string(crit));
}

}  // namespace

EXL_TEST(speculative, rejection_sampling_keeps_target_distribution_sampled_draft) {
  exl::SamplerSettings s;
  s.temperature = 1.0f;
  check_distribution(s, false, 3);
}

EXL_TEST(speculative, rejection_sampling_keeps_target_distribution_greedy_draft_filters) {
  exl::SamplerSettings s;
  s.temperature = 0.8f;
  s.top_k = 4;
  s.repetition_penalty = 1.3f;
  check_distribution(s, true, 2);
}

EXL_TEST(speculative, greedy_draft_equals_plain_greedy_on_synthetic) {
  auto target = make(7, 0.0f, 3.0f);
  auto draft = make(7, 0.05f, 3.0f);
  const std::vector<std::int32_t> prompt = {2, 4, 6};
  exl::GenerateOptions o;
  o.max_new_tokens = 40;
  o.sampler.greedy = true;
  const auto plain = exl::generate(target, nullptr, prompt, o);
  for (int k = 1; k <= 8; ++k) {
    o.draft = &draft;
    o.draft_tokens = k;
    const auto r = exl::generate(target, nullptr, prompt, o);
    CHECK(r.ids == plain.ids);
    CHECK_EQ(r.drafted_tokens, r.accepted_draft_tokens + r.rejected_draft_tokens);
    int flagged = 0;
    for (bool b : r.from_draft) flagged += b;
    CHECK_EQ(flagged, r.accepted_draft_tokens);
    CHECK(r.target_passes < 40);
  }
}

EXL_TEST(speculative, ngram_drafter_follows_most_frequent_continuation) {
  exl::NgramDrafter d(4);
  d.append(std::vector<std::int32_t>{1, 2, 3, 4, 9, 1, 2, 3, 4, 9, 1, 2});
  CHECK(d.draft(4) == (std::vector<std::int32_t>{3, 4, 9, 1}));
  exl::NgramDrafter e(3);
  e.append(std::vector<std::int32_t>{5, 6, 7});
  CHECK(e.draft(2) == (std::vector<std::int32_t>{7, 7}));  // no match: repeat the last token
  CHECK_THROWS_ERROR(exl::NgramDrafter(1), exl::ErrorKind::invalid_argument, "max_ngram");
}

EXL_TEST(speculative, ngram_equals_plain_greedy_and_bad_options_throw) {
  auto target = make(6, 0.0f, 3.0f);
  const std::vector<std::int32_t> prompt = {1, 2, 3, 1, 2, 3, 1, 2};
  exl::GenerateOptions o;
  o.max_new_tokens = 30;
  o.sampler.greedy = true;
  const auto plain = exl::generate(target, nullptr, prompt, o);
  o.ngram = true;
  o.draft_tokens = 4;
  const auto r = exl::generate(target, nullptr, prompt, o);
  CHECK(r.ids == plain.ids);
  CHECK(r.drafted_tokens > 0);
  auto draft = make(6, 0.1f, 1.0f);
  o.draft = &draft;
  CHECK_THROWS_ERROR(exl::generate(target, nullptr, prompt, o), exl::ErrorKind::invalid_argument, "not both");
  o.ngram = false;
  o.draft_tokens = 17;
  CHECK_THROWS_ERROR(exl::generate(target, nullptr, prompt, o), exl::ErrorKind::invalid_argument, "draft_tokens");
  auto other = make(9, 0.1f, 1.0f);
  o.draft = &other;
  o.draft_tokens = 2;
  CHECK_THROWS_ERROR(exl::generate(target, nullptr, prompt, o), exl::ErrorKind::invalid_argument, "vocabulary");
}

// The step object itself: after every step the target's cache holds the context less its pending
// id (and the draft's no more than that), a step yields at most max_ids ids with the accepted
// drafts first, the running counters add up, and a stop id ends the session without entering the
// context.
EXL_TEST(speculative, decode_session_steps_keep_the_cache_consistent) {
  auto target = make(7, 0.0f, 3.0f);
  auto draft = make(7, 0.05f, 3.0f);
  const std::vector<std::int32_t> prompt = {2, 4, 6};
  exl::GenerateOptions plain_o;
  plain_o.max_new_tokens = 30;
  plain_o.sampler.greedy = true;
  const auto plain = exl::generate(target, nullptr, prompt, plain_o);
  for (int k = 0; k <= 5; ++k) {
    exl::GenerateOptions o = plain_o;
    o.draft = k > 0 ? &draft : nullptr;
    o.draft_tokens = k;
    exl::DecodeSession session(target, nullptr, o);
    CHECK(session.start(prompt));
    CHECK_EQ(session.speculative(), k > 0);
    std::vector<std::int32_t> ids;
    int accepted_seen = 0, drafted_seen = 0, passes_seen = 0;
    while (int(ids.size()) < o.max_new_tokens) {
      std::vector<bool> flags;
      const int max_ids = std::min(3, o.max_new_tokens - int(ids.size()));
      const auto s = session.step(max_ids, [&](std::int32_t id, bool from_draft) {
        ids.push_back(id);
        flags.push_back(from_draft);
        return true;
      });
      CHECK(s.produced <= max_ids);
      CHECK_EQ(s.produced, int(flags.size()));
      CHECK(s.accepted <= s.drafted);
      CHECK(s.drafted <= std::max(0, std::min(k, max_ids - 1)));
      for (std::size_t i = 0; i < flags.size(); ++i) CHECK_EQ(bool(flags[i]), int(i) < s.accepted);
      accepted_seen += s.accepted;
      drafted_seen += s.drafted;
      passes_seen += s.target_pass;
      CHECK_EQ(target.cache_length(), int(session.context().size()) - 1);
      if (k > 0) CHECK(draft.cache_length() <= int(session.context().size()) - 1);
      CHECK(s.end == exl::DecodeStepResult::End::more);
    }
    CHECK(ids == plain.ids);
    CHECK_EQ(session.accepted_draft_tokens(), accepted_seen);
    CHECK_EQ(session.drafted_tokens(), drafted_seen);
    CHECK_EQ(session.rejected_draft_tokens(), drafted_seen - accepted_seen);
    CHECK_EQ(session.target_passes(), passes_seen);
    if (k == 0) CHECK_EQ(passes_seen, o.max_new_tokens - 1);
  }
  // A stop id: the session ends on it, leaves it out of the context, and the cache stays consistent.
  std::size_t cut = 1;  // the first id not seen before it
  while (cut < plain.ids.size() &&
         std::find(plain.ids.begin(), plain.ids.begin() + std::ptrdiff_t(cut), plain.ids[cut]) != plain.ids.begin() + std::ptrdiff_t(cut))
    ++cut;
  CHECK(cut < plain.ids.size());
  exl::GenerateOptions o = plain_o;
  o.stop_ids = {plain.ids[cut]};
  o.draft = &draft;
  o.draft_tokens = 4;
  exl::DecodeSession session(target, nullptr, o);
  CHECK(session.start(prompt));
  std::vector<std::int32_t> ids;
  exl::DecodeStepResult s;
  for (int i = 0; i < 40 && s.end == exl::DecodeStepResult::End::more; ++i)
    s = session.step(8, [&](std::int32_t id, bool) {
      ids.push_back(id);
      return true;
    });
  CHECK(s.end == exl::DecodeStepResult::End::stop_id);
  CHECK(ids == std::vector<std::int32_t>(plain.ids.begin(), plain.ids.begin() + std::ptrdiff_t(cut)));
  CHECK_EQ(target.cache_length(), int(session.context().size()) - 1);
  CHECK_EQ(session.step(8, {}).produced, 0);  // an ended session yields nothing
}
