#!/usr/bin/env bash
# On the GPU machine: where an EXL3 decode step's time goes (Nsight Compute, the synthetic llama3-8b of
# exl_cuda_bench, mul1 at 4 bits, one forward at context 0): decode.csv (kernel, duration, DRAM bytes,
# grid) and gemv_detail.txt (the first two EXL3 GEMV launches: speed of light, warp states, occupancy,
# memory, scheduler, instruction mix).
#   usage: bash bench/exl3-profile.sh OUT_DIR     (in .gpu/bin, after bench/gpu-prep.sh here)
# The kernels' SASS can be read on the development machine without a GPU: `pip download --no-deps
# nvidia-cuda-cuobjdump` (the wheel's nvidia/cu13/bin/cuobjdump), then `nvcc -cubin -arch=sm_90` of
# kernels/cuda/exl3.cu with the flags of build/dev/compile_commands.json and `cuobjdump -sass`.
set -u
out=${1:?usage: bench/exl3-profile.sh OUT_DIR}
mkdir -p "$out"
source "$(dirname "$0")/gpu-env.sh"
[ -n "$ncu" ] || { echo "no ncu" | tee "$out/error.txt"; exit 3; }
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
common=(--clock-control none --profile-from-start off)
EXL_BENCH=exl3-8b timeout 200 "$ncu" "${common[@]}" --metrics "$metrics" --csv ./exl_cuda_bench ./libexl_cuda.so \
  >"$out/decode.csv" 2>"$out/decode.err"
echo "decode rc $?"
EXL_BENCH=exl3-8b timeout 150 "$ncu" "${common[@]}" --kernel-name regex:exl3_gemv --launch-skip 4 --launch-count 3 \
  --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
  --section MemoryWorkloadAnalysis --section SchedulerStats --section InstructionStats ./exl_cuda_bench ./libexl_cuda.so \
  >"$out/gemv_detail.txt" 2>&1
echo "detail rc $?"
