# Mixture-of-experts models (Mixtral, Qwen3-MoE) on the CPU against HF transformers' outputs kept
# in tests/data/moe (issue 48).
exl_add_test_suite(moe ${CMAKE_CURRENT_LIST_DIR}/test_moe.cpp)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/test_moe.cpp PROPERTIES
  COMPILE_DEFINITIONS "EXL_MOE_TEST_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/moe\"")
# The planner and exl synth on MoE models.
if(TARGET exl_synth AND TARGET exl_plan)
  exl_add_test_suite(moe_plan ${CMAKE_CURRENT_LIST_DIR}/test_moe_plan.cpp)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/test_moe_plan.cpp PROPERTIES
    COMPILE_DEFINITIONS "EXL_MOE_TEST_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/moe\"")
endif()
