# The decode pipeline and the EXL2 GEMV under the CUDA emulator (kernels/cuda/emu): GPU kernels
# run on the CPU, so ctest checks their protocols without a GPU. Its own executable: the emulated
# CUDA runtime must not meet the real one (exl selftest loads the module).
if(TARGET exl_cuda_emu)
  add_executable(exl_emu_tests ${CMAKE_SOURCE_DIR}/tests/testlib/main.cpp ${CMAKE_CURRENT_LIST_DIR}/test_cuda_emu.cpp)
  target_link_libraries(exl_emu_tests PRIVATE exl_cuda_emu exl_testlib exl_kernels)
  target_include_directories(exl_emu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  exl_target_defaults(exl_emu_tests)
  add_test(NAME cuda_emu COMMAND exl_emu_tests --filter cuda_emu)
endif()

# The GPU suites' cases on the emulated module (libexl_cuda_emu.so through EXL_CUDA_EMU_MODULE):
# `exl selftest --device cuda` as on a GPU machine, a selection that stays within CI's time.
if(TARGET exl_cuda_emu_module)
  foreach(case cuda_model.logits_ref_xs_4_0 cuda_kernels.exl2_matmul_silu_gather cuda_kernels.rms_norm)
    string(REPLACE "." "_" _name "emu_selftest_${case}")
    add_test(NAME ${_name} COMMAND exl selftest --device cuda --filter ${case})
    set_tests_properties(${_name} PROPERTIES
      ENVIRONMENT "EXL_CUDA_EMU_MODULE=$<TARGET_FILE:exl_cuda_emu_module>"
      FAIL_REGULAR_EXPRESSION "GPU cases: skipped")
  endforeach()
endif()
