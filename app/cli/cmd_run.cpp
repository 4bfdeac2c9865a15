// exl logits / generate / ppl / bench: commands that run a model on a backend.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <chrono>
#include <cstdio>
#include <cstring>
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
#include "exl/plan.h"
#include "exl/synth.h"
#include "session.h"
#if defined(EXL_HAVE_CUDA_LOADER)
#include "exl/cuda.h"
#endif

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
  void make(const std::string& preset, double bpw, int head_bits, std::uint64_t seed, synth::SynthFormat format) {
    const char* fmt = format == synth::SynthFormat::exl3 ? "exl3" : "exl2";
    char name[160];
    std::snprintf(name, sizeof name, "exl-bench-%s-%s-%.2f-%ld", preset.c_str(), fmt, bpw, long(::getpid()));
    dir = std::filesystem::temp_directory_path() / name;
    synth::SynthOptions o;
    o.preset = preset;
    o.bpw = bpw;
    o.head_bits = head_bits;
    o.seed = seed;
    o.output_dir = dir;
    o.format = format;
    std::fprintf(stderr, "exl bench: writing a synthetic %s %s at %.2f bpw to %s\n", fmt, preset.c_str(), bpw, dir.c_str());
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

// Whether the flags ask for sampling rather than the arg-max (a filter or a temperature; for
// generate a --seed too, which bench keeps as its synthetic model's seed).
static bool asks_sampling(const Args& a, bool seed_counts) {
  return a.has("--temperature") || a.has("--top-k") || a.has("--top-p") || a.has("--min-p") || a.has("--typical") ||
         (seed_counts && a.has("--seed"));
}

SamplerSettings sampler_from(const Args& a, bool seed_counts) {
  SamplerSettings ss;
  ss.greedy = a.has("--greedy") || !asks_sampling(a, seed_counts);
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

namespace {

// "512,2048" -> {512, 2048}; each entry a whole number in [lo, hi].
std::vector<int> int_list(const std::string& text, const char* flag, int lo, int hi) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string v = text.substr(pos, comma - pos);
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) < lo ||
        std::stoi(v) > hi)
      throw Error(ErrorKind::invalid_argument,
                  "'" + v + "' is not a whole number in " + std::to_string(lo) + ".." + std::to_string(hi), "", flag);
    out.push_back(std::stoi(v));
    pos = comma + 1;
  }
  return out;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::uint64_t used_device_bytes(const MemoryStats& m) {
  if (m.device_total == 0) return m.weights_bytes + m.cache_bytes + m.scratch_bytes;  // the CPU backend's own
  return m.device_total - std::min(m.device_free, m.device_total);
}

}  // namespace

// exl bench: prefill per prompt length (with the time to the first token) and decode per context,
// each beside its bound: prefill <= FP16 tensor rate / (2 x linear weights), decode <= copy
// bandwidth / bytes read per token (weights once plus the KV cache to that position, the planner's
// count). Rates are measured on the device at the start; timings are medians.
int cmd_bench(const Args& a) {
  // The sampler flags of `generate` too: decode is timed as generation samples (greedy unless a
  // sampling flag is given; --seed alone stays the synthetic model's seed).
  std::set<std::string> flags{"--prompt", "--prompt-tokens", "--gen", "--gen-tokens", "--json", "--repeats",
                              "--synth", "--bpw", "--head-bits", "--seed", "--format"};
  for (const char* const* f = kSamplerFlags; *f; ++f) flags.insert(*f);
  a.check_known(with_session_flags(flags));
  const std::vector<int> prompts =
      int_list(a.get_or("--prompt", a.get_or("--prompt-tokens", "512")), "--prompt", 1, 1 << 20);
  const std::vector<int> contexts = int_list(a.get_or("--ctx", "0"), "--ctx", 0, 1 << 22);
  const int gen = a.get_int("--gen", a.get_int("--gen-tokens", 128));
  if (gen < 4 || gen > 65536) throw Error(ErrorKind::invalid_argument, "must be in 4..65536", "", "--gen");
  const int repeats = std::max(1, a.get_int("--repeats", 3));
  // --synth: the random model is written to a temporary folder (removed on exit), not built in
  // device memory directly: the loader then runs exactly as for a real model.
  TempSynth synth;
  if (auto preset = a.get("--synth")) {
    if (a.has("--model")) throw Error(ErrorKind::invalid_argument, "use either -m DIR or --synth PRESET", "", "--synth");
    synth.make(*preset, a.get_double("--bpw", 4.0), a.get_int("--head-bits", 6), std::uint64_t(a.get_int("--seed", 1)),
               synth_format(a));
  }
  const std::string dir = synth.dir.empty() ? a.require("--model") : synth.dir.string();
  const int longest = std::max(*std::max_element(prompts.begin(), prompts.end()),
                               *std::max_element(contexts.begin(), contexts.end()) + gen);
  Session s = open_session(a, longest + 1, dir, false);
  Backend& b = *s.backend;
  const MemoryStats m0 = b.memory();
  const bool gpu = !m0.devices.empty();

  // The rates the bounds use, measured here.
  double copy_gbs = 0.0, tflops = 0.0;
  if (gpu) {
#if defined(EXL_HAVE_CUDA_LOADER)
    const CudaDeviceRates r = cuda_device_rates(m0.devices.front().device);
    copy_gbs = r.copy_gbs;
    tflops = r.fp16_tflops;
#endif
  } else {
    copy_gbs = plan::host_copy_bandwidth_gbs();  // no tensor-core rate on the CPU: prefill has no bound there
  }
  plan::PlanOptions po;
  po.layout = plan::Layout::engine;
  po.cache = plan::cache_spec(s.cache);
  const plan::ModelShape shape = plan::shape_from_folder(dir, po.layout);

  const int vocab = b.vocab_size();
  std::vector<std::int32_t> ids(static_cast<std::size_t>(longest));
  for (int i = 0; i < longest; ++i) ids[std::size_t(i)] = std::int32_t((std::int64_t(i) * 7919 + 13) % vocab);
  std::uint64_t peak = used_device_bytes(m0);
  std::vector<float> logits;

  struct PrefillRow { int tokens; double tokens_per_s, bound, ttft_ms; };
  std::vector<PrefillRow> pre;
  for (int p : prompts) {
    std::vector<double> t;
    for (int r = 0; r < repeats + 1; ++r) {  // the first is a warm-up
      b.truncate_cache(0);
      const auto t0 = std::chrono::steady_clock::now();
      prefill(b, std::span<const std::int32_t>(ids.data(), std::size_t(p)), s.max_chunk, LogitsWanted::last, logits);
      (void)std::max_element(logits.begin(), logits.end());  // the first token, as the host would pick it
      if (r > 0) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double sec = median_of(t);
    const double bound = tflops > 0 ? tflops * 1e12 / (2.0 * double(shape.linear_params)) : 0.0;
    pre.push_back({p, p / sec, bound, sec * 1e3});
    peak = std::max(peak, used_device_bytes(b.memory()));
  }

  struct DecodeRow { int context; double tokens_per_s; std::uint64_t bytes; double bound; };
  std::vector<DecodeRow> dec;
  const SamplerSettings sampling = sampler_from(a, false);
  for (int c : contexts) {
    b.truncate_cache(0);
    std::vector<std::int32_t> ctx(ids.begin(), ids.begin() + c);
    if (c > 0) prefill(b, ctx, s.max_chunk, LogitsWanted::none, logits);
    ctx.push_back(ids[std::size_t(c)]);
    Sampler sampler(sampling);
    std::vector<double> t;
    for (int g = 0; g < gen; ++g) {  // as a generation does: sampling on the device where it can
      const auto t0 = std::chrono::steady_clock::now();
      const std::int32_t next = b.forward_sample(std::span<const std::int32_t>(&ctx.back(), 1), sampler, ctx);
      if (g >= 3) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      ctx.push_back(next);
    }
    const std::uint64_t bytes = plan::decode_bytes_per_token(shape, po, c + gen / 2);
    dec.push_back({c, 1.0 / median_of(t), bytes, copy_gbs * 1e9 / double(bytes)});
    peak = std::max(peak, used_device_bytes(b.memory()));
  }

  const MemoryStats mem = b.memory();
  auto pct = [](double v, double bound) { return bound > 0 ? 100.0 * v / bound : 0.0; };
  if (a.has("--json")) {
    json jp = json::array(), jd = json::array(), per = json::array();
    for (const PrefillRow& r : pre)
      jp.push_back({{"tokens", r.tokens}, {"tokens_per_s", r.tokens_per_s}, {"bound_tokens_per_s", r.bound},
                    {"percent_of_bound", pct(r.tokens_per_s, r.bound)}, {"time_to_first_token_ms", r.ttft_ms}});
    for (const DecodeRow& r : dec)
      jd.push_back({{"context", r.context}, {"tokens_per_s", r.tokens_per_s}, {"bytes_per_token", r.bytes},
                    {"bound_tokens_per_s", r.bound}, {"percent_of_bound", pct(r.tokens_per_s, r.bound)}});
    // Each device of a layer split (one entry without a split).
    for (const DeviceMemoryStats& d : mem.devices)
      per.push_back({{"device", d.device}, {"first_layer", d.first_layer}, {"layers", d.layers},
                     {"weights_bytes", d.weights_bytes}, {"cache_bytes", d.cache_bytes},
                     {"scratch_bytes", d.scratch_bytes}, {"device_used_bytes", d.device_total - d.device_free}});
    json j{{"device", b.name()}, {"copy_bandwidth_gbs", copy_gbs}, {"fp16_tflops", tflops}, {"gen_tokens", gen},
           {"sampling", sampling.is_greedy() ? "greedy" : "sampled"},
           {"prefill", jp}, {"decode", jd}, {"peak_vram_bytes", peak},
           // the first prompt length and context, as single figures
           {"prompt_tokens", pre.front().tokens}, {"prefill_tokens_per_s", pre.front().tokens_per_s},
           {"decode_tokens_per_s", dec.front().tokens_per_s},
           {"weights_bytes", mem.weights_bytes}, {"cache_bytes", mem.cache_bytes}, {"scratch_bytes", mem.scratch_bytes},
           {"device_used_bytes", used_device_bytes(mem)}, {"devices", per}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s: copy bandwidth %.0f GB/s%s (measured)\n", b.name().c_str(), copy_gbs,
              tflops > 0 ? (", FP16 tensor rate " + std::to_string(int(tflops + 0.5)) + " TFLOP/s").c_str() : "");
  for (const PrefillRow& r : pre) {
    std::printf("prefill %6d tokens: %9.1f tokens/s", r.tokens, r.tokens_per_s);
    if (r.bound > 0) std::printf("  bound %9.1f  %5.1f %%", r.bound, pct(r.tokens_per_s, r.bound));
    std::printf("  time to first token %.1f ms\n", r.ttft_ms);
  }
  for (const DecodeRow& r : dec)
    std::printf("decode at %6d: %9.1f tokens/s  bound %9.1f  %5.1f %%  (%.3f GB read per token%s)\n", r.context,
                r.tokens_per_s, r.bound, pct(r.tokens_per_s, r.bound), r.bytes / 1e9,
                sampling.is_greedy() ? "" : "; sampled");
  std::printf("peak memory %.2f GiB (weights %.2f, cache %.2f, scratch %.2f GiB)\n", peak / 1073741824.0,
              mem.weights_bytes / 1073741824.0, mem.cache_bytes / 1073741824.0, mem.scratch_bytes / 1073741824.0);
  if (mem.devices.size() > 1)
    for (const DeviceMemoryStats& d : mem.devices)
      std::printf("  cuda:%d layers %d-%d: weights %.0f MiB, cache %.0f MiB, scratch %.0f MiB; device %.0f of %.0f MiB used\n",
                  d.device, d.first_layer, d.first_layer + d.layers - 1, d.weights_bytes / 1048576.0,
                  d.cache_bytes / 1048576.0, d.scratch_bytes / 1048576.0,
                  (d.device_total - d.device_free) / 1048576.0, d.device_total / 1048576.0);
  return 0;
}

}  // namespace exl::cli
