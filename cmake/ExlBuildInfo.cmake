# Build information shown by `exl --version` and the About dialog: the project version, build
# type and CUDA architectures (known at configure time) and the git commit (re-read at every
# build; the header is rewritten only when something changed, so a new commit recompiles one
# file). exl_build_info(<target>) makes <target> see <exl_build_info.h>.
set(_exl_build_info_dir ${CMAKE_BINARY_DIR}/generated)
set(_exl_build_info_header ${_exl_build_info_dir}/exl_build_info.h)
set(_exl_cuda_archs "")
set(_exl_cuda_toolkit "")
if(EXL_ENABLE_CUDA)
  set(_exl_cuda_archs "${CMAKE_CUDA_ARCHITECTURES}")
  set(_exl_cuda_toolkit "${CUDAToolkit_VERSION}")
endif()
string(REPLACE ";" "," _exl_cuda_archs_arg "${_exl_cuda_archs}")

if(NOT TARGET exl_build_info_header)
  find_package(Git QUIET)
  add_custom_target(exl_build_info_header
    BYPRODUCTS ${_exl_build_info_header}
    COMMAND ${CMAKE_COMMAND}
      -DOUT=${_exl_build_info_header}
      -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
      -DGIT=${GIT_EXECUTABLE}
      -DVERSION=${PROJECT_VERSION}
      -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
      -DCUDA_ARCHS=${_exl_cuda_archs_arg}
      -DCUDA_TOOLKIT=${_exl_cuda_toolkit}
      -P ${CMAKE_SOURCE_DIR}/cmake/ExlBuildInfoGen.cmake
    COMMENT "Build information (git commit)"
    VERBATIM)
endif()

function(exl_build_info tgt)
  add_dependencies(${tgt} exl_build_info_header)
  target_include_directories(${tgt} PRIVATE ${_exl_build_info_dir})
endfunction()
