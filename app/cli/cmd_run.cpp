// exl logits / generate / ppl / bench: commands that run a model on a backend.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "exl/error.h"
#include "exl/generator.h"
#include "exl/log.h"
#include "exl/perplexity.h"
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

}  // namespace

int cmd_logits(const Args& a) {
  a.check_known(with_session_flags({"--ids", "--out"}));
  const auto ids32 = parse_ids(a.require("--ids"));
  if (ids32.empty()) throw Error(ErrorKind::invalid_argument, "no token ids given", "", "--ids");
  const std::string out = a.require("--out");
  Session s = open_session(a, int(ids32.size()));
  std::vector<std::int32_t> ids(ids32.begin(), ids32.end());
  std::vector<float> logits;
  prefill(*s.backend, ids, s.max_chunk, LogitsWanted::all, logits);
  std::ofstream f(out, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, "cannot write file", out);
  f.write(reinterpret_cast<const char*>(logits.data()), std::streamsize(logits.size() * sizeof(float)));
  if (!f) throw Error(ErrorKind::io, "write failed", out);
  std::fprintf(stderr, "wrote %zu x %d float32 logits to %s (%s)\n", ids.size(), s.backend->vocab_size(),
               out.c_str(), s.device_note.c_str());
  return 0;
}

static SamplerSettings sampler_from(const Args& a) {
  SamplerSettings ss;
  ss.greedy = a.has("--greedy") || !(a.has("--temperature") || a.has("--top-k") || a.has("--top-p") ||
                                     a.has("--min-p") || a.has("--seed"));
  ss.temperature = float(a.get_double("--temperature", 1.0));
  ss.top_k = a.get_int("--top-k", 0);
  ss.top_p = float(a.get_double("--top-p", 1.0));
  ss.min_p = float(a.get_double("--min-p", 0.0));
  ss.seed = std::uint64_t(a.get_int("--seed", 0));
  if (ss.temperature < 0) throw Error(ErrorKind::invalid_argument, "must be >= 0", "", "--temperature");
  if (ss.top_p <= 0 || ss.top_p > 1) throw Error(ErrorKind::invalid_argument, "must be in (0, 1]", "", "--top-p");
  return ss;
}

int cmd_generate(const Args& a) {
  a.check_known(with_session_flags({"--prompt", "--max-new-tokens", "--ignore-eos", "--greedy", "--temperature",
                                    "--top-k", "--top-p", "--min-p", "--seed", "--json", "--bos"}));
  const int n = a.get_int("--max-new-tokens", 128);
  if (n < 0) throw Error(ErrorKind::invalid_argument, "must be >= 0", "", "--max-new-tokens");
  Session s = open_session(a);
  const Tokenizer& tok = require_tokenizer(s);
  const std::string prompt = a.require("--prompt");
  const bool bos = a.has("--bos") || tok.add_bos_by_default();
  const auto ids = tok.encode(prompt, true, bos);
  GenerateOptions o;
  o.max_new_tokens = n;
  o.ignore_eos = a.has("--ignore-eos");
  o.sampler = sampler_from(a);
  o.max_chunk_size = s.max_chunk;
  const bool as_json = a.has("--json");
  StreamDecoder stream(s.model->tokenizer(), false);
  auto on_token = [&](std::int32_t id) {
    if (as_json) return;
    const std::string piece = stream.push(id);
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  };
  if (!as_json) {
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    std::fflush(stdout);
  }
  const GenerateResult r = generate(*s.backend, &tok, ids, o, on_token);
  if (as_json) {
    json j;
    j["ids"] = r.ids;
    j["text"] = r.text;
    j["prompt_tokens"] = r.prompt_tokens;
    j["prefill_tokens_per_s"] = r.prefill_tokens_per_s();
    j["decode_tokens_per_s"] = r.decode_tokens_per_s();
    j["device"] = s.backend->name();
    std::printf("%s\n", j.dump().c_str());
  } else {
    const std::string tail = stream.flush();
    std::fwrite(tail.data(), 1, tail.size(), stdout);
    std::fprintf(stdout, "\n");
    std::fprintf(stderr, "[%s] prompt %d tokens, %.1f tokens/s prefill; %zu new tokens, %.1f tokens/s decode\n",
                 s.backend->name().c_str(), r.prompt_tokens, r.prefill_tokens_per_s(), r.ids.size(),
                 r.decode_tokens_per_s());
  }
  return 0;
}

int cmd_ppl(const Args& a) {
  a.check_known(with_session_flags({"--text", "--window", "--tokens", "--json"}));
  const int window = a.get_int("--window", 512);
  Session s = open_session(a, window);
  const Tokenizer& tok = require_tokenizer(s);
  auto ids = tok.encode(read_file(a.require("--text")), false, false);
  const int limit = a.get_int("--tokens", 0);
  if (limit > 0 && std::size_t(limit) < ids.size()) ids.resize(std::size_t(limit));
  const PerplexityResult r = perplexity(*s.backend, ids, window, s.max_chunk);
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
  a.check_known(with_session_flags({"--prompt-tokens", "--gen-tokens", "--json", "--repeats"}));
  const int pt = a.get_int("--prompt-tokens", 512), gt = a.get_int("--gen-tokens", 128);
  const int repeats = std::max(1, a.get_int("--repeats", 3));
  Session s = open_session(a, pt + gt + 1);
  const int vocab = s.backend->vocab_size();
  std::vector<std::int32_t> prompt(static_cast<std::size_t>(pt));
  for (int i = 0; i < pt; ++i) prompt[std::size_t(i)] = std::int32_t((i * 7919 + 13) % vocab);
  GenerateOptions o;
  o.max_new_tokens = gt;
  o.ignore_eos = true;
  o.sampler.greedy = true;
  o.max_chunk_size = s.max_chunk;
  double best_prefill = 0, best_decode = 0;
  for (int r = 0; r < repeats; ++r) {
    const GenerateResult g = generate(*s.backend, nullptr, prompt, o);
    best_prefill = std::max(best_prefill, g.prefill_tokens_per_s());
    best_decode = std::max(best_decode, g.decode_tokens_per_s());
  }
  if (a.has("--json")) {
    json j{{"device", s.backend->name()}, {"prompt_tokens", pt}, {"gen_tokens", gt},
           {"prefill_tokens_per_s", best_prefill}, {"decode_tokens_per_s", best_decode},
           {"weights_bytes", s.backend->memory().weights_bytes}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: prefill %d tokens: %.1f tokens/s; decode %d tokens: %.1f tokens/s (best of %d)\n",
                s.backend->name().c_str(), pt, best_prefill, gt, best_decode, repeats);
  }
  return 0;
}

}  // namespace exl::cli
