// cuda_backend_sample.cpp compiled for the CUDA emulator (emu.h).
#include "cuda_backend_sample.cpp"
