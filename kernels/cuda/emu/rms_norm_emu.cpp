// rms_norm.cu compiled for the CUDA emulator (emu.h).
#include "rms_norm.cu"
