// The device sampler (issue 5): every stage of the host sampler (exl/generator.h, SamplerSettings)
// on one fp32 logits row that is already on the device; only a 12-byte result comes back.
// Three launches with fixed arguments for every setting (the settings and lists are read from a
// device blob that is uploaded before them), so they can sit in the decode CUDA graph: a block
// per slice of 1024 ids for the edits, each slice's arg-max and a small top-k's candidates; a grid
// of slice blocks (at most one per multiprocessor, meeting at grid barriers) for the
// row-wide selects of top-p, typical and a top-k above 512 and the slices' sums of the kept
// weight; one block for greedy, the draw (only the slice it lands in is scanned) and a top-k of
// at most 512 (sampler.cu). All memory is allocated at construction (allocate_cache); staging and
// launching allocate nothing.
#pragma once
#include <cstddef>
#include <cstdint>

#include "device_memory.h"
#include "module_api.h"

namespace exl::cuda {

// The scalar part of the device blob (followed by the lists, see sampler.cu).
struct SamplerParams {
  double uniform;
  float temperature, top_p, min_p, typical;
  float repetition_penalty, frequency_penalty, presence_penalty;
  int greedy, top_k, vocab_limit;
  int num_penalty, num_banned, num_bias;
  int write_dist;  // 1: leave the kept, normalised distribution in the work buffer (tests)
  int pad_;
};

struct SamplerResult {
  int id;
  int candidates;
  float p;
};

class DeviceSampler {
 public:
  // `max_penalty`: most distinct penalty ids per step (the cache length).
  DeviceSampler(Allocator* a, int vocab, int max_penalty);

  // Checks `s` and packs it into pinned staging (host only; no CUDA call). Throws on bad input.
  void stage(const exl_cuda_sampler& s, bool write_dist = false);
  // Enqueues the copy of the staged blob to the device (before the sampling launch or graph).
  void enqueue_upload(cudaStream_t s) const;
  // Enqueues the sampler on `logits` ([vocab] fp32 on the device; penalties, bans and bias are
  // applied in place) and the copy of the result to pinned memory. Fixed arguments: capturable.
  void enqueue_sample(float* logits, cudaStream_t s) const;
  // After the stream has synchronised.
  exl_cuda_sample_result result() const;
  // The work buffer ([vocab] fp32): the kept distribution after a write_dist launch.
  const float* dist_device() const { return e_.get<float>(); }

  static constexpr int k_threads = 512;  // the last launch's block

 private:
  int vocab_ = 0, max_penalty_ = 0;
  int rows_grid_ = 1;  // the second launch's blocks (at most one per multiprocessor)
  std::size_t staged_bytes_ = 0;
  DeviceBuffer blob_, e_, keys_, cand_, result_;
  PinnedBuffer h_blob_, h_result_;
};

// Bytes of the blob header (SamplerParams rounded up to 16).
constexpr std::size_t sampler_header_bytes() { return (sizeof(SamplerParams) + 15) / 16 * 16; }
// Bytes of the candidate buffer (sampler.cu): the first launch's candidate logits and ids, 32
// bytes per slice of 1024 ids, then the second launch's scratch: 64 bytes (state, barrier
// counter), 9 global histograms of 2048 u64, and per slice a last-digit histogram of 1024 u64 and
// two fp64 sums. The VRAM planner counts the same (plan/cache_scratch.cpp).
constexpr std::size_t candidate_bytes(int vocab) {
  const std::size_t slices = std::size_t((vocab + 1023) / 1024);
  return std::size_t(vocab) * 8 + slices * 32 + 64 + 9 * 2048 * 8 + slices * (1024 * 8 + 16);
}

}  // namespace exl::cuda
