#include "session.h"

#include <algorithm>

#include "exl/error.h"

namespace exl::cli {

const char* const kSessionFlags[] = {"--model", "--device", "--cache", "--ctx", "--max-chunk", "--threads", nullptr};

Session open_session(const Args& a, int min_ctx) {
  Session s;
  s.model = Model::open(a.require("--model"));
  BackendOptions o;
  s.max_chunk = a.get_int("--max-chunk", 2048);
  if (s.max_chunk <= 0) throw Error(ErrorKind::invalid_argument, "must be positive", "", "--max-chunk");
  o.max_chunk_size = s.max_chunk;
  o.threads = a.get_int("--threads", 0);
  s.backend = make_backend(a.get_or("--device", "auto"), o, &s.device_note);
  s.backend->load(s.model);
  CacheOptions c;
  c.type = parse_cache_type(a.get_or("--cache", "fp16"));
  c.max_seq_len = a.get_int("--ctx", std::max(min_ctx, std::min(s.model->config().max_position_embeddings, 4096)));
  c.max_seq_len = std::max(c.max_seq_len, min_ctx);
  s.backend->allocate_cache(c);
  return s;
}

}  // namespace exl::cli
