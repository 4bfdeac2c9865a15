// cuda_check.cpp compiled for the CUDA emulator (emu.h).
#include "cuda_check.cpp"
