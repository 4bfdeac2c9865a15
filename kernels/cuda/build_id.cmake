# One build id per build tree, shared by the exl_cuda module and the engine's loader: the
# loader refuses a module from another build (stale libexl_cuda.so beside a new exl).
if(NOT EXL_CUDA_BUILD_ID)
  string(TIMESTAMP _exl_ts "%Y%m%d%H%M%S" UTC)
  string(RANDOM LENGTH 8 _exl_rand)
  set(EXL_CUDA_BUILD_ID "${PROJECT_VERSION}-abi1-${_exl_ts}-${_exl_rand}" CACHE INTERNAL "exl_cuda build id")
endif()
