# exl_cuda_loader: the engine side of the CUDA module (dlopen loader + CudaBackend proxy).
# Included from engine/src/runtime/cuda/CMakeLists.txt, or from any CMake file that needs the
# target (guarded: defines it once).
if(NOT TARGET exl_cuda_loader)
  include(${CMAKE_SOURCE_DIR}/kernels/cuda/build_id.cmake)
  set(_exl_loader_dir ${CMAKE_SOURCE_DIR}/engine/src/runtime/cuda)
  add_library(exl_cuda_loader STATIC
    ${_exl_loader_dir}/cuda_loader.cpp
    ${_exl_loader_dir}/cuda_backend_proxy.cpp
    ${_exl_loader_dir}/cuda_libs.cpp
    ${_exl_loader_dir}/cuda_probe.cpp)
  target_include_directories(exl_cuda_loader
    PUBLIC ${CMAKE_SOURCE_DIR}/engine/include ${CMAKE_SOURCE_DIR}/kernels/cuda
    PRIVATE ${_exl_loader_dir})
  target_link_libraries(exl_cuda_loader PUBLIC exl_engine_core ${CMAKE_DL_LIBS})
  target_compile_definitions(exl_cuda_loader
    PUBLIC EXL_HAVE_CUDA_LOADER=1
    PRIVATE EXL_CUDA_BUILD_ID="${EXL_CUDA_BUILD_ID}"
            EXL_CUDA_MODULE_BUILD_PATH="${CMAKE_BINARY_DIR}/bin/libexl_cuda.so"
            $<$<BOOL:${CUDAToolkit_VERSION_MAJOR}>:EXL_CUDA_MAJOR=${CUDAToolkit_VERSION_MAJOR}>)
  if(COMMAND exl_target_defaults)
    exl_target_defaults(exl_cuda_loader)
  endif()
endif()
