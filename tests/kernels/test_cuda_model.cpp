// The CUDA backend end to end against the fixtures (same checks and tolerances as the CPU
// backend's: tests/engine/model_checks.h).
#include "exl/backend.h"
#include "exl_test.h"
#include "../engine/model_checks.h"

using exl::CacheType;
using namespace exl::test;

EXL_GPU_TEST(cuda_model, hf_ref_s_fp16_cache) { check_hf_logits("cuda", "ref-s", CacheType::fp16, 1e-3); }
EXL_GPU_TEST(cuda_model, logits_ref_s_3_0) { check_exl2_logits("cuda", "ref-s-3.0bpw"); }
EXL_GPU_TEST(cuda_model, logits_ref_s_4_0) { check_exl2_logits("cuda", "ref-s-4.0bpw"); }
EXL_GPU_TEST(cuda_model, logits_ref_s_6_0) { check_exl2_logits("cuda", "ref-s-6.0bpw"); }
EXL_GPU_TEST(cuda_model, logits_ref_xs_4_0) { check_exl2_logits("cuda", "ref-xs-4.0bpw"); }
EXL_GPU_TEST(cuda_model, long_prompt_single_forward) { check_long_prompt("cuda"); }
EXL_GPU_TEST(cuda_model, greedy_ref_s_4_0) { check_exl2_greedy("cuda", "ref-s-4.0bpw"); }
EXL_GPU_TEST(cuda_model, greedy_ref_xs_4_0) { check_exl2_greedy("cuda", "ref-xs-4.0bpw"); }
EXL_GPU_TEST(cuda_model, ppl_ref_s_4_0) { check_exl2_ppl("cuda", "ref-s-4.0bpw"); }
