# The VRAM planner (engine/src/plan). app/cli is configured after the tests, so the planner's
# folder is added from here when nobody did it before.
if(NOT TARGET exl_plan)
  add_subdirectory(${CMAKE_SOURCE_DIR}/engine/src/plan ${CMAKE_BINARY_DIR}/engine/src/plan)
endif()
target_link_libraries(exl_testcases PUBLIC exl_plan)
exl_add_test_suite(plan ${CMAKE_CURRENT_LIST_DIR}/test_plan.cpp ${CMAKE_CURRENT_LIST_DIR}/test_plan_split.cpp)
