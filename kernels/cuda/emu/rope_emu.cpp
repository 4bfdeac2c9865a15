// rope.cu compiled for the CUDA emulator (emu.h).
#include "rope.cu"
