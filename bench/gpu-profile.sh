#!/usr/bin/env bash
# One device call that places decode and prefill time per kernel with Nsight Compute (ncu, hardware
# counters; the GPU machine's Firecracker runtime has them) on the synthetic llama3-8b of
# exl_cuda_bench: the profiled range is one forward (bench_forward's first timed one).
#   usage (on the GPU machine, after bench/gpu-prep.sh here):  bash bench/gpu-profile.sh OUT_DIR [attn32]
# Writes decode.csv and prefill.csv (kernel, duration, DRAM bytes, grid) and gemv_detail.txt (the
# first four GEMV launches of a decode step: speed of light, warp states, occupancy, memory).
# attn32: instead, one decode step at context 32768 on the 4.0 bpw mix with the paged FP16 and Q4
# caches (step_fp16.csv, step_q4.csv) and the decode attention kernel's sections (attn_*.txt).
set -u
out=${1:?usage: bench/gpu-profile.sh OUT_DIR [attn32]}
mkdir -p "$out"
source "$(dirname "$0")/gpu-env.sh"
[ -n "$ncu" ] || { echo "no ncu" | tee "$out/error.txt"; exit 3; }
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
common=(--clock-control none --profile-from-start off)
if [ "${2:-}" = attn32 ]; then
  for c in fp16 q4; do
    EXL_BENCH=cache32 EXL_BENCH_CACHE=$c EXL_BENCH_PAGED=1 timeout 120 "$ncu" "${common[@]}" --metrics "$metrics" --csv \
      ./exl_cuda_bench ./libexl_cuda.so >"$out/step_$c.csv" 2>"$out/step_$c.err"
    EXL_BENCH=cache32 EXL_BENCH_CACHE=$c EXL_BENCH_PAGED=1 timeout 120 "$ncu" "${common[@]}" \
      --kernel-name regex:"attn_decode_(mma|reg)" --launch-count 1 --section SpeedOfLight --section WarpStateStats \
      --section Occupancy --section MemoryWorkloadAnalysis --section SchedulerStats ./exl_cuda_bench ./libexl_cuda.so \
      >"$out/attn_$c.txt" 2>&1
  done
  exit 0
fi
EXL_BENCH=llama3-8b timeout 200 "$ncu" "${common[@]}" --metrics "$metrics" --csv ./exl_cuda_bench ./libexl_cuda.so \
  >"$out/decode.csv" 2>"$out/decode.err"
echo "decode rc $?"
EXL_BENCH=llama3-8b timeout 150 "$ncu" "${common[@]}" --kernel-name regex:exl2_gemv --launch-count 4 \
  --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
  --section MemoryWorkloadAnalysis --section SchedulerStats ./exl_cuda_bench ./libexl_cuda.so \
  >"$out/gemv_detail.txt" 2>&1
echo "detail rc $?"
EXL_BENCH=llama3-8b-prefill timeout 200 "$ncu" "${common[@]}" --metrics "$metrics" --csv ./exl_cuda_bench \
  ./libexl_cuda.so >"$out/prefill.csv" 2>"$out/prefill.err"
echo "prefill rc $?"
