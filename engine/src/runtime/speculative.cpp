// The decode loop: plain decoding, draft-model and n-gram speculative decoding (spec §9.6, §9.7)
// with greedy verification or the rejection rule for sampled decoding, and stop conditions.
#include <algorithm>
#include <chrono>
#include <optional>

#include "exl/error.h"
#include "exl/generator.h"

namespace exl {
namespace {

using clock_type = std::chrono::steady_clock;

float prob_of(std::span<const Candidate> d, std::int32_t id) {
  for (const auto& c : d)
    if (c.id == id) return c.p;
  return 0.0f;
}

void check_options(const Backend& target, const Tokenizer* tok, std::span<const std::int32_t> prompt,
                   const GenerateOptions& o) {
  if (prompt.empty()) throw Error(ErrorKind::invalid_argument, "the prompt is empty (no tokens)");
  if (o.max_new_tokens < 0) throw Error(ErrorKind::invalid_argument, "max_new_tokens must be >= 0");
  if (o.draft_tokens < 0 || o.draft_tokens > 16)
    throw Error(ErrorKind::invalid_argument, "draft_tokens must be in 0..16, got " + std::to_string(o.draft_tokens));
  if (o.draft && o.ngram)
    throw Error(ErrorKind::invalid_argument, "choose either a draft model or n-gram speculation, not both");
  if (o.ngram && (o.max_ngram < 2 || o.max_ngram > 8))
    throw Error(ErrorKind::invalid_argument, "max_ngram must be in 2..8");
  if (o.draft && o.draft->vocab_size() != target.vocab_size())
    throw Error(ErrorKind::invalid_argument, "the draft model's vocabulary (" + std::to_string(o.draft->vocab_size()) +
                                                 ") differs from the target's (" +
                                                 std::to_string(target.vocab_size()) + ")");
  if (!o.stop_strings.empty() && !tok)
    throw Error(ErrorKind::invalid_argument, "stop strings need a tokenizer");
  for (std::int32_t id : prompt)
    if (id < 0 || id >= target.vocab_size())
      throw Error(ErrorKind::invalid_argument, "prompt token id " + std::to_string(id) + " is outside the vocabulary");
}

}  // namespace

GenerateResult generate_stream(Backend& target, std::shared_ptr<const Tokenizer> tokenizer,
                               std::span<const std::int32_t> prompt, const GenerateOptions& o,
                               const TokenCallback& on_event, std::stop_token stop) {
  check_options(target, tokenizer.get(), prompt, o);
  GenerateResult r;
  r.prompt_tokens = int(prompt.size());
  // The caller decides on truncation; the engine never cuts a prompt silently. One position is
  // left for the first generated token.
  if (int(prompt.size()) >= target.cache_capacity())
    throw Error(ErrorKind::invalid_argument, "the prompt (" + std::to_string(prompt.size()) +
                                                 " tokens) does not fit the context of " +
                                                 std::to_string(target.cache_capacity()) + " tokens");
  if (o.draft && o.draft->cache_capacity() < target.cache_capacity())
    throw Error(ErrorKind::invalid_argument, "the draft model's cache is shorter than the target's");
  std::vector<std::int32_t> stop_ids = o.stop_ids;
  if (tokenizer && !o.ignore_eos)
    for (std::int32_t e : tokenizer->eos_ids()) stop_ids.push_back(e);

  SamplerSettings ss = o.sampler;
  if (ss.vocab_limit == 0 && tokenizer && tokenizer->vocab_size() < target.vocab_size())
    ss.vocab_limit = tokenizer->vocab_size();
  Sampler sampler(ss);
  SamplerSettings ds = ss;
  ds.greedy = ds.greedy || o.draft_greedy;
  ds.seed = ss.seed ^ 0x9e3779b97f4a7c15ull;
  Sampler draft_sampler(ds);
  const bool target_greedy = ss.is_greedy();

  std::optional<TextStream> text;
  if (tokenizer) text.emplace(tokenizer, o.stop_strings, o.skip_special);
  const bool speculate = (o.draft || o.ngram) && o.draft_tokens > 0;
  std::optional<NgramDrafter> ngram;
  if (o.ngram) {
    ngram.emplace(o.max_ngram);
    ngram->append(prompt);
  }
  std::vector<std::int32_t> ctx(prompt.begin(), prompt.end());

  const auto t0 = clock_type::now();
  std::vector<float> logits;
  // Prefix reuse: keep the cached K/V of the longest cached prefix of the prompt; the last prompt
  // token always runs, its logits pick the first new token.
  const int max_reuse = int(prompt.size()) - 1;
  r.cached_tokens = o.reuse_cache ? target.reuse_prefix(prompt, max_reuse) : 0;
  if (!o.reuse_cache) target.truncate_cache(0);
  const auto rest = prompt.subspan(std::size_t(r.cached_tokens));
  r.prefilled_tokens = int(prefill(target, rest, o.max_chunk_size, LogitsWanted::last, logits, stop));
  r.prefill_seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (r.prefilled_tokens < int(rest.size())) {  // cancelled between chunks: the cache holds a valid prefix
    r.stop = StopReason::cancelled;
    return r;
  }
  int draft_len = 0;  // tokens of ctx in the draft's cache
  if (o.draft) draft_len = o.reuse_cache ? o.draft->reuse_prefix(prompt, max_reuse) : (o.draft->truncate_cache(0), 0);
  const std::size_t vocab = std::size_t(target.vocab_size());
  auto row = [&](std::size_t i) { return std::span<const float>(logits.data() + i * vocab, vocab); };

  bool done = false;
  // Emits one id; false when generation ends (the id is dropped if it is a stop id).
  auto emit = [&](std::int32_t id, bool drafted) {
    if (std::find(stop_ids.begin(), stop_ids.end(), id) != stop_ids.end()) {
      r.stop = StopReason::eos;
      return done = false;
    }
    r.ids.push_back(id);
    r.from_draft.push_back(drafted);
    ctx.push_back(id);
    if (ngram) ngram->append(id);
    TokenEvent e{id, text ? text->push(id) : std::string(), drafted};
    r.text += e.text;
    if (on_event) on_event(e);
    if (text && text->stopped()) {
      r.stop = StopReason::stop_string;
      return done = false;
    }
    if (int(r.ids.size()) >= o.max_new_tokens) {
      r.stop = StopReason::max_tokens;
      return done = false;
    }
    return true;
  };

  std::vector<std::int32_t> drafts, step_ids;
  std::vector<std::vector<Candidate>> q;  // draft distributions (sampled drafting only)
  std::vector<Candidate> p, residual;
  std::vector<float> dl;
  auto t_decode = clock_type::now();
  if (o.max_new_tokens > 0) done = !emit(sampler.sample(row(0), ctx), false);
  else done = true;
  while (!done) {
    if (stop.stop_requested()) {
      r.stop = StopReason::cancelled;
      break;
    }
    if (target.cache_length() >= target.cache_capacity()) {
      r.stop = StopReason::cache_full;
      break;
    }
    if (r.target_passes == 0) t_decode = clock_type::now();
    const int base = target.cache_length();  // position of the pending token ctx.back()
    const int remaining = o.max_new_tokens - int(r.ids.size());
    int k = speculate ? std::min({o.draft_tokens, remaining - 1, target.cache_capacity() - base - 1}) : 0;
    drafts.clear();
    q.clear();
    if (k > 0 && ngram) {
      drafts = ngram->draft(k);
    } else if (k > 0 && o.draft) {
      Backend& d = *o.draft;
      k = std::min(k, d.cache_capacity() - int(ctx.size()) + 1);
      for (int i = 0; i < k; ++i) {
        if (i == 0) {
          prefill(d, std::span<const std::int32_t>(ctx).subspan(std::size_t(draft_len)), o.max_chunk_size,
                  LogitsWanted::last, dl);
          draft_len = int(ctx.size());
        } else {
          d.forward(std::span<const std::int32_t>(&drafts.back(), 1), LogitsWanted::last, dl);
          ++draft_len;
        }
        const std::span<const float> dr(dl.data(), vocab);
        std::vector<std::int32_t> dctx;  // penalties see the drafts so far
        std::int32_t id;
        if (ds.is_greedy()) {
          id = draft_sampler.sample(dr, ctx);  // penalties on ctx only: greedy drafts are cheap
        } else {
          dctx = ctx;
          dctx.insert(dctx.end(), drafts.begin(), drafts.end());
          q.emplace_back();
          draft_sampler.distribution(dr, dctx, q.back());
          id = draft_sampler.draw(q.back());
        }
        drafts.push_back(id);
      }
    }
    k = int(drafts.size());
    ++r.target_passes;
    if (k == 0) {
      const std::int32_t pending = ctx.back();
      done = !emit(target.forward_sample(std::span<const std::int32_t>(&pending, 1), sampler, ctx), false);
      continue;
    }
    step_ids.assign(1, ctx.back());
    step_ids.insert(step_ids.end(), drafts.begin(), drafts.end());
    target.forward(step_ids, LogitsWanted::all, logits);
    r.drafted_tokens += k;
    int accepted = 0;
    for (int i = 0; i <= k && !done; ++i) {
      if (i == k) {  // every draft accepted: the bonus token
        done = !emit(sampler.sample(row(std::size_t(i)), ctx), false);
        break;
      }
      const std::int32_t d = drafts[std::size_t(i)];
      std::int32_t t;
      bool accept;
      if (target_greedy) {
        t = sampler.sample(row(std::size_t(i)), ctx);
        accept = t == d;
      } else {
        sampler.distribution(row(std::size_t(i)), ctx, p);
        const float qd = q.empty() ? 1.0f : prob_of(q[std::size_t(i)], d);
        const float pd = prob_of(p, d);
        accept = qd > 0 && sampler.next_uniform() < double(pd) / double(qd);
        if (!accept) {  // resample from normalise(max(0, p - q))
          residual.clear();
          for (const auto& c : p) {
            const float qi = q.empty() ? (c.id == d ? 1.0f : 0.0f) : prob_of(q[std::size_t(i)], c.id);
            if (c.p > qi) residual.push_back({c.id, c.p - qi});
          }
          t = sampler.draw(residual.empty() ? std::span<const Candidate>(p) : std::span<const Candidate>(residual));
        } else {
          t = d;
        }
      }
      if (accept) {
        ++accepted;
        done = !emit(d, true);
      } else {
        done = !emit(t, false);
        break;
      }
    }
    r.accepted_draft_tokens += accepted;
    r.rejected_draft_tokens += k - accepted;
    target.truncate_cache(base + 1 + accepted);  // pending token and the accepted drafts
    if (o.draft) {
      draft_len = std::min(draft_len, base + 1 + accepted);
      o.draft->truncate_cache(draft_len);
    }
  }
  r.decoded_tokens = std::max(0, int(r.ids.size()) - 1);
  if (r.target_passes > 0) r.decode_seconds = std::chrono::duration<double>(clock_type::now() - t_decode).count();
  if (text && !text->stopped()) {
    TokenEvent tail{-1, text->flush(), false};
    r.text += tail.text;
    if (on_event && !tail.text.empty()) on_event(tail);
  }
  return r;
}

}  // namespace exl
