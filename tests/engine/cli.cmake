# `exl chat` and `exl generate --json` report the reused and prefilled tokens (issue 4).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME chat_cli
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/chat_cli_check.py
                   --exl $<TARGET_FILE:exl> --fixtures ${EXL_FIXTURES_DIR})
  set_tests_properties(chat_cli PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()

# `exl bench`: prefill per prompt length and decode per context, each beside its bound (issue 3).
if(Python3_Interpreter_FOUND)
  add_test(NAME bench_cli
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/bench_cli_check.py
                   --exl $<TARGET_FILE:exl> --fixtures ${EXL_FIXTURES_DIR})
  set_tests_properties(bench_cli PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
