// The VRAM planner and bandwidth-bound throughput model (spec §8, §6.4, §5.5, §7.6): "does it fit,
// and how fast will it be", computed before loading, without a GPU.
//
// Two layouts are modelled:
//  * engine    - what our CUDA backend (kernels/cuda) allocates: the FP16 embedding on the device,
//                EXL2 tensors in 64-column tiles with an int32 permutation and an 8-byte unit table per 32
//                rows instead of q_groups, fp32 biases, fp16 norms, the fp16 KV cache, the scratch
//                of CudaBackend::allocate_scratch, a 32 MiB cuBLAS workspace and the CUDA context.
//  * exllamav2 - ExLlamaV2's own estimate (§8.6): header bytes less the embedding (kept in host
//                RAM), §5.5 scratch, §6.4 cache with the temp pair, RoPE tables, logits, 192 MiB.
// Sizes are bytes; GPU memory sizes in the table are MiB as the driver reports them.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "exl/backend.h"
#include "exl/model_config.h"

namespace exl::plan {

inline constexpr std::uint64_t kMiB = 1ull << 20;
inline constexpr std::uint64_t kGiB = 1ull << 30;

enum class Layout : std::uint8_t { engine, exllamav2 };
const char* layout_name(Layout l);
Layout parse_layout(const std::string& s);  // "engine" | "exllamav2"; throws invalid_argument

// ---- GPUs ----

struct GpuSpec {
  std::string name;              // "GeForce RTX 4090"
  std::uint64_t memory_mib = 0;  // total device memory as reported by the driver
  double bandwidth_gbs = 0.0;    // peak memory bandwidth, GB/s (1e9 bytes)
  double fp16_tflops = 0.0;      // dense FP16 tensor rate with FP32 accumulation
  std::uint64_t context_mib = 0; // CUDA context + module images (0: default for the family)
  std::uint64_t total_bytes() const { return memory_mib * kMiB; }
};

const std::vector<GpuSpec>& builtin_gpus();
// Case-insensitive; ignores "NVIDIA"/"GeForce" prefixes and spaces ("rtx4090", "4090", "H200").
// Looks in `extra` first. Throws Error(invalid_argument) listing close names when unknown.
GpuSpec find_gpu(const std::string& name, const std::vector<GpuSpec>& extra = {});
// A GPU present on this machine as the planner sees it: the table's entry for its name (bandwidth,
// tensor rate, CUDA context size) where there is one, with the memory the driver reports; the
// driver's bandwidth figure where the table has none. The app's fit, its load and `exl -gs` plan
// the same way through it.
GpuSpec gpu_spec_for_device(const std::string& name, std::uint64_t total_bytes, double driver_bandwidth_gbs);
// A JSON file: [{"name": ..., "memory_mib" or "memory_gb": ..., "bandwidth_gbs": ..., "fp16_tflops": ...}].
// Throws Error(io/format/config) naming the file and the entry.
std::vector<GpuSpec> load_gpu_file(const std::filesystem::path& path);

// ---- the model ----

// One EXL2 group option (§7.3): `proportion` of the rows at `bits` with groups of `group_size`.
struct QuantPart {
  int bits = 4;
  double proportion = 1.0;
  int group_size = 128;
};
// Total stored bits of one EXL2 linear per §7.6 (k rows, n columns padded to 32, optional bias).
std::uint64_t exl2_linear_bits(std::int64_t k, std::int64_t n, const std::vector<QuantPart>& option, bool bias);
double exl2_linear_bpw(std::int64_t k, std::int64_t n, const std::vector<QuantPart>& option, bool bias);
// The head option of §7.3 for head_bits 2..8 (6 = default). Throws for other values.
std::vector<QuantPart> head_option(int head_bits);

// Bytes of one decoder layer or of the head as placed on the device, and read per decode step.
struct ModuleBytes {
  std::uint64_t device = 0;    // resident bytes (engine: buffer sizes before allocator rounding)
  std::uint64_t read = 0;      // bytes read per decoded token
  std::vector<std::uint64_t> buffers;  // each device allocation (for allocator rounding)
  std::uint64_t max_dq_elems = 0;      // largest EXL2 k * n_pad among the module's linears
  std::vector<std::pair<int, int>> exl3;  // (k, n) of each EXL3 linear, padded (scratch sizes)
  std::int64_t params = 0;             // logical weights of the module's linears (FLOP count)
};

struct ModelShape {
  std::string name;
  ModelConfig config;
  bool exact = false;                 // weights from safetensors headers (an EXL2/HF folder)
  double decoder_bpw = 0.0;           // target or measured
  int head_bits = 0;                  // 0: FP16 head
  std::vector<ModuleBytes> layers;    // per decoder layer
  ModuleBytes head;                   // lm_head (+ final norm)
  ModuleBytes embedding;              // FP16 table (device in engine layout, host RAM in exllamav2)
  std::uint64_t header_bytes = 0;     // sum of every tensor's bytes in the headers (exact only)
  std::uint64_t embedding_header_bytes = 0;
  std::int64_t linear_params = 0;     // decoder linears + head (for the prefill FLOP count)
};

// Real shapes of well-known models ("llama3-8b", "llama3-70b", "llama3.2-1b", "mistral-7b",
// "qwen2.5-7b", "tinyllama-1.1b"; plus "test-tiny" and "test-tiny-qwen2" for tests), with their
// RoPE base/scaling and norm epsilon. Throws Error(invalid_argument) listing the names when unknown.
ModelConfig preset_config(const std::string& name);
std::vector<std::string> preset_names();

// An EXL2 (or FP16) folder: exact bytes from the safetensors headers.
ModelShape shape_from_folder(const std::filesystem::path& dir, Layout layout);
// The quantized format of a what-if plan. automatic: EXL3 when the config's quantization_config
// says quant_method "exl3", else EXL2.
enum class QuantFormat : std::uint8_t { automatic, exl2, exl3 };
// "What if": a config quantized to `bpw` (decoder, overhead included as §7.6) with `head_bits`
// (0 = FP16 head). EXL3: features padded to 128, trellis at bpw, fp16 suh/svh, bpw 1.0 .. 8.0.
ModelShape shape_from_config(const ModelConfig& config, double bpw, int head_bits, Layout layout,
                             QuantFormat format = QuantFormat::automatic);

// ---- cache ----

struct CacheSpec {
  int k_bits = 16;   // 32, 16, 8, 6?, 4: 16/32 float; 8 with fp8 = E5M2; else Q (§6.3)
  int v_bits = 16;
  bool fp8 = false;
  std::string name = "fp16";
  bool quantized() const { return !fp8 && k_bits < 16; }
};
// "fp16", "fp32", "fp8", "q8", "q6" (k8v4), "q4", "k8v4", "k4v8", "k8v8", ... Throws invalid_argument.
CacheSpec parse_cache(const std::string& s);
// The cache a backend allocates for `options`: its type, with --cache-k/--cache-v widths (4, 8, 16)
// overriding the key's or value's (an FP8 type overridden on one side is planned as Q8 there).
CacheSpec cache_spec(const CacheOptions& options);
// K+V bytes per token per layer (§6.4): 4D (fp16), 2D (fp8), D*(kb+vb)/8 + scales 2*(D/32)*2 (Q).
double cache_bytes_per_token_layer(const ModelConfig& c, const CacheSpec& cache);
// Tokens the cache really holds: whole pages of 256 (both layouts; a page is whole Q blocks, §6.3).
std::int64_t cache_tokens(const ModelConfig& c, const CacheSpec& cache, std::int64_t context, Layout layout);

// ---- the plan ----

struct PlanOptions {
  Layout layout = Layout::engine;
  std::int64_t context = 4096;
  CacheSpec cache;
  int batch = 1;
  int max_chunk = 2048;
  int sm_count = 132;                 // multiprocessors (sizes the engine's decode attention partials)
  std::vector<GpuSpec> gpus;          // at least one
  std::vector<double> gpu_split_gb;   // manual: GiB per device for everything placed there; empty = auto
  std::uint64_t reserve_first = 192 * kMiB;  // automatic split: kept free on GPU 0 ...
  std::uint64_t reserve_other = 64 * kMiB;   // ... and on every other GPU
  std::uint64_t fragmentation_margin = 64 * kMiB;  // stated slack per device holding layers
  std::uint64_t alloc_granularity = 2 * kMiB;      // device allocations of at least this size round up to it
  int draft_tokens = 4;               // K drafted tokens per verification
  double draft_acceptance = 0.7;      // a: probability each drafted token is accepted
};

struct DeviceComponents {
  std::uint64_t weights = 0, embedding = 0, head = 0, cache = 0, cache_temp = 0, scratch = 0, rope = 0,
                logits = 0, cublas = 0, context = 0, rounding = 0, margin = 0, draft = 0;
};

struct DevicePlan {
  GpuSpec gpu;
  int first_layer = -1, last_layer = -1;  // inclusive; -1 when none
  bool has_head = false;
  DeviceComponents parts;
  std::uint64_t weights_bytes = 0, cache_bytes = 0, scratch_bytes = 0, overhead_bytes = 0;
  std::uint64_t used_bytes = 0;
  std::int64_t free_bytes = 0;            // total - used (negative: does not fit)
  std::uint64_t budget_bytes = 0;         // manual split allowance (0: auto)
};

enum class Verdict : std::uint8_t { fits, tight, does_not_fit };
const char* verdict_name(Verdict v);

struct ThroughputPoint {
  std::int64_t position = 0;
  std::uint64_t bytes_per_token = 0;
  double tokens_per_s = 0.0;              // batch * bandwidth / bytes (slowest device dominates)
};

struct Plan {
  std::vector<DevicePlan> devices;
  bool fits = false;
  Verdict verdict = Verdict::does_not_fit;
  std::int64_t margin_bytes = 0;          // smallest free_bytes over the devices
  std::string problem;                    // why it does not fit (empty when it fits)
  std::uint64_t host_bytes = 0;           // host RAM for tables kept off the device
  std::int64_t cache_tokens = 0;
  std::uint64_t bytes_per_token = 0;      // at the full context
  double decode_bound_tokens_per_s = 0.0; // at the full context
  double decode_bound_empty = 0.0;        // at position 0
  double prefill_bound_tokens_per_s = 0.0;
  double speculative_tokens_per_s = 0.0;  // with a draft model (0 without)
  int draft_device = -1;                  // the GPU the draft model goes on (-1: none)
  std::vector<ThroughputPoint> line;
};

// Places the model (and the optional draft, with its own cache, on the GPU holding layers that has the
// most free memory once the model is placed, as exl::draft_device chooses at load) on the GPUs. Never throws
// for "does not fit": the Plan says so. Throws Error(invalid_argument) for bad options.
Plan make_plan(const ModelShape& model, const PlanOptions& options, const ModelShape* draft = nullptr);

// Scratch bytes of one device holding layers (engine: CudaBackend::allocate_scratch; exllamav2: §5.5).
// head = false: a device of a layer split without the head (no logits, no device sampler).
std::uint64_t scratch_bytes(const ModelShape& model, const PlanOptions& options, std::int64_t cache_tokens,
                            std::vector<std::uint64_t>* buffers = nullptr, bool head = true);
// The part of scratch_bytes that only the device holding the head allocates (engine layout).
std::uint64_t head_scratch_bytes(const ModelShape& model, const PlanOptions& options, std::int64_t cache_tokens,
                                 std::vector<std::uint64_t>* buffers = nullptr);

// Decode bytes read per token at `position` (weights once, every sequence's cache to `position`).
std::uint64_t decode_bytes_per_token(const ModelShape& model, const PlanOptions& options, std::int64_t position);
// tokens/s <= batch * bandwidth / bytes.
double decode_bound(double bandwidth_gbs, std::uint64_t bytes_per_token, int batch = 1);
// System memory's copy bandwidth in GB/s (bytes read plus bytes written), measured once per process
// on a buffer well past the caches (the median of a few copies): the bandwidth of the CPU backend's
// bound, the same in `exl bench`, `exl fit`, the app's memory fit and its telemetry.
double host_copy_bandwidth_gbs();
// Speculative decoding: expected accepted tokens per cycle (1 - a^(K+1)) / (1 - a) over the time of K
// draft steps plus one target step, each bandwidth-bound.
double speculative_bound(double target_step_s, double draft_step_s, int k, double a);

// Solvers. Return 0 when nothing fits.
std::int64_t max_context(const ModelShape& model, const PlanOptions& options, const ModelShape* draft = nullptr);
// Highest decoder bpw in [2, 8] (steps of 0.01) that fits at options.context, for model's config.
double max_bpw(const ModelShape& model, const PlanOptions& options, const ModelShape* draft = nullptr);

// The runtime layer split of a plan (BackendOptions::split): one segment per GPU that holds layers,
// in order, on CUDA device devices[i] for options.gpus[i] (empty: i), with the manual split's
// allowance as its VRAM limit. Throws Error(invalid_argument) with the plan's problem when it does
// not fit, or when the plan leaves GPU 0 without layers or puts the head on a GPU after the last
// layer's (the backend keeps the embedding with the first layer and the head with the last).
std::vector<LayerSegment> split_segments(const Plan& plan, const std::vector<int>& devices = {});
// A split as users write it: "" (none), "auto" (fill options.gpus in order, keeping the reserves) or
// GiB per GPU "20,23" (ExLlamaV2's gpu_split; fewer values than GPUs use the first ones), placed by
// make_plan on options.gpus (the GPUs present, in CUDA order) and returned as split_segments. Empty
// for "". Throws Error(invalid_argument) naming the problem (bad number, more values than GPUs,
// does not fit).
std::vector<LayerSegment> resolve_split(const std::string& text, const ModelShape& model, PlanOptions options);
// The parsing half of resolve_split: sets options.gpu_split_gb (and keeps the GPUs it names) for a
// manual split, nothing for "auto" or "". Throws as resolve_split.
void apply_split(const std::string& text, PlanOptions& options);

// Parses an explicit split "D:N,D:N,..." (CUDA device D holds the next N layers; N 0 or omitted in
// the last entry: the rest), e.g. "0:12,0" for two segments on one GPU. Throws invalid_argument.
std::vector<LayerSegment> parse_layer_split(const std::string& text);

// The JSON the app and `exl fit --json` read (schema "exl.plan/1").
std::string plan_to_json(const ModelShape& model, const PlanOptions& options, const Plan& plan,
                         std::int64_t max_ctx, double max_bpw_value, const ModelShape* draft = nullptr);

}  // namespace exl::plan
