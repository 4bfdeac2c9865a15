#!/usr/bin/env bash
# Alternating A/B rounds of the raw decode step (exl_cuda_bench mode `decode`: tinyllama-1.1b and
# llama3-8b, 4-bit, context 0) under several environment settings, so that a machine's drift hits
# every setting alike. Figures are comparable only within one call.
#   usage (GPU machine, after bench/gpu-prep.sh here):
#     bash bench/gpu-ab.sh OUT_FILE ROUNDS SETTING [SETTING ...]
#   SETTING: space-separated VAR=VALUE pairs, "-" for the defaults,
#   e.g. bash bench/gpu-ab.sh $OUT/ab.txt 3 - "EXL_GEMV_CLUSTER=1" "EXL_GEMV_OVERHEAD=6"
set -u
out=${1:?usage: bench/gpu-ab.sh OUT_FILE ROUNDS SETTING ...}
rounds=${2:?rounds}
shift 2
[[ $out == /* ]] || out=$PWD/$out
source "$(dirname "$0")/gpu-env.sh"
for ((r = 1; r <= rounds; ++r)); do
  for s in "$@"; do
    envs=()
    [[ $s == "-" ]] || read -r -a envs <<<"$s"
    env "${envs[@]}" EXL_BENCH=decode timeout 120 stdbuf -o0 ./exl_cuda_bench ./libexl_cuda.so 2>&1 |
      grep -E "^== |decode ctx|FAIL|error" | sed "s|^|round $r [$s] |" | tee -a "$out"
  done
done
