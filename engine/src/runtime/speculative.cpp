// The decode loop as steps (DecodeSession): plain decoding, draft-model and n-gram speculative
// decoding (spec §9.6, §9.7) with greedy verification or the rejection rule for sampled decoding;
// and generate_stream(), which drives a session and adds stop strings, limits and timing.
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

void check_options(const Backend& target, const Tokenizer* tok, const GenerateOptions& o) {
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
}

SamplerSettings target_settings(const Backend& target, const Tokenizer* tok, const GenerateOptions& o) {
  SamplerSettings ss = o.sampler;
  if (ss.vocab_limit == 0 && tok && tok->vocab_size() < target.vocab_size()) ss.vocab_limit = tok->vocab_size();
  return ss;
}

SamplerSettings draft_settings(SamplerSettings ds, const GenerateOptions& o) {
  ds.greedy = ds.greedy || o.draft_greedy;
  ds.seed = ds.seed ^ 0x9e3779b97f4a7c15ull;
  return ds;
}

}  // namespace

DecodeSession::DecodeSession(Backend& target, const Tokenizer* tokenizer, const GenerateOptions& o)
    : target_(target),
      draft_(o.draft),
      o_(o),
      stop_ids_(o.stop_ids),
      sampler_((check_options(target, tokenizer, o), target_settings(target, tokenizer, o))),
      draft_sampler_(draft_settings(sampler_.settings(), o)),
      target_greedy_(sampler_.settings().is_greedy()),
      speculate_((o.draft || o.ngram) && o.draft_tokens > 0) {
  if (tokenizer && !o.ignore_eos)
    for (std::int32_t e : tokenizer->eos_ids()) stop_ids_.push_back(e);
  if (o.ngram) ngram_ = std::make_unique<NgramDrafter>(o.max_ngram);
}

DecodeSession::~DecodeSession() = default;

bool DecodeSession::start(std::span<const std::int32_t> prompt, std::stop_token stop) {
  if (started_) throw Error(ErrorKind::invalid_argument, "a decode session starts once");
  if (prompt.empty()) throw Error(ErrorKind::invalid_argument, "the prompt is empty (no tokens)");
  for (std::int32_t id : prompt)
    if (id < 0 || id >= target_.vocab_size())
      throw Error(ErrorKind::invalid_argument, "prompt token id " + std::to_string(id) + " is outside the vocabulary");
  // The caller decides on truncation; the engine never cuts a prompt silently. One position is
  // left for the first generated token.
  if (int(prompt.size()) >= target_.cache_capacity())
    throw Error(ErrorKind::invalid_argument, "the prompt (" + std::to_string(prompt.size()) +
                                                 " tokens) does not fit the context of " +
                                                 std::to_string(target_.cache_capacity()) + " tokens");
  if (draft_ && draft_->cache_capacity() < target_.cache_capacity())
    throw Error(ErrorKind::invalid_argument, "the draft model's cache is shorter than the target's");
  started_ = true;
  ctx_.assign(prompt.begin(), prompt.end());
  if (ngram_) ngram_->append(prompt);
  // Prefix reuse: keep the cached K/V of the longest cached prefix of the prompt; the last prompt
  // token always runs, its logits pick the first new token.
  const int max_reuse = int(prompt.size()) - 1;
  cached_ = o_.reuse_cache ? target_.reuse_prefix(prompt, max_reuse) : 0;
  if (!o_.reuse_cache) target_.truncate_cache(0);
  const auto rest = prompt.subspan(std::size_t(cached_));
  prefilled_ = int(prefill(target_, rest, o_.max_chunk_size, LogitsWanted::last, logits_, stop));
  if (prefilled_ < int(rest.size())) {  // cancelled between chunks: the cache holds a valid prefix
    ended_ = true;
    return false;
  }
  if (draft_) {
    if (o_.reuse_cache) {
      draft_len_ = draft_->reuse_prefix(prompt, max_reuse);
    } else {
      draft_->truncate_cache(0);
      draft_len_ = 0;
    }
  }
  return true;
}

// Adds one id to the context and hands it on; false when generation ends here.
bool DecodeSession::produce(std::int32_t id, bool drafted, const IdCallback& on_id, DecodeStepResult& s) {
  if (std::find(stop_ids_.begin(), stop_ids_.end(), id) != stop_ids_.end()) {
    s.end = DecodeStepResult::End::stop_id;
    return false;
  }
  ctx_.push_back(id);
  if (ngram_) ngram_->append(id);
  ++s.produced;
  if (on_id && !on_id(id, drafted)) {
    s.end = DecodeStepResult::End::caller;
    return false;
  }
  return true;
}

DecodeStepResult DecodeSession::step(int max_ids, const IdCallback& on_id) {
  DecodeStepResult s;
  if (!started_) throw Error(ErrorKind::invalid_argument, "step() before start()");
  if (ended_ || max_ids <= 0) {
    s.end = DecodeStepResult::End::caller;
    return s;
  }
  const std::size_t vocab = std::size_t(target_.vocab_size());
  if (!first_done_) {  // the first id comes from the prefill's logits
    first_done_ = true;
    produce(sampler_.sample(std::span<const float>(logits_.data(), vocab), ctx_), false, on_id, s);
    ended_ = s.end != DecodeStepResult::End::more;
    return s;
  }
  const int base = target_.cache_length();  // position of the pending id ctx_.back()
  if (base >= target_.cache_capacity()) {
    s.end = DecodeStepResult::End::cache_full;
    ended_ = true;
    return s;
  }
  int k = speculate_ ? std::min({o_.draft_tokens, max_ids - 1, target_.cache_capacity() - base - 1}) : 0;
  drafts_.clear();
  q_.clear();
  if (k > 0) draft_ids(k);
  k = int(drafts_.size());
  ++passes_;
  s.target_pass = true;
  if (k == 0) {
    const std::int32_t pending = ctx_.back();
    const std::int32_t id = target_.forward_sample(std::span<const std::int32_t>(&pending, 1), sampler_, ctx_);
    produce(id, false, on_id, s);
  } else {
    verify(on_id, s);
  }
  rollback();
  ended_ = s.end != DecodeStepResult::End::more;
  return s;
}

// Proposes up to k ids into drafts_ (and their distributions into q_ when the draft samples).
void DecodeSession::draft_ids(int k) {
  if (ngram_) {
    drafts_ = ngram_->draft(k);
    return;
  }
  Backend& d = *draft_;
  const std::size_t vocab = std::size_t(target_.vocab_size());
  k = std::min(k, d.cache_capacity() - int(ctx_.size()) + 1);
  for (int i = 0; i < k; ++i) {
    if (i == 0) {  // catch the draft up with the context (the prompt's rest, the last step's ids)
      prefill(d, std::span<const std::int32_t>(ctx_).subspan(std::size_t(draft_len_)), o_.max_chunk_size,
              LogitsWanted::last, draft_logits_);
      draft_len_ = int(ctx_.size());
    } else {
      d.forward(std::span<const std::int32_t>(&drafts_.back(), 1), LogitsWanted::last, draft_logits_);
      ++draft_len_;
    }
    const std::span<const float> dr(draft_logits_.data(), vocab);
    std::int32_t id;
    if (draft_sampler_.settings().is_greedy()) {
      id = draft_sampler_.sample(dr, ctx_);  // penalties on the context only: greedy drafts are cheap
    } else {
      std::vector<std::int32_t> dctx = ctx_;  // penalties see the drafts so far
      dctx.insert(dctx.end(), drafts_.begin(), drafts_.end());
      q_.emplace_back();
      draft_sampler_.distribution(dr, dctx, q_.back());
      id = draft_sampler_.draw(q_.back());
    }
    drafts_.push_back(id);
  }
}

// One target pass over the pending id and the drafts; produces the accepted drafts and the
// correction (or, when every draft is accepted, the bonus) id.
void DecodeSession::verify(const IdCallback& on_id, DecodeStepResult& s) {
  const int k = int(drafts_.size());
  const std::size_t vocab = std::size_t(target_.vocab_size());
  auto row = [&](int i) { return std::span<const float>(logits_.data() + std::size_t(i) * vocab, vocab); };
  step_ids_.assign(1, ctx_.back());
  step_ids_.insert(step_ids_.end(), drafts_.begin(), drafts_.end());
  target_.forward(step_ids_, LogitsWanted::all, logits_);
  drafted_ += k;
  s.drafted = k;
  for (int i = 0; i <= k; ++i) {
    if (i == k) {  // every draft accepted: the bonus id
      produce(sampler_.sample(row(i), ctx_), false, on_id, s);
      return;
    }
    const std::int32_t d = drafts_[std::size_t(i)];
    std::int32_t t = d;
    bool accept;
    if (target_greedy_) {
      t = sampler_.sample(row(i), ctx_);
      accept = t == d;
    } else {
      sampler_.distribution(row(i), ctx_, p_);
      const float qd = q_.empty() ? 1.0f : prob_of(q_[std::size_t(i)], d);
      const float pd = prob_of(p_, d);
      accept = qd > 0 && sampler_.next_uniform() < double(pd) / double(qd);
      if (!accept) {  // resample from normalise(max(0, p - q))
        residual_.clear();
        for (const auto& c : p_) {
          const float qi = q_.empty() ? (c.id == d ? 1.0f : 0.0f) : prob_of(q_[std::size_t(i)], c.id);
          if (c.p > qi) residual_.push_back({c.id, c.p - qi});
        }
        t = sampler_.draw(residual_.empty() ? std::span<const Candidate>(p_) : std::span<const Candidate>(residual_));
      }
    }
    if (accept) {
      ++accepted_;
      ++s.accepted;
      if (!produce(d, true, on_id, s)) return;
    } else {
      produce(t, false, on_id, s);
      return;
    }
  }
}

// Both caches back to the context less its pending id: rejected drafts' entries are dropped.
void DecodeSession::rollback() {
  const int keep = int(ctx_.size()) - 1;
  if (target_.cache_length() > keep) target_.truncate_cache(keep);
  if (draft_ && draft_len_ > keep) {
    draft_len_ = keep;
    draft_->truncate_cache(keep);
  }
}

GenerateResult generate_stream(Backend& target, std::shared_ptr<const Tokenizer> tokenizer,
                               std::span<const std::int32_t> prompt, const GenerateOptions& o,
                               const TokenCallback& on_event, std::stop_token stop) {
  DecodeSession session(target, tokenizer.get(), o);
  GenerateResult r;
  r.prompt_tokens = int(prompt.size());
  const auto t0 = clock_type::now();
  const bool prefilled = session.start(prompt, stop);
  r.cached_tokens = session.cached_tokens();
  r.prefilled_tokens = session.prefilled_tokens();
  r.prefill_seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (!prefilled) {
    r.stop = StopReason::cancelled;
    return r;
  }
  std::optional<TextStream> text;
  if (tokenizer) text.emplace(tokenizer, o.stop_strings, o.skip_special);

  // Takes one id; false when generation ends with it (stop string, max_new_tokens).
  auto on_id = [&](std::int32_t id, bool drafted) {
    r.ids.push_back(id);
    r.from_draft.push_back(drafted);
    TokenEvent e{id, text ? text->push(id) : std::string(), drafted};
    r.text += e.text;
    if (on_event) on_event(e);
    if (text && text->stopped()) {
      r.stop = StopReason::stop_string;
      return false;
    }
    if (int(r.ids.size()) >= o.max_new_tokens) {
      r.stop = StopReason::max_tokens;
      return false;
    }
    return true;
  };
  // One step; false when generation ends.
  auto run_step = [&] {
    const DecodeStepResult s = session.step(o.max_new_tokens - int(r.ids.size()), on_id);
    if (s.end == DecodeStepResult::End::stop_id) r.stop = StopReason::eos;
    if (s.end == DecodeStepResult::End::cache_full) r.stop = StopReason::cache_full;
    return s.end == DecodeStepResult::End::more;
  };

  auto t_decode = clock_type::now();
  bool done = o.max_new_tokens <= 0 || !run_step();
  while (!done) {
    if (stop.stop_requested()) {
      r.stop = StopReason::cancelled;
      break;
    }
    if (session.target_passes() == 0) t_decode = clock_type::now();
    done = !run_step();
  }
  r.drafted_tokens = session.drafted_tokens();
  r.accepted_draft_tokens = session.accepted_draft_tokens();
  r.rejected_draft_tokens = session.rejected_draft_tokens();
  r.target_passes = session.target_passes();
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
