// exl logits / generate / ppl / bench: commands that run a model on a backend.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "exl/chat_prompt.h"
#include "exl/error.h"
#include "exl/generator.h"
#include "exl/log.h"
#include "exl/perplexity.h"
#include "exl/synth.h"
#include "session.h"

namespace exl::cli {
namespace {

using nlohmann::json;

std::set<std::string> with_session_flags(std::set<std::string> flags) {
  for (const char* const* f = kSessionFlags; *f; ++f) flags.insert(*f);
  return flags;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, "cannot read file", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const Tokenizer& require_tokenizer(const Session& s) {
  if (!s.model->tokenizer())
    throw Error(ErrorKind::io, "the model folder has no tokenizer.json", s.model->config().dir.string());
  return *s.model->tokenizer();
}

// A synthetic model in a temporary folder, removed when this goes out of scope.
struct TempSynth {
  std::filesystem::path dir;
  void make(const std::string& preset, double bpw, int head_bits, std::uint64_t seed) {
    char name[128];
    std::snprintf(name, sizeof name, "exl-bench-%s-%.2f-%ld", preset.c_str(), bpw, long(::getpid()));
    dir = std::filesystem::temp_directory_path() / name;
    synth::SynthOptions o;
    o.preset = preset;
    o.bpw = bpw;
    o.head_bits = head_bits;
    o.seed = seed;
    o.output_dir = dir;
    std::fprintf(stderr, "exl bench: writing a synthetic %s at %.2f bpw to %s\n", preset.c_str(), bpw, dir.c_str());
    try {
      synth::synth_model(o);
    } catch (...) {
      dir.clear();
      throw;
    }
  }
  ~TempSynth() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

int cmd_logits(const Args& a) {
  a.check_known(with_session_flags({"--ids", "--out", "--step-last"}));
  const auto ids32 = parse_ids(a.require("--ids"));
  if (ids32.empty()) throw Error(ErrorKind::invalid_argument, "no token ids given", "", "--ids");
  const std::string out = a.require("--out");
  Session s = open_session(a, int(ids32.size()));
  std::vector<std::int32_t> ids(ids32.begin(), ids32.end());
  std::vector<float> logits;
  std::size_t rows = ids.size();
  if (a.has("--step-last")) {
    // Prefill all ids but the last through the cache, then forward the last alone: only its
    // logits are written (this reads the cache back, so it measures the cache type).
    prefill(*s.backend, std::span<const std::int32_t>(ids.data(), ids.size() - 1), s.max_chunk, LogitsWanted::none,
            logits);
    s.backend->forward(std::span<const std::int32_t>(&ids.back(), 1), LogitsWanted::last, logits);
    rows = 1;
  } else {
    prefill(*s.backend, ids, s.max_chunk, LogitsWanted::all, logits);
  }
  std::ofstream f(out, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, "cannot write file", out);
  f.write(reinterpret_cast<const char*>(logits.data()), std::streamsize(logits.size() * sizeof(float)));
  if (!f) throw Error(ErrorKind::io, "write failed", out);
  std::fprintf(stderr, "wrote %zu x %d float32 logits to %s (%s)\n", rows, s.backend->vocab_size(),
               out.c_str(), s.device_note.c_str());
  return 0;
}

// Splits a comma list; "\," keeps a comma, "\n" / "\t" / "\\" are escapes (for --stop).
static std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out(1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      const char n = text[++i];
      out.back() += n == 'n' ? '\n' : n == 't' ? '\t' : n;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  std::erase_if(out, [](const std::string& x) { return x.empty(); });
  return out;
}

static std::int32_t parse_token_id(const std::string& text, const char* flag) {
  try {
    std::size_t used = 0;
    const long v = std::stol(text, &used);
    if (used == text.size() && v >= 0 && v <= 0x7fffffff) return std::int32_t(v);
  } catch (const std::exception&) {
  }
  throw Error(ErrorKind::invalid_argument, "not a token id: '" + text + "'", "", flag);
}

// The first of several spellings that was given (ExLlamaV2-style names and the short ones).
static std::optional<std::string> any_of(const Args& a, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto v = a.get(n)) return v;
  return std::nullopt;
}

static double number(const Args& a, std::initializer_list<const char*> names, double fallback) {
  const auto v = any_of(a, names);
  if (!v) return fallback;
  try {
    std::size_t used = 0;
    const double d = std::stod(*v, &used);
    if (used == v->size()) return d;
  } catch (const std::exception&) {
  }
  throw Error(ErrorKind::invalid_argument, "not a number: '" + *v + "'", "", *names.begin());
}

const char* const kSamplerFlags[] = {"--greedy", "--temperature", "--top-k", "--top-p", "--min-p", "--seed",
                                     "--typical", "--repetition-penalty", "--rep-pen", "--frequency-penalty",
                                     "--freq-pen", "--presence-penalty", "--pres-pen", "--penalty-range",
                                     "--rep-pen-range", "--logit-bias", "--ban", "--ban-token", nullptr};

SamplerSettings sampler_from(const Args& a) {
  SamplerSettings ss;
  ss.greedy = a.has("--greedy") || !(a.has("--temperature") || a.has("--top-k") || a.has("--top-p") ||
                                     a.has("--min-p") || a.has("--seed") || a.has("--typical"));
  ss.temperature = float(a.get_double("--temperature", 1.0));
  ss.top_k = a.get_int("--top-k", 0);
  ss.top_p = float(a.get_double("--top-p", 1.0));
  ss.min_p = float(a.get_double("--min-p", 0.0));
  ss.seed = std::uint64_t(a.get_int("--seed", 0));
  ss.typical = float(a.get_double("--typical", 0.0));
  ss.repetition_penalty = float(number(a, {"--repetition-penalty", "--rep-pen"}, 1.0));
  ss.frequency_penalty = float(number(a, {"--frequency-penalty", "--freq-pen"}, 0.0));
  ss.presence_penalty = float(number(a, {"--presence-penalty", "--pres-pen"}, 0.0));
  ss.penalty_range = int(number(a, {"--penalty-range", "--rep-pen-range"}, -1));
  if (auto v = any_of(a, {"--ban", "--ban-token"}))
    for (const auto& id : split_list(*v)) ss.banned_tokens.push_back(parse_token_id(id, "--ban"));
  if (auto v = a.get("--logit-bias"))
    for (const auto& item : split_list(*v)) {
      const auto colon = item.find(':');
      if (colon == std::string::npos)
        throw Error(ErrorKind::invalid_argument, "expected ID:BIAS, got '" + item + "'", "", "--logit-bias");
      float bias = 0;
      try {
        bias = std::stof(item.substr(colon + 1));
      } catch (const std::exception&) {
        throw Error(ErrorKind::invalid_argument, "bad bias in '" + item + "'", "", "--logit-bias");
      }
      ss.logit_bias.emplace_back(parse_token_id(item.substr(0, colon), "--logit-bias"), bias);
    }
  if (ss.temperature < 0) throw Error(ErrorKind::invalid_argument, "must be >= 0", "", "--temperature");
  if (ss.top_p <= 0 || ss.top_p > 1) throw Error(ErrorKind::invalid_argument, "must be in (0, 1]", "", "--top-p");
  ss.validate();
  return ss;
}

// A draft model on the target's device (a split: its GPU with the most free memory, or
// --draft-device), with a cache as long as the target's.
struct DraftSession {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Backend> backend;
};

static DraftSession open_draft(const Args& a, const Session& s, const std::string& dir) {
  DraftSession d;
  d.model = Model::open(dir);
  if (!d.model->tokenizer() || !s.model->tokenizer())
    throw Error(ErrorKind::invalid_argument, "draft and target both need a tokenizer.json", dir, "--draft-model");
  check_draft_vocabulary(*s.model->tokenizer(), *d.model->tokenizer());
  BackendOptions o;
  o.max_chunk_size = s.max_chunk;
  o.threads = a.get_int("--threads", 0);
  o.deterministic = !a.has("--nondeterministic");
  d.backend = make_backend(a.get_or("--draft-device", draft_device(*s.backend)), o);
  d.backend->load(d.model);
  CacheOptions c;
  c.type = parse_cache_type(a.get_or("--cache", "fp16"));
  c.max_seq_len = s.backend->cache_capacity();
  d.backend->allocate_cache(c);
  return d;
}

int cmd_generate(const Args& a) {
  a.check_known(with_session_flags(
      {"--prompt", "--max-new-tokens", "--ignore-eos", "--greedy", "--temperature", "--top-k", "--top-p", "--min-p",
       "--seed", "--json", "--bos", "--typical", "--repetition-penalty", "--rep-pen", "--frequency-penalty",
       "--freq-pen", "--presence-penalty", "--pres-pen", "--penalty-range", "--rep-pen-range", "--logit-bias", "--ban",
       "--ban-token", "--stop", "--draft-model", "--draft", "--draft-device", "--draft-tokens", "--ngram", "--ngram-tokens", "--chat", "--system"}));
  const int n = a.get_int("--max-new-tokens", 128);
  if (n < 0) throw Error(ErrorKind::invalid_argument, "must be >= 0", "", "--max-new-tokens");
  Session s = open_session(a);
  const Tokenizer& tok = require_tokenizer(s);
  const std::string prompt = a.require("--prompt");
  // --chat: the prompt is one user turn (after --system, if given) in the model's chat template.
  const bool chat = a.has("--chat");
  if (!chat && a.has("--system")) throw Error(ErrorKind::invalid_argument, "needs --chat", "", "--system");
  const bool bos = a.has("--bos") || tok.add_bos_by_default();
  std::optional<ChatPrompt> chat_prompt;
  if (chat) chat_prompt.emplace(s.model->tokenizer(), std::string(), ChatPromptOptions{.chatml_fallback = true, .ensure_bos = true});
  const auto ids = chat ? chat_prompt->ids(ChatPrompt::single_turn(prompt, a.get_or("--system", "")))
                        : tok.encode(prompt, true, bos);
  GenerateOptions o;
  if (chat) o.stop_ids = chat_prompt->end_of_turn_ids();
  o.max_new_tokens = n;
  o.ignore_eos = a.has("--ignore-eos");
  o.sampler = sampler_from(a);
  o.max_chunk_size = s.max_chunk;
  if (auto v = a.get("--stop")) o.stop_strings = split_list(*v);
  DraftSession draft;
  if (auto dir = any_of(a, {"--draft-model", "--draft"})) {
    draft = open_draft(a, s, *dir);
    o.draft = draft.backend.get();
    o.draft_tokens = a.get_int("--draft-tokens", 4);
  }
  if (auto k = any_of(a, {"--ngram", "--ngram-tokens"})) {
    if (o.draft) throw Error(ErrorKind::invalid_argument, "use either --draft-model or --ngram", "", "--ngram");
    o.ngram = true;
    o.draft_tokens = int(number(a, {"--ngram", "--ngram-tokens"}, 4));
  }
  const bool as_json = a.has("--json");
  auto on_event = [&](const TokenEvent& e) {
    if (as_json) return;
    std::fwrite(e.text.data(), 1, e.text.size(), stdout);
    std::fflush(stdout);
  };
  if (!as_json && !chat) {  // a chat reply is shown without the templated prompt
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    std::fflush(stdout);
  }
  if (chat) o.skip_special = true;
  const GenerateResult r = generate_stream(*s.backend, s.model->tokenizer(), ids, o, on_event);
  if (as_json) {
    json j;
    j["ids"] = r.ids;
    j["text"] = r.text;
    j["prompt_tokens"] = r.prompt_tokens;
    j["cached_tokens"] = r.cached_tokens;
    j["prefilled_tokens"] = r.prefilled_tokens;
    j["prefill_tokens_per_s"] = r.prefill_tokens_per_s();
    j["decode_tokens_per_s"] = r.decode_tokens_per_s();
    j["device"] = s.backend->name();
    j["stop_reason"] = stop_reason_name(r.stop);
    if (o.draft || o.ngram) {
      j["accepted_draft_tokens"] = r.accepted_draft_tokens;
      j["rejected_draft_tokens"] = r.rejected_draft_tokens;
      j["acceptance_rate"] = r.acceptance_rate();
      j["draft"] = {{"mode", o.ngram ? "ngram" : "model"},
                    {"draft_tokens", o.draft_tokens},
                    {"drafted", r.drafted_tokens},
                    {"accepted", r.accepted_draft_tokens},
                    {"acceptance_rate", r.acceptance_rate()},
                    {"tokens_per_pass", r.tokens_per_pass()}};
      j["accepted"] = r.from_draft;
    }
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::fprintf(stdout, "\n");
    std::fprintf(stderr, "[%s] prompt %d tokens, %.1f tokens/s prefill; %zu new tokens, %.1f tokens/s decode (%s)\n",
                 s.backend->name().c_str(), r.prompt_tokens, r.prefill_tokens_per_s(), r.ids.size(),
                 r.decode_tokens_per_s(), stop_reason_name(r.stop));
    if (o.draft || o.ngram)
      std::fprintf(stderr, "[draft] %d drafted, %d accepted (%.1f %%), %.2f tokens per target pass\n",
                   r.drafted_tokens, r.accepted_draft_tokens, 100.0 * r.acceptance_rate(), r.tokens_per_pass());
  }
  return 0;
}

int cmd_ppl(const Args& a) {
  a.check_known(with_session_flags({"--text", "--window", "--tokens", "--json", "--token-by-token"}));
  const int window = a.get_int("--window", 512);
  Session s = open_session(a, window);
  const Tokenizer& tok = require_tokenizer(s);
  auto ids = tok.encode(read_file(a.require("--text")), false, false);
  const int limit = a.get_int("--tokens", 0);
  if (limit > 0 && std::size_t(limit) < ids.size()) ids.resize(std::size_t(limit));
  const PerplexityResult r = perplexity(*s.backend, ids, window, s.max_chunk, a.has("--token-by-token"));
  if (a.has("--json")) {
    json j{{"ppl", r.ppl}, {"mean_nll", r.mean_nll}, {"n_predictions", r.n_predictions},
           {"window_mean_nll", r.window_mean_nll}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("perplexity %.4f (mean NLL %.5f over %lld predictions, %zu windows of %d)\n", r.ppl, r.mean_nll,
                (long long)r.n_predictions, r.window_mean_nll.size(), window);
  }
  return 0;
}

int cmd_bench(const Args& a) {
  a.check_known(with_session_flags({"--prompt-tokens", "--gen-tokens", "--json", "--repeats", "--synth", "--bpw",
                                    "--head-bits", "--seed"}));
  const int pt = a.get_int("--prompt-tokens", 512), gt = a.get_int("--gen-tokens", 128);
  const int repeats = std::max(1, a.get_int("--repeats", 3));
  // --synth: the random model is written to a temporary folder (removed on exit), not built in
  // device memory directly: the loader then runs exactly as for a real model.
  TempSynth synth;
  if (auto preset = a.get("--synth")) {
    if (a.has("--model")) throw Error(ErrorKind::invalid_argument, "use either -m DIR or --synth PRESET", "", "--synth");
    synth.make(*preset, a.get_double("--bpw", 4.0), a.get_int("--head-bits", 6), std::uint64_t(a.get_int("--seed", 1)));
  }
  Session s = open_session(a, pt + gt + 1, synth.dir.string());
  const int vocab = s.backend->vocab_size();
  std::vector<std::int32_t> prompt(static_cast<std::size_t>(pt));
  for (int i = 0; i < pt; ++i) prompt[std::size_t(i)] = std::int32_t((i * 7919 + 13) % vocab);
  GenerateOptions o;
  o.max_new_tokens = gt;
  o.ignore_eos = true;
  o.sampler.greedy = true;
  o.max_chunk_size = s.max_chunk;
  o.reuse_cache = false;  // every repeat prefills the whole prompt
  double best_prefill = 0, best_decode = 0;
  for (int r = 0; r < repeats; ++r) {
    const GenerateResult g = generate(*s.backend, nullptr, prompt, o);
    best_prefill = std::max(best_prefill, g.prefill_tokens_per_s());
    best_decode = std::max(best_decode, g.decode_tokens_per_s());
  }
  if (a.has("--json")) {
    const MemoryStats mem = s.backend->memory();
    json j{{"device", s.backend->name()}, {"prompt_tokens", pt}, {"gen_tokens", gt},
           {"prefill_tokens_per_s", best_prefill}, {"decode_tokens_per_s", best_decode},
           {"weights_bytes", mem.weights_bytes}, {"cache_bytes", mem.cache_bytes}, {"scratch_bytes", mem.scratch_bytes},
           {"device_used_bytes", mem.device_total - mem.device_free}};
    // Each device of a layer split (one entry without a split).
    json per = json::array();
    for (const DeviceMemoryStats& d : mem.devices)
      per.push_back({{"device", d.device}, {"first_layer", d.first_layer}, {"layers", d.layers},
                     {"weights_bytes", d.weights_bytes}, {"cache_bytes", d.cache_bytes},
                     {"scratch_bytes", d.scratch_bytes}, {"device_used_bytes", d.device_total - d.device_free}});
    j["devices"] = per;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: prefill %d tokens: %.1f tokens/s; decode %d tokens: %.1f tokens/s (best of %d)\n",
                s.backend->name().c_str(), pt, best_prefill, gt, best_decode, repeats);
    const MemoryStats mem = s.backend->memory();
    if (mem.devices.size() > 1)
      for (const DeviceMemoryStats& d : mem.devices)
        std::printf("  cuda:%d layers %d-%d: weights %.0f MiB, cache %.0f MiB, scratch %.0f MiB; device %.0f of %.0f MiB used\n",
                    d.device, d.first_layer, d.first_layer + d.layers - 1, d.weights_bytes / 1048576.0,
                    d.cache_bytes / 1048576.0, d.scratch_bytes / 1048576.0,
                    (d.device_total - d.device_free) / 1048576.0, d.device_total / 1048576.0);
  }
  return 0;
}

}  // namespace exl::cli
