# GPU cases of the exl_cuda module: each kernel family against its reference twin, and the
# CUDA backend end to end against the fixtures. They call the module through the engine's
# loader, so ctest skips them with a message and `exl selftest` runs them on a GPU machine.
if(EXL_ENABLE_CUDA AND TARGET exl_cuda)
  include(${CMAKE_SOURCE_DIR}/engine/src/runtime/cuda/loader.cmake)
  # Until engine/src/runtime/CMakeLists.txt links it itself (then this is a no-op).
  get_target_property(_exl_rt_libs exl_runtime LINK_LIBRARIES)
  if(NOT "exl_cuda_loader" IN_LIST _exl_rt_libs)
    target_link_libraries(exl_runtime PUBLIC exl_cuda_loader)
  endif()
  target_link_libraries(exl_testcases PUBLIC exl_cuda_loader)
  exl_add_test_suite(cuda_kernels
    ${CMAKE_CURRENT_LIST_DIR}/test_cuda_exl2.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_cuda_exl3.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_cuda_ops.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_cuda_kv.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_cuda_family.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_cuda_sampler.cpp)
  exl_add_test_suite(cuda_model ${CMAKE_CURRENT_LIST_DIR}/test_cuda_model.cpp)
  # The model families on the CUDA backend against transformers (issue 47; the CPU twin: families).
  exl_add_test_suite(cuda_families ${CMAKE_SOURCE_DIR}/tests/engine/test_cuda_families.cpp)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/tests/engine/test_cuda_families.cpp PROPERTIES
    COMPILE_DEFINITIONS "EXL_FAMILIES_TEST_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/families\"")
  add_dependencies(exl_testcases exl_cuda)
endif()
