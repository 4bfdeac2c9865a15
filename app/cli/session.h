// Shared set-up of the commands that run a model: open the folder, make the backend the
// --device flag asks for, allocate the cache.
#pragma once
#include <memory>
#include <string>

#include "args.h"
#include "exl/backend.h"
#include "exl/generator.h"
#include "exl/model.h"

namespace exl::cli {

struct Session {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Backend> backend;
  int max_chunk = 2048;
  std::string device_note;
  CacheOptions cache;  // as allocated
};

// Flags: -m/--model DIR, --device cpu|cuda[:N]|auto, --cache fp16|fp32|fp8|q8|q6|q4 (or -c8, -cq4,
// -cq6, -cq8), --cache-k/--cache-v BITS (4, 8, 16), --ctx N,
// --max-chunk N, --threads N, --nondeterministic. `min_ctx` raises the context to what the command needs.
// `model_dir` (when not empty) replaces -m/--model.
// `ctx_flag` false: --ctx means something else to the command (exl bench's decode contexts); the
// context is then min_ctx.
Session open_session(const Args& a, int min_ctx = 0, const std::string& model_dir = {}, bool ctx_flag = true);

// The flags open_session reads (for Args::check_known).
extern const char* const kSessionFlags[];

// Sampler settings from --greedy, --temperature, --top-k, --top-p, --min-p, --seed, --typical,
// the penalty flags, --ban and --logit-bias (greedy unless a sampling flag is given).
// seed_counts: whether --seed alone asks for sampling (bench keeps it as the synthetic model's seed).
SamplerSettings sampler_from(const Args& a, bool seed_counts = true);
// Those flags' names (for Args::check_known).
extern const char* const kSamplerFlags[];

}  // namespace exl::cli
