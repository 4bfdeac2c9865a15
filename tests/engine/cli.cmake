# Python checks of `exl` commands on the fixtures (exit 77: fixtures missing, reported as skipped).
find_package(Python3 COMPONENTS Interpreter)
function(exl_cli_check name script)
  if(Python3_Interpreter_FOUND)
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${script}
                     --exl $<TARGET_FILE:exl> --fixtures ${EXL_FIXTURES_DIR})
    set_tests_properties(${name} PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
  endif()
endfunction()

# `exl chat` and `exl generate --json` report the reused and prefilled tokens (issue 4).
exl_cli_check(chat_cli chat_cli_check.py)
# `exl bench`: prefill per prompt length and decode per context, each beside its bound (issue 3).
exl_cli_check(bench_cli bench_cli_check.py)
