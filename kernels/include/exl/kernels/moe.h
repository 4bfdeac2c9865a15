// Mixture-of-experts routing (Mixtral, Qwen3-MoE): which experts a token's MLP runs and with which
// weights. Plain fp32 on the host; tiny next to the experts' matmuls, so the reference is also
// what the CPU backend runs.
#pragma once
#include <cstdint>

namespace exl {

// For each of `tokens` rows of router logits [tokens, num_experts]: p = softmax(logits) in fp32,
// the top_k largest p in descending order (equal values: the lower expert index first, as
// torch.topk on the CPU orders them), their indices into experts[tokens, top_k] and their p into
// weights[tokens, top_k], divided by the chosen p's sum when `renormalize` (norm_topk_prob).
// A NaN logit sorts below every number. 1 <= top_k <= num_experts.
void moe_route_ref(const float* logits, int tokens, int num_experts, int top_k, bool renormalize, std::int32_t* experts,
                   float* weights);

}  // namespace exl
