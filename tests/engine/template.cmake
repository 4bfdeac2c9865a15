# Chat-template interpreter suites (engine/src/template, library exl_template).
exl_add_test_suite(template
  ${CMAKE_CURRENT_LIST_DIR}/test_template.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_template_filters.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_template_fixtures.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_template_jinja2.cpp
)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/test_template_jinja2.cpp PROPERTIES
  COMPILE_DEFINITIONS "EXL_TEMPLATE_JINJA2_DATA=\"${CMAKE_SOURCE_DIR}/tests/data/template_jinja2\"")
target_link_libraries(exl_testcases PUBLIC exl_template)
