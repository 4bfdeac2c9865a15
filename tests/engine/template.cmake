# Chat-template interpreter suites (engine/src/template, library exl_template).
exl_add_test_suite(template
  ${CMAKE_CURRENT_LIST_DIR}/test_template.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_template_filters.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_template_fixtures.cpp
)
target_link_libraries(exl_testcases PUBLIC exl_template)
