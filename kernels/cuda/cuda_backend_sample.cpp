// CudaBackend's device-sampling step: forward of the decode token with the logits left on the
// device, then the device sampler (sampler.cu) on them; only the result is copied back. For one
// id with CUDA graphs on, the step and the sampler are one captured graph (the sampler's settings
// and lists are uploaded before each launch, so the graph's arguments never change).
#include <cstring>
#include <string>
#include <vector>

#include "cuda_backend.h"

namespace exl::cuda {

void CudaBackend::allocate_sampler() {
  sample_graph_.reset();
  sampler_.reset();
  if (!has_head_) return;  // a layer segment before the last one: no logits to sample
  // Penalty entries are distinct ids of the context, which is at most the cache plus the step.
  sampler_ = std::make_unique<DeviceSampler>(&alloc_, vocab_, capacity_ + 64);
}

void CudaBackend::forward_sample(const std::int32_t* ids, int n, const exl_cuda_sampler& smp,
                                 exl_cuda_sample_result* out) {
  EXL_CUDA_REQUIRE(has_head_, "forward_sample: this layer segment has no head (sample on the last segment)");
  EXL_CUDA_REQUIRE(loaded_ && capacity_ > 0 && sampler_, "forward_sample before load/allocate_cache");
  EXL_CUDA_REQUIRE(out, "forward_sample: null result");
  sampler_->stage(smp);  // validates before anything runs
  const cudaStream_t s = stream_->get();
  if (n != 1) {
    // Several ids (not the decode loop's case): the ordinary forward leaves the last position's
    // logits in row 0 of logits_; its host copy goes unused.
    std::vector<float> host(static_cast<std::size_t>(vocab_));
    forward(ids, n, 1, host.data());
    sampler_->enqueue_upload(s);
    sampler_->enqueue_sample(logits_.get<float>(), s);
    stream_->sync();
    *out = sampler_->result();
    return;
  }
  EXL_CUDA_REQUIRE(cache_len_ + 1 <= capacity_, "forward: the KV cache holds " + std::to_string(capacity_) + " tokens");
  EXL_CUDA_REQUIRE(ids && ids[0] >= 0 && ids[0] < vocab_,
                   "forward: token id " + std::to_string(ids ? ids[0] : -1) + " outside the vocabulary");
  use_device(opt_.device);
  std::memcpy(h_ids_.get(), ids, 4);
  h_step_.get<int>()[0] = cache_len_;
  // The decode step of forward() without the logits copy, then the sampler.
  auto enqueue_step = [&] {
    copy_logits_ = false;
    try {
      enqueue_decode_step();
    } catch (...) {
      copy_logits_ = true;
      throw;
    }
    copy_logits_ = true;
    sampler_->enqueue_sample(logits_.get<float>(), s);
  };
  sampler_->enqueue_upload(s);  // before the graph, in stream order
  if (opt_.cuda_graphs) {
    if (!sample_graph_.ready()) sample_graph_.capture(s, [&] { enqueue_step(); });
    sample_graph_.launch(s);
  } else {
    enqueue_step();
  }
  stream_->sync();
  *out = sampler_->result();
  cache_len_ += 1;
}

}  // namespace exl::cuda
