#!/usr/bin/env bash
# One device call for the EXL2 GEMV's launch experiments: a knob setting against the default on
# the GEMV shapes (exl_cuda_bench gemv-quick, PDL chains) and the raw decode step, alternating,
# the selftest with the knob set, and Nsight Compute on one decode step of the synthetic
# llama3-8b (every kernel's duration and DRAM bytes, serialised: decode.csv; the first four GEMV
# launches' sections: gemv_detail.txt).
#   usage (on the GPU machine, after bench/gpu-prep.sh here):  bash bench/gpu-gemv.sh OUT_DIR VAR=VALUE [ROUNDS]
#   e.g. bash bench/gpu-gemv.sh $OUT/gemv EXL_GEMV_PRIME=3 2
set -u
out=${1:?usage: bench/gpu-gemv.sh OUT_DIR VAR=VALUE [ROUNDS]}
knob=${2:?usage: bench/gpu-gemv.sh OUT_DIR VAR=VALUE [ROUNDS]}
rounds=${3:-2}
mkdir -p "$out"
[[ $out == /* ]] || out=$PWD/$out
source "$(dirname "$0")/gpu-env.sh"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "$out/log.txt"; }
for r in $(seq "$rounds"); do
  for v in default "$knob"; do
    e=(); [ "$v" = default ] || e=("$v")
    env "${e[@]}" EXL_BENCH=gemv-quick timeout 60 ./exl_cuda_bench ./libexl_cuda.so 2>&1 | grep -E "^gemv|FAIL" |
      sed "s/^/round $r [$v] /" >>"$out/ab.txt"
    env "${e[@]}" EXL_BENCH=decode timeout 60 ./exl_cuda_bench ./libexl_cuda.so 2>&1 | grep -E "decode ctx|==|FAIL" |
      sed "s/^/round $r [$v] /" >>"$out/ab.txt"
  done
  say "round $r done"
done
env "$knob" timeout 200 ./exl selftest --device cuda --fixtures ../fixtures >"$out/selftest-knob.log" 2>&1
say "selftest with $knob rc $?: $(tail -n 1 "$out/selftest-knob.log")"
if [ -n "$ncu" ]; then
  metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
  common=(--clock-control none --profile-from-start off)
  EXL_CUDA_GRAPHS=0 EXL_BENCH=llama3-8b timeout 150 "$ncu" "${common[@]}" --metrics "$metrics" --csv \
    ./exl_cuda_bench ./libexl_cuda.so >"$out/decode.csv" 2>"$out/decode.err"
  say "ncu decode rc $?"
  EXL_CUDA_GRAPHS=0 EXL_BENCH=llama3-8b timeout 120 "$ncu" "${common[@]}" --cache-control none --kernel-name regex:exl2_gemv \
    --launch-count 4 --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis --section SchedulerStats ./exl_cuda_bench ./libexl_cuda.so >"$out/gemv_detail.txt" 2>&1
  say "ncu gemv detail rc $?"
  gzip -kf "$out/decode.csv"
fi
