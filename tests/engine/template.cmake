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

# `exl template` on every fixture case, compared byte for byte with Jinja2's renders (and the
# raising cases). exl is configured after tests/: $<TARGET_FILE:exl> resolves at generate time.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME template_cli
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/template_cli_check.py
                   --exl $<TARGET_FILE:exl> --fixtures ${EXL_FIXTURES_DIR})
  set_tests_properties(template_cli PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
