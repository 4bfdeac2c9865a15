set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

find_program(EXL_CCACHE ccache)
if(EXL_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER   "${EXL_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER "${EXL_CCACHE}")
  set(CMAKE_CUDA_COMPILER_LAUNCHER "${EXL_CCACHE}")
endif()

# Warnings for our own targets (applied per target through exl_target_defaults).
add_library(exl_build_flags INTERFACE)
target_compile_options(exl_build_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
if(EXL_WARNINGS_AS_ERRORS)
  target_compile_options(exl_build_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(EXL_NATIVE)
  target_compile_options(exl_build_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()

if(EXL_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

function(exl_target_defaults tgt)
  target_link_libraries(${tgt} PRIVATE exl_build_flags)
endfunction()
