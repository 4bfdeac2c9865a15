// exl2_pipe.cu compiled for the CUDA emulator (emu.h).
#include "exl2_pipe.cu"
