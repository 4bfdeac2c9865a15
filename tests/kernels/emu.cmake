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
