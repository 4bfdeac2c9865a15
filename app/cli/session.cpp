#include "session.h"

#include <algorithm>
#include <cstdio>

#include "exl/error.h"
#include "exl/plan.h"
#if defined(EXL_HAVE_CUDA_LOADER)
#include "exl/cuda.h"
#endif

namespace exl::cli {

const char* const kSessionFlags[] = {"--model", "--device", "--cache", "--cache-k", "--cache-v", "-c8",  "-cq4",
                                    "-cq6",    "-cq8",     "--ctx",   "--max-chunk", "--threads", "--nondeterministic",
                                    "--gpu-split", "-gs", "--auto-split", "--layer-split", "--split-via-host",
                                    "--vram-limit", nullptr};

// --cache TYPE, or ExLlamaV2's switches -c8 (FP8), -cq4, -cq6, -cq8.
static CacheType cache_type_from(const Args& a) {
  if (a.has("-c8")) return CacheType::fp8;
  if (a.has("-cq4")) return CacheType::q4;
  if (a.has("-cq6")) return CacheType::q6;
  if (a.has("-cq8")) return CacheType::q8;
  return parse_cache_type(a.get_or("--cache", "fp16"));
}

// The layer split the flags ask for: --layer-split D:N,... as given; -gs/--gpu-split GiB,... (per
// device, in order) or --auto-split through the VRAM planner over the visible GPUs. Empty: none.
static std::vector<LayerSegment> split_from(const Args& a, const std::string& dir, const CacheOptions& c,
                                            int max_chunk) {
  const auto gs = a.has("--gpu-split") ? a.get("--gpu-split") : a.get("-gs");
  const int given = int(a.has("--layer-split")) + int(gs.has_value()) + int(a.has("--auto-split"));
  if (given > 1)
    throw Error(ErrorKind::invalid_argument, "use one of --layer-split, --gpu-split (-gs) and --auto-split", "",
                "--gpu-split");
  if (auto ls = a.get("--layer-split")) return plan::parse_layer_split(*ls);
  if (given == 0) return {};
  plan::PlanOptions po;
#if defined(EXL_HAVE_CUDA_LOADER)
  for (const CudaDeviceInfo& d : cuda_devices()) {
    po.gpus.push_back(plan::gpu_spec_for_device(d.name, d.total_bytes, d.peak_bandwidth_gbs));
    if (po.gpus.size() == 1) po.sm_count = d.sm_count;
  }
#else
  throw Error(ErrorKind::device, "a GPU split needs the CUDA backend; this build has none", "", "--gpu-split");
#endif
  po.layout = plan::Layout::engine;
  po.context = c.max_seq_len;
  po.cache = plan::cache_spec(c);
  po.max_chunk = max_chunk;
  return plan::resolve_split(gs ? *gs : "auto", plan::shape_from_folder(dir, po.layout), po);
}

Session open_session(const Args& a, int min_ctx, const std::string& model_dir, bool ctx_flag) {
  Session s;
  const std::string dir = model_dir.empty() ? a.require("--model") : model_dir;
  s.model = Model::open(dir);
  BackendOptions o;
  s.max_chunk = a.get_int("--max-chunk", 2048);
  if (s.max_chunk <= 0) throw Error(ErrorKind::invalid_argument, "must be positive", "", "--max-chunk");
  o.max_chunk_size = s.max_chunk;
  o.threads = a.get_int("--threads", 0);
  o.deterministic = !a.has("--nondeterministic");
  const double limit_gib = a.get_double("--vram-limit", 0.0);
  if (limit_gib < 0) throw Error(ErrorKind::invalid_argument, "must be >= 0 GiB", "", "--vram-limit");
  o.vram_limit = std::uint64_t(limit_gib * double(1ull << 30));
  CacheOptions c;
  c.type = cache_type_from(a);
  c.k_bits = a.get_int("--cache-k", 0);
  c.v_bits = a.get_int("--cache-v", 0);
  const int fallback = std::max(min_ctx, std::min(s.model->config().max_position_embeddings, 4096));
  c.max_seq_len = ctx_flag ? a.get_int("--ctx", fallback) : fallback;
  c.max_seq_len = std::max(c.max_seq_len, min_ctx);
  o.split = split_from(a, dir, c, s.max_chunk);
  for (LayerSegment& g : o.split)  // --vram-limit caps each segment the split does not cap itself
    if (g.vram_limit == 0) g.vram_limit = o.vram_limit;
  o.split_via_host = a.has("--split-via-host");
  s.backend = make_backend(a.get_or("--device", o.split.empty() ? "auto" : "cuda"), o, &s.device_note);
  // Running on the CPU because the GPU is unusable: say why (what is missing, how to get it).
  if (s.device_note.find("no usable GPU") != std::string::npos) std::fprintf(stderr, "exl: %s\n", s.device_note.c_str());
  s.backend->load(s.model);  // (checks that the split places every layer)
  if (!o.split.empty()) {
    std::string line = "layer split:";
    int first = 0;
    for (const LayerSegment& g : o.split) {
      const int last = g.layers > 0 ? first + g.layers - 1 : s.model->config().num_layers - 1;
      line += " cuda:" + std::to_string(g.device) + " layers " + std::to_string(first) + "-" + std::to_string(last);
      if (g.vram_limit) line += " (" + std::to_string(g.vram_limit >> 20) + " MiB)";
      first = last + 1;
    }
    std::fprintf(stderr, "exl: %s\n", line.c_str());
  }
  s.backend->allocate_cache(c);
  s.cache = c;
  return s;
}

}  // namespace exl::cli
