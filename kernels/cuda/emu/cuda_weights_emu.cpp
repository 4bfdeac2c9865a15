// cuda_weights.cpp compiled for the CUDA emulator (emu.h).
#include "cuda_weights.cpp"
