# The EXL2 GEMV under the CUDA emulator (kernels/cuda/emu): GPU kernels run on the CPU, so ctest
# checks them without a GPU. Its own executable: the emulated CUDA runtime must not meet the real
# one (exl selftest loads the module).
if(TARGET exl_cuda_emu)
  add_executable(exl_emu_tests ${CMAKE_SOURCE_DIR}/tests/testlib/main.cpp ${CMAKE_CURRENT_LIST_DIR}/test_cuda_emu.cpp)
  target_link_libraries(exl_emu_tests PRIVATE exl_cuda_emu exl_testlib exl_kernels)
  target_include_directories(exl_emu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  exl_target_defaults(exl_emu_tests)
  add_test(NAME cuda_emu COMMAND exl_emu_tests --filter cuda_emu)
endif()

# The GPU suites' cases on the emulated module (libexl_cuda_emu.so through EXL_CUDA_EMU_MODULE):
# `exl selftest --device cuda` as on a GPU machine, a selection that stays within CI's time
# (about two minutes): the decode step against ExLlamaV2's greedy continuations, and the device
# sampler's row-wide selects (grid barriers) against the host sampler, the exact accumulators'
# conversions bit for bit.
if(TARGET exl_cuda_emu_module)
  function(exl_emu_selftest name filter)
    add_test(NAME ${name} COMMAND exl selftest --device cuda --filter ${filter})
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "EXL_CUDA_EMU_MODULE=$<TARGET_FILE:exl_cuda_emu_module>;${ARGN}"
      FAIL_REGULAR_EXPRESSION "GPU cases: skipped")
  endfunction()
  exl_emu_selftest(emu_selftest_kernels_small cuda_kernels.exl2_matmul_silu_gather)
  exl_emu_selftest(emu_selftest_rms_norm cuda_kernels.rms_norm)
  exl_emu_selftest(emu_selftest_logits_xs cuda_model.logits_ref_xs_4_0)
  exl_emu_selftest(emu_selftest_greedy_xs cuda_model.greedy_ref_xs_4_0 EXL_TEST_GREEDY_STEPS=16)  # 16 of 48 steps a prompt
  exl_emu_selftest(emu_selftest_sampler_rows cuda_kernels.sampler_rows_selects_small)
  exl_emu_selftest(emu_selftest_exact_acc cuda_kernels.exact_accumulators_round_trip)
  # EXL3: the kernels against kernels/reference (every codebook and rate), and the backend on a
  # random EXL3 model against the CPU backend and its dense twin, and the planner against what it allocates.
  exl_emu_selftest(emu_selftest_exl3_kernels cuda_kernels.exl3_*)
  exl_emu_selftest(emu_selftest_exl3_model cuda_model.exl3_*)
  # Model families (issue 47): the family kernels against kernels/reference (norms with fp32
  # weights, GeGLU, caps, partial rotary, attention with soft-caps and windows over every store),
  # and the five tiny family models end to end against transformers.
  exl_emu_selftest(emu_selftest_family_kernels cuda_kernels.family_*)
  exl_emu_selftest(emu_selftest_families cuda_families)
endif()
