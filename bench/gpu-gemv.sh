#!/usr/bin/env bash
# One device call for the EXL2 GEMV's launch experiments: knob settings against the default on
# the GEMV shapes (exl_cuda_bench gemv-quick, PDL chains) and the raw decode step, alternating,
# the selftest with the first setting, and Nsight Compute on one decode step of the synthetic
# llama3-8b under the first setting (every kernel's duration and DRAM bytes, serialised:
# decode.csv; the first four GEMV launches' sections: gemv_detail.txt). NCU=0 leaves ncu out.
#   usage (on the GPU machine, after bench/gpu-prep.sh here):
#     bash bench/gpu-gemv.sh OUT_DIR ROUNDS SETTING [SETTING ...]
#   SETTING: space-separated VAR=VALUE pairs (bench/gpu-ab.sh's), e.g.
#     bash bench/gpu-gemv.sh $OUT/gemv 2 "EXL_GEMV_PRIME=2" "EXL_GEMV_OVERHEAD=6"
set -u
usage="usage: bench/gpu-gemv.sh OUT_DIR ROUNDS SETTING [SETTING ...]"
out=${1:?$usage}
rounds=${2:?$usage}
shift 2
[ $# -gt 0 ] || { echo "$usage"; exit 2; }
knob=$1
mkdir -p "$out"
[[ $out == /* ]] || out=$PWD/$out
root=$(cd "$(dirname "$0")/.." && pwd)
log=$out/log.txt
source "$(dirname "$0")/gpu-env.sh"
ab=()
for v in - "$@"; do ab+=("EXL_BENCH=gemv-quick ${v#-}" "$v"); done
(cd "$root" && bash bench/gpu-ab.sh "$out/ab.txt" "$rounds" "${ab[@]}" >/dev/null 2>&1)
say "A/B done"
read -r -a ke <<<"$knob"
env "${ke[@]}" timeout 200 ./exl selftest --device cuda --fixtures ../fixtures >"$out/selftest-knob.log" 2>&1
say "selftest with $knob rc $?: $(tail -n 1 "$out/selftest-knob.log")"
if [ -n "$ncu" ] && [ "${NCU:-1}" != 0 ]; then
  metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
  common=(--clock-control none --profile-from-start off)
  env "${ke[@]}" EXL_CUDA_GRAPHS=0 EXL_BENCH=llama3-8b timeout 150 "$ncu" "${common[@]}" --metrics "$metrics" --csv \
    ./exl_cuda_bench ./libexl_cuda.so >"$out/decode.csv" 2>"$out/decode.err"
  say "ncu decode rc $?"
  env "${ke[@]}" EXL_CUDA_GRAPHS=0 EXL_BENCH=llama3-8b timeout 120 "$ncu" "${common[@]}" --cache-control none --kernel-name regex:exl2_gemv \
    --launch-count 4 --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis --section SchedulerStats ./exl_cuda_bench ./libexl_cuda.so >"$out/gemv_detail.txt" 2>&1
  say "ncu gemv detail rc $?"
  gzip -kf "$out/decode.csv"
fi
