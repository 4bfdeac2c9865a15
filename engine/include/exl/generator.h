// Generation over a Backend: chunked prefill, the decode loop, the sampler, stop conditions and
// speculative decoding (draft model or n-gram), with a streaming API for the CLI, GUI and server.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "exl/backend.h"
#include "exl/tokenizer.h"

namespace exl {

// Sampling settings. Order of application on one row of logits (fixed; it follows ExLlamaV2's
// order, spec §9.4, for the stages both have):
//   1. repetition / presence / frequency penalties over the last `penalty_range` tokens of the
//      context (prompt + output): for each distinct token, l = l > 0 ? l / rep : l * rep, then
//      l -= presence; for every occurrence l -= frequency;
//   2. banned tokens -> -inf;
//   3. logit bias (additive);
//   4. ids >= vocab_limit -> -inf (vocab_limit = the tokenizer's vocabulary size; 0 = no mask);
//   5. greedy (greedy, temperature < 0.01 or top_k == 1): arg-max, lowest id on ties; stop here;
//   6. softmax with temperature;
//   7. top-k, renormalise;
//   8. top-p, renormalise: the smallest set of most likely tokens whose mass reaches top_p
//      (HF convention; ExLlamaV2 keeps the set whose mass stays <= top_p, a quirk not copied);
//   9. min-p, renormalise: keep p >= min_p * p_max;
//  10. typical, renormalise: with H = -sum p ln p, order by |-ln p - H| and keep tokens until the
//      mass reaches `typical` (the textbook rule; ExLlamaV2's y = p + ln p is a quirk not copied);
//  11. draw: one uniform u in [0, 1) from the seeded generator; walk the kept tokens in ascending
//      id order until the cumulative probability exceeds u * total.
// Top-k uses nth_element, top-p a growing partial sort; the vocabulary is never fully sorted
// unless typical sampling runs on an unfiltered set.
struct SamplerSettings {
  bool greedy = false;
  float temperature = 1.0f;
  int top_k = 0;         // 0 = off
  float top_p = 1.0f;    // 1 = off
  float min_p = 0.0f;    // 0 = off
  std::uint64_t seed = 0;
  // Additive fields (issue 5).
  float typical = 0.0f;             // 0 or 1 = off
  float repetition_penalty = 1.0f;  // 1 = off
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  int penalty_range = -1;           // last N tokens of the context; -1 = all, 0 = penalties off
  std::vector<std::pair<std::int32_t, float>> logit_bias;
  std::vector<std::int32_t> banned_tokens;
  int vocab_limit = 0;              // ids >= this are never sampled; 0 = no limit

  bool is_greedy() const { return greedy || temperature < 0.01f || top_k == 1; }
  bool has_penalties() const;
  // Throws Error(invalid_argument) naming the bad field.
  void validate() const;
};

// One entry of a filtered, normalised distribution.
struct Candidate {
  std::int32_t id;
  float p;
};

class Sampler {
 public:
  explicit Sampler(SamplerSettings s);  // validates; throws Error(invalid_argument)
  // Picks the next id from one row of logits (vocab entries). `context` is the token sequence
  // so far (prompt + output), used by the penalties.
  std::int32_t sample(std::span<const float> logits, std::span<const std::int32_t> context = {});
  // The distribution sample() draws from (stages 1-10), in ascending id order, summing to 1.
  // Greedy settings give one candidate with p = 1.
  void distribution(std::span<const float> logits, std::span<const std::int32_t> context,
                    std::vector<Candidate>& out);
  // Draws from a distribution (any order; walked as given). Consumes one uniform.
  std::int32_t draw(std::span<const Candidate> dist);
  // The next uniform in [0, 1) of the seeded stream (53 bits of mt19937_64, portable). A device
  // sampler takes its random numbers from here so a seed means the same on every backend.
  double next_uniform();
  // Stages 1-4 into `out` (a copy of `logits`); returns `logits` itself when none applies.
  std::span<const float> adjust(std::span<const float> logits, std::span<const std::int32_t> context,
                                std::vector<float>& out);
  const SamplerSettings& settings() const { return s_; }

 private:
  SamplerSettings s_;
  std::mt19937_64 rng_;
  std::vector<float> adjusted_;
  std::vector<Candidate> work_;
  std::vector<std::uint8_t> seen_;
};

std::int32_t argmax(std::span<const float> logits);

// Incremental text output with stop strings: feeds ids through a StreamDecoder, holds back text
// whose tail could be the start of a stop string until it is resolved, and cuts the text before
// the first stop string found (the stop string itself is never emitted). Matching runs on the
// decoded text, so a stop string split across any number of tokens is caught.
class TextStream {
 public:
  TextStream(std::shared_ptr<const Tokenizer> tokenizer, std::vector<std::string> stop_strings,
             bool skip_special = true);
  // Returns the text that became safe to emit with this id.
  std::string push(std::int32_t id);
  // End of generation without a stop string: everything still held.
  std::string flush();
  bool stopped() const { return stopped_; }
  const std::string& matched_stop() const { return matched_; }

 private:
  std::string release();
  StreamDecoder decoder_;
  std::vector<std::string> stops_;
  std::string held_;
  std::string matched_;
  bool stopped_ = false;
};

// Length of the longest suffix of `text` that is a proper prefix of `s` (0 = none).
std::size_t partial_match_tail(std::string_view text, std::string_view s);

struct GenerateOptions {
  int max_new_tokens = 128;
  bool ignore_eos = false;             // keep generating past EOS
  std::vector<std::int32_t> stop_ids;  // in addition to the tokenizer's EOS ids
  SamplerSettings sampler;
  int max_chunk_size = 2048;  // prefill runs in chunks of at most this many tokens
  // Prefix reuse: keep the cached K/V of the longest cached prefix of the prompt and prefill only
  // the rest (Backend::reuse_prefix); false: start from an empty cache.
  bool reuse_cache = true;
  // Additive fields (issue 5).
  std::vector<std::string> stop_strings;  // need a tokenizer
  bool skip_special = false;              // true: special tokens add no text to the stream
  // Speculative decoding: a draft backend (loaded, with its own cache, same vocabulary) proposes
  // `draft_tokens` tokens per target pass; or, with `ngram`, prompt-lookup drafting. 0 = off.
  Backend* draft = nullptr;
  int draft_tokens = 0;                // 0-16
  bool draft_greedy = true;            // draft proposes its arg-max (else samples with `sampler`)
  bool ngram = false;
  int max_ngram = 4;                   // n-gram order (context of max_ngram - 1 tokens)
};

enum class StopReason { max_tokens, eos, cancelled, cache_full, stop_string };
const char* stop_reason_name(StopReason r);

struct GenerateResult {
  std::vector<std::int32_t> ids;  // new ids (an EOS that stopped generation is not included;
                                  // the tokens that completed a stop string are)
  std::vector<bool> from_draft;   // per id: a drafted token the target accepted
  std::string text;               // the streamed text (cut before a stop string)
  int prompt_tokens = 0;
  int cached_tokens = 0;     // prompt tokens whose K/V were reused from the cache
  int prefilled_tokens = 0;  // prompt tokens run through the model (prompt - cached; fewer if cancelled)
  double prefill_seconds = 0;
  double decode_seconds = 0;
  int decoded_tokens = 0;          // tokens produced by decode steps (excludes the first, from prefill)
  StopReason stop = StopReason::max_tokens;
  // Speculative telemetry.
  int drafted_tokens = 0;
  int accepted_draft_tokens = 0;
  int rejected_draft_tokens = 0;
  int target_passes = 0;           // target forwards after prefill
  double acceptance_rate() const {
    return drafted_tokens > 0 ? double(accepted_draft_tokens) / drafted_tokens : 0.0;
  }
  double tokens_per_pass() const { return target_passes > 0 ? double(decoded_tokens) / target_passes : 0.0; }
  double prefill_tokens_per_s() const { return prefill_seconds > 0 ? prefilled_tokens / prefill_seconds : 0; }
  double decode_tokens_per_s() const { return decode_seconds > 0 ? decoded_tokens / decode_seconds : 0; }
};

// One streamed step: a new id, the text that became safe to show with it (possibly empty while
// held back), and whether it was an accepted draft token. After the last id, text still held
// back (when no stop string ended the generation) arrives in one event with id -1.
struct TokenEvent {
  std::int32_t id;
  std::string text;
  bool from_draft = false;
};
using TokenCallback = std::function<void(const TokenEvent&)>;

// One generation's decoding, a step at a time: the one implementation of the decode loop behind
// generate_stream() and the app's step-driven backend. start() reuses the longest cached prefix of
// the prompt and prefills the rest; then each step() is at most one target forward pass:
//  - the first step samples the first new id from the prefill's logits (no pass);
//  - a plain step forwards the pending id (the last of context()) and samples the next with
//    Backend::forward_sample (on the device where the backend can);
//  - a speculative step (a draft backend or n-gram lookup, draft_tokens > 0) drafts K ids, the
//    target verifies pending + K ids in one pass, accepts the longest greedy-matching prefix (or,
//    when sampling, by the rejection rule) and adds the correction or bonus id; the rejected ids'
//    cache entries are rolled back on both models.
// After every step the target's cache holds exactly context() less its last, pending id, so a
// caller may stop between any two steps and keep the cache for the next request.
class NgramDrafter;

struct DecodeStepResult {
  enum class End { more, stop_id, cache_full, caller };
  int produced = 0;   // ids handed to the callback, in order
  int drafted = 0;    // drafted ids the target verified in this step's pass
  int accepted = 0;   // of `drafted`: accepted by the target (the first `accepted` produced ids,
                      // and possibly a stop id that ended the step)
  bool target_pass = false;
  End end = End::more;  // more: step again; stop_id: an EOS/stop id came (not produced);
                        // cache_full: no room for another pass; caller: the callback said stop
};

class DecodeSession {
 public:
  // Receives each new id and whether it is an accepted draft; returns false to end generation
  // after this id.
  using IdCallback = std::function<bool(std::int32_t id, bool from_draft)>;

  // Checks the options (throws Error(invalid_argument)). Uses of GenerateOptions: sampler,
  // stop_ids (+ the tokenizer's EOS ids unless ignore_eos), max_chunk_size, reuse_cache, draft,
  // draft_tokens, draft_greedy, ngram, max_ngram. `tokenizer` may be null; it supplies the EOS ids
  // and the vocabulary limit of the sampler. The backends outlive the session.
  DecodeSession(Backend& target, const Tokenizer* tokenizer, const GenerateOptions& options);
  ~DecodeSession();
  DecodeSession(const DecodeSession&) = delete;
  DecodeSession& operator=(const DecodeSession&) = delete;

  // Reuses the cached prefix and prefills the rest of `prompt`; false when `stop` cancelled it
  // between chunks (the cache then holds a valid prefix of the prompt). A prompt that is empty,
  // holds ids outside the vocabulary or does not fit the context throws Error(invalid_argument).
  bool start(std::span<const std::int32_t> prompt, std::stop_token stop = {});
  // One step producing at most `max_ids` ids (>= 1; drafts are clamped to max_ids - 1).
  DecodeStepResult step(int max_ids, const IdCallback& on_id);

  const std::vector<std::int32_t>& context() const { return ctx_; }  // prompt + produced ids
  int cached_tokens() const { return cached_; }
  int prefilled_tokens() const { return prefilled_; }
  bool speculative() const { return speculate_; }
  // Running counters over the session's steps.
  int drafted_tokens() const { return drafted_; }
  int accepted_draft_tokens() const { return accepted_; }
  int rejected_draft_tokens() const { return drafted_ - accepted_; }
  int target_passes() const { return passes_; }

 private:
  bool produce(std::int32_t id, bool drafted, const IdCallback& on_id, DecodeStepResult& s);
  void draft_ids(int k);
  void verify(const IdCallback& on_id, DecodeStepResult& s);
  void rollback();

  Backend& target_;
  Backend* draft_;
  GenerateOptions o_;
  std::vector<std::int32_t> stop_ids_;
  Sampler sampler_;
  Sampler draft_sampler_;
  bool target_greedy_;
  bool speculate_;
  std::unique_ptr<NgramDrafter> ngram_;
  std::vector<std::int32_t> ctx_;
  std::vector<float> logits_, draft_logits_;
  std::vector<std::int32_t> drafts_, step_ids_;
  std::vector<std::vector<Candidate>> q_;  // draft distributions (sampled drafting only)
  std::vector<Candidate> p_, residual_;
  int cached_ = 0, prefilled_ = 0;
  int draft_len_ = 0;  // ids of ctx_ in the draft's cache
  bool started_ = false, first_done_ = false, ended_ = false;
  int drafted_ = 0, accepted_ = 0, passes_ = 0;
};

// Runs `ids` through the backend in chunks of at most `max_chunk`, returning the logits asked
// for by `wanted` of the last chunk (`all`: every position of every chunk, concatenated).
// `stop` is checked between chunks; returns the number of ids run (ids.size() unless stopped,
// and then the cache holds exactly the chunks that ran).
std::size_t prefill(Backend& backend, std::span<const std::int32_t> ids, int max_chunk, LogitsWanted wanted,
                    std::vector<float>& logits, std::stop_token stop = {});

// Generates a continuation of `prompt` (the whole token sequence: for a chat, every turn so far).
// The K/V of the longest cached prefix of the prompt are reused (GenerateOptions::reuse_cache;
// the draft model's cache likewise) and only the rest is prefilled, in chunks of max_chunk_size;
// GenerateResult reports cached_tokens and prefilled_tokens. A prompt that does not fit the
// context throws Error(invalid_argument). `on_token` receives each new id as it is produced;
// `stop` cancels between steps (prefill chunks and decode steps), leaving in the cache a valid
// prefix of the prompt and the output.
GenerateResult generate(Backend& backend, const Tokenizer* tokenizer, std::span<const std::int32_t> prompt,
                        const GenerateOptions& options,
                        const std::function<void(std::int32_t)>& on_token = {}, std::stop_token stop = {});

// The streaming form: events carry ids and text pieces (stop strings need `tokenizer`).
GenerateResult generate_stream(Backend& backend, std::shared_ptr<const Tokenizer> tokenizer,
                               std::span<const std::int32_t> prompt, const GenerateOptions& options,
                               const TokenCallback& on_event, std::stop_token stop = {});

// Throws Error(invalid_argument) unless the draft's vocabulary equals the target's: same size and
// the same piece for every id.
void check_draft_vocabulary(const Tokenizer& target, const Tokenizer& draft);

// Prompt-lookup drafting (spec §9.7): n-gram counts over the context, most frequent continuation
// of the longest matching suffix (max_ngram - 1 tokens down to 1), else a repeat of the last token.
class NgramDrafter {
 public:
  explicit NgramDrafter(int max_ngram = 4);
  void append(std::int32_t id);  // extends the context by one token
  void append(std::span<const std::int32_t> ids);
  std::vector<std::int32_t> draft(int k) const;
  std::span<const std::int32_t> context() const { return ctx_; }

 private:
  struct Node {
    std::vector<std::pair<std::int32_t, int>> counts;  // continuation id, occurrences
    std::int32_t best = -1;
    int best_count = 0;
  };
  int n_;
  std::vector<std::int32_t> ctx_;
  std::unordered_map<std::string, Node> table_;  // key: the raw bytes of 1..n-1 context ids
};

}  // namespace exl
