#include "session.h"

#include <algorithm>
#include <cstdio>

#include "exl/error.h"

namespace exl::cli {

const char* const kSessionFlags[] = {"--model", "--device", "--cache", "--cache-k", "--cache-v", "-c8",  "-cq4",
                                    "-cq6",    "-cq8",     "--ctx",   "--max-chunk", "--threads", "--nondeterministic", nullptr};

// --cache TYPE, or ExLlamaV2's switches -c8 (FP8), -cq4, -cq6, -cq8.
static CacheType cache_type_from(const Args& a) {
  if (a.has("-c8")) return CacheType::fp8;
  if (a.has("-cq4")) return CacheType::q4;
  if (a.has("-cq6")) return CacheType::q6;
  if (a.has("-cq8")) return CacheType::q8;
  return parse_cache_type(a.get_or("--cache", "fp16"));
}

Session open_session(const Args& a, int min_ctx, const std::string& model_dir) {
  Session s;
  s.model = Model::open(model_dir.empty() ? a.require("--model") : model_dir);
  BackendOptions o;
  s.max_chunk = a.get_int("--max-chunk", 2048);
  if (s.max_chunk <= 0) throw Error(ErrorKind::invalid_argument, "must be positive", "", "--max-chunk");
  o.max_chunk_size = s.max_chunk;
  o.threads = a.get_int("--threads", 0);
  o.deterministic = !a.has("--nondeterministic");
  s.backend = make_backend(a.get_or("--device", "auto"), o, &s.device_note);
  // Running on the CPU because the GPU is unusable: say why (what is missing, how to get it).
  if (s.device_note.find("no usable GPU") != std::string::npos) std::fprintf(stderr, "exl: %s\n", s.device_note.c_str());
  s.backend->load(s.model);
  CacheOptions c;
  c.type = cache_type_from(a);
  c.k_bits = a.get_int("--cache-k", 0);
  c.v_bits = a.get_int("--cache-v", 0);
  c.max_seq_len = a.get_int("--ctx", std::max(min_ctx, std::min(s.model->config().max_position_embeddings, 4096)));
  c.max_seq_len = std::max(c.max_seq_len, min_ctx);
  s.backend->allocate_cache(c);
  return s;
}

}  // namespace exl::cli
