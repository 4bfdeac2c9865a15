// The CPU backend against the fixtures' reference outputs (HF fp32 and ExLlamaV2).
#include "exl/backend.h"
#include "model_checks.h"
#include "exl_test.h"

using exl::CacheType;
using namespace exl::test;

EXL_TEST(model_hf, ref_s_fp32_cache) { check_hf_logits("cpu", "ref-s", CacheType::fp32, 1e-4); }
EXL_TEST(model_hf, ref_s_fp16_cache) { check_hf_logits("cpu", "ref-s", CacheType::fp16, 1e-3); }
EXL_TEST(model_hf, ref_xs_fp32_cache) { check_hf_logits("cpu", "ref-xs", CacheType::fp32, 1e-4); }
EXL_TEST(model_hf, ref_xs_fp16_cache) { check_hf_logits("cpu", "ref-xs", CacheType::fp16, 1e-3); }

EXL_TEST(model_exl2, logits_ref_s_3_0) { check_exl2_logits("cpu", "ref-s-3.0bpw"); }
EXL_TEST(model_exl2, logits_ref_s_4_0) { check_exl2_logits("cpu", "ref-s-4.0bpw"); }
EXL_TEST(model_exl2, logits_ref_s_6_0) { check_exl2_logits("cpu", "ref-s-6.0bpw"); }
EXL_TEST(model_exl2, logits_ref_xs_4_0) { check_exl2_logits("cpu", "ref-xs-4.0bpw"); }
EXL_TEST(model_exl2, long_prompt_single_forward) { check_long_prompt("cpu"); }

EXL_TEST(generate_exl2, greedy_ref_s_3_0) { check_exl2_greedy("cpu", "ref-s-3.0bpw"); }
EXL_TEST(generate_exl2, greedy_ref_s_4_0) { check_exl2_greedy("cpu", "ref-s-4.0bpw"); }
EXL_TEST(generate_exl2, greedy_ref_s_6_0) { check_exl2_greedy("cpu", "ref-s-6.0bpw"); }
EXL_TEST(generate_exl2, greedy_ref_xs_4_0) { check_exl2_greedy("cpu", "ref-xs-4.0bpw"); }

EXL_TEST(ppl_exl2, ref_s_3_0) { check_exl2_ppl("cpu", "ref-s-3.0bpw"); }
EXL_TEST(ppl_exl2, ref_s_4_0) { check_exl2_ppl("cpu", "ref-s-4.0bpw"); }
EXL_TEST(ppl_exl2, ref_s_6_0) { check_exl2_ppl("cpu", "ref-s-6.0bpw"); }
EXL_TEST(ppl_exl2, ref_xs_4_0) { check_exl2_ppl("cpu", "ref-xs-4.0bpw"); }
