// Backends work in model-level steps, not single ops: a backend loads the weights into its own
// layout (it may repack, fuse, shuffle), owns the KV cache, and runs whole forward chunks.
// CpuBackend implements it from kernels/cpu; the CUDA backend lives in the exl_cuda module and
// is reached through a proxy that implements this same interface.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace exl {

class Model;
class Sampler;
class Backend;

// Host implementation of Backend::forward_sample (defined with the sampler).
std::int32_t host_forward_sample(Backend& backend, std::span<const std::int32_t> ids, Sampler& sampler,
                                 std::span<const std::int32_t> context);

enum class CacheType : std::uint8_t { fp32, fp16, fp8, q8, q6, q4 };
const char* cache_type_name(CacheType t);
CacheType parse_cache_type(const std::string& s);  // "fp16", "fp32", "fp8", "q8", "q6", "q4"; throws

struct CacheOptions {
  int max_seq_len = 2048;  // the context: tokens one sequence may hold
  CacheType type = CacheType::fp16;
  // Separate key / value widths overriding `type` (0 = from `type`): 4, 8 (Q4/Q8 blocks) or 16.
  int k_bits = 0;
  int v_bits = 0;
  // Paged cache (spec §6.1, §9.3): K/V in pages of 256 tokens, so the prefixes of earlier
  // requests stay cached and are reused by reuse_prefix(). false: one contiguous sequence.
  // Backends without paging ignore it and keep one contiguous sequence.
  bool paged = true;
  // Tokens of K/V the paged cache keeps in all (the active sequence and cached prefixes), rounded
  // up to whole pages; 0 = max_seq_len. Unreferenced pages are evicted least recently used first.
  int cache_tokens = 0;
};

// One device's share of a layer split (BackendOptions::split).
struct LayerSegment {
  int device = 0;              // CUDA device ordinal (the same device may appear twice: tests)
  int layers = 0;              // decoder layers, following the previous segment's; 0 in the last: the rest
  std::uint64_t vram_limit = 0;  // bytes this segment may allocate on its device (0: no limit)
};

struct BackendOptions {
  int max_chunk_size = 2048;  // longest forward chunk; longer inputs are split by the caller
  int threads = 0;            // CPU backend: 0 = all cores
  int device = 0;             // CUDA device ordinal
  bool cuda_graphs = true;    // CUDA backend: capture the decode step
  // CUDA backend: sum the quantized matmul's partial results in a fixed order, so a seed repeats a
  // generation exactly (false: fp32 atomics, about 10 % faster decode, last bits vary per run).
  bool deterministic = true;
  // CUDA backend: bytes it may allocate on the device (0: no limit); loading past it fails cleanly.
  std::uint64_t vram_limit = 0;
  // CUDA backend, layer split over devices (ExLlamaV2's gpu_split, resolved by the VRAM planner:
  // exl::plan::split_segments): segment i holds the next `layers` decoder layers and their KV
  // cache on its device, the embedding sits with the first, the final norm and head with the last;
  // the hidden state goes from one to the next peer to peer, or through pinned host memory where
  // peer access is missing. Empty: `device` holds everything.
  std::vector<LayerSegment> split;
  bool split_via_host = false;  // hand the hidden state over through pinned host memory even where peer copies work
};

enum class LogitsWanted : std::uint8_t { none, last, all };

// What one device of a backend holds (a layer split lists each of its devices).
struct DeviceMemoryStats {
  int device = 0;
  int first_layer = 0, layers = 0;  // the decoder layers placed there
  std::uint64_t weights_bytes = 0, cache_bytes = 0, scratch_bytes = 0;
  std::uint64_t device_total = 0, device_free = 0;
};

struct MemoryStats {
  std::uint64_t weights_bytes = 0;  // all devices together
  std::uint64_t cache_bytes = 0;
  std::uint64_t scratch_bytes = 0;
  std::uint64_t device_total = 0;  // 0 on the CPU; a split: summed over its distinct devices
  std::uint64_t device_free = 0;
  std::vector<DeviceMemoryStats> devices;  // per segment (CUDA backend); empty on the CPU
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda:0"

  // Loads the weights of `model` into the backend's own layout. The model outlives the backend.
  virtual void load(std::shared_ptr<const Model> model) = 0;
  // (Re)allocates the KV cache; its contents are discarded.
  virtual void allocate_cache(const CacheOptions& options) = 0;
  virtual int cache_capacity() const = 0;
  // Tokens currently held in the cache; the next forward() starts at this position.
  virtual int cache_length() const = 0;
  // Forgets positions >= length (rewind after rejected draft tokens or an edited conversation).
  virtual void truncate_cache(int length) = 0;
  // Prefix reuse: starts a new sequence for `tokens` in the cache, keeping the K/V of its longest
  // cached prefix of at most `max_reuse` tokens, and returns that length (= cache_length()); the
  // caller runs forward() on the rest. A paged backend finds the prefix among all cached pages
  // (earlier requests, shared system prompts; the previous sequence's pages stay cached); a
  // backend without paging keeps the common prefix of the one sequence it holds. This default
  // keeps nothing (always correct).
  virtual int reuse_prefix(std::span<const std::int32_t> tokens, int max_reuse) {
    (void)tokens;
    (void)max_reuse;
    truncate_cache(0);
    return 0;
  }

  // Runs `ids` (at most BackendOptions::max_chunk_size) at positions cache_length() ...
  // cache_length() + n - 1, appends their keys/values to the cache, and writes fp32 logits:
  // `all`: [n, vocab]; `last`: [1, vocab]; `none`: nothing (prefill of an earlier chunk).
  // A decode step is forward of one id; verifying K drafted tokens is forward of K+1 ids with `all`.
  virtual void forward(std::span<const std::int32_t> ids, LogitsWanted wanted, std::vector<float>& logits) = 0;

  virtual int vocab_size() const = 0;
  virtual MemoryStats memory() const = 0;

  // Device-sampling extension point: forward(ids) and pick the next id from the last position's
  // logits with `sampler` (its settings, and its random stream through Sampler::next_uniform(),
  // one uniform per non-greedy draw), penalties over `context` (prompt + output so far). A backend
  // that samples on the device overrides this (and samples_on_device) so that only the id leaves
  // the device; the default copies the logits row and samples on the host. The result must equal
  // the host sampler's for the same logits and seed, up to floating-point ties.
  virtual std::int32_t forward_sample(std::span<const std::int32_t> ids, Sampler& sampler,
                                      std::span<const std::int32_t> context) {
    return host_forward_sample(*this, ids, sampler, context);
  }
  virtual bool samples_on_device() const { return false; }
};

// The CPU backend (always available).
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options);

}  // namespace exl

namespace exl {

// Makes a backend from a device string: "cpu", "cuda", "cuda:N", or "auto" (the GPU when the
// CUDA module loads and a device is present, else the CPU). `note` receives a human-readable
// line saying what was chosen and, for "auto" on the CPU, why no GPU was used.
std::unique_ptr<Backend> make_backend(const std::string& device, const BackendOptions& options,
                                      std::string* note = nullptr);

// Where a draft model goes beside `target`: the target's device, or for a layer split the GPU of
// the split with the most free memory ("cpu", "cuda:N").
std::string draft_device(const Backend& target);

}  // namespace exl
