# exl synth (engine/src/synth): bit allocation, the written folder against the spec checklist,
# loading and a CPU forward, errors; synth_exl3: the same for --format exl3 (cases in test_synth.cpp).
if(NOT TARGET exl_synth)
  add_subdirectory(${CMAKE_SOURCE_DIR}/engine/src/synth ${CMAKE_BINARY_DIR}/engine/src/synth)
endif()
target_link_libraries(exl_testcases PUBLIC exl_synth)
exl_add_test_suite(synth ${CMAKE_CURRENT_LIST_DIR}/test_synth.cpp)
add_test(NAME synth_exl3 COMMAND exl_tests --filter synth_exl3)
