// cuda_backend.cpp compiled for the CUDA emulator (emu.h).
#include "cuda_backend.cpp"
