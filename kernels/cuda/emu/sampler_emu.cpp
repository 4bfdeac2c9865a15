// sampler.cu compiled for the CUDA emulator (emu.h).
#include "sampler.cu"
