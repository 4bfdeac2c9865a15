// kv_cache.cu compiled for the CUDA emulator (emu.h).
#include "kv_cache.cu"
