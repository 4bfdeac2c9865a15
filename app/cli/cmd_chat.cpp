// `exl chat`: a multi-turn chat in the terminal. Each line on stdin is one user turn; the whole
// conversation is rendered with the model's chat template and tokenized every turn, and the
// generator reuses the cached K/V of the earlier turns, so only the new tokens are prefilled.
// The reply goes to stdout; the reused and prefilled token counts of each turn go to stderr
// (or, with --json, one JSON object per turn on stdout).
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "exl/chat_prompt.h"
#include "exl/error.h"
#include "exl/generator.h"
#include "session.h"

namespace exl::cli {
namespace {

}  // namespace

int cmd_chat(const Args& a) {
  std::set<std::string> known = {"--system", "--max-new-tokens", "--json"};
  for (const char* const* f = kSessionFlags; *f; ++f) known.insert(*f);
  for (const char* const* f = kSamplerFlags; *f; ++f) known.insert(*f);
  a.check_known(known);
  const int max_new = a.get_int("--max-new-tokens", 512);
  if (max_new <= 0) throw Error(ErrorKind::invalid_argument, "must be > 0", "", "--max-new-tokens");
  Session s = open_session(a);
  const auto tokenizer = s.model->tokenizer();
  if (!tokenizer)
    throw Error(ErrorKind::io, "the model folder has no tokenizer.json", s.model->config().dir.string());
  const ChatPrompt prompt(tokenizer, {}, {.chatml_fallback = true, .ensure_bos = true});
  if (prompt.uses_fallback()) std::fprintf(stderr, "[chat] the model ships no chat template; using ChatML\n");

  GenerateOptions o;
  o.max_new_tokens = max_new;
  o.sampler = sampler_from(a);
  o.max_chunk_size = s.max_chunk;
  o.skip_special = true;
  o.stop_ids = prompt.end_of_turn_ids();
  const bool as_json = a.has("--json");

  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (auto system = a.get("--system")) messages.push_back({{"role", "system"}, {"content", *system}});
  std::string line;
  for (int turn = 1; std::getline(std::cin, line); ++turn) {
    if (line.empty()) {
      --turn;
      continue;
    }
    messages.push_back({{"role", "user"}, {"content", line}});
    const std::vector<std::int32_t> ids = prompt.ids(messages);
    if (int(ids.size()) >= s.backend->cache_capacity()) {
      std::fprintf(stderr, "[chat] the conversation (%zu tokens) no longer fits the context of %d tokens\n",
                   ids.size(), s.backend->cache_capacity());
      return 1;
    }
    auto on_event = [&](const TokenEvent& e) {
      if (as_json) return;
      std::fwrite(e.text.data(), 1, e.text.size(), stdout);
      std::fflush(stdout);
    };
    const GenerateResult r = generate_stream(*s.backend, tokenizer, ids, o, on_event);
    messages.push_back({{"role", "assistant"}, {"content", r.text}});
    if (as_json) {
      const nlohmann::json j{{"turn", turn},
                             {"text", r.text},
                             {"prompt_tokens", r.prompt_tokens},
                             {"cached_tokens", r.cached_tokens},
                             {"prefilled_tokens", r.prefilled_tokens},
                             {"new_tokens", r.ids.size()},
                             {"stop_reason", stop_reason_name(r.stop)}};
      std::printf("%s\n", j.dump().c_str());
      std::fflush(stdout);
    } else {
      std::printf("\n");
      std::fflush(stdout);
      std::fprintf(stderr, "[chat] turn %d: %d prompt tokens, %d reused from the cache, %d prefilled; %zu new tokens, "
                   "%.1f tokens/s (%s)\n",
                   turn, r.prompt_tokens, r.cached_tokens, r.prefilled_tokens, r.ids.size(), r.decode_tokens_per_s(),
                   stop_reason_name(r.stop));
    }
  }
  return 0;
}

}  // namespace exl::cli
