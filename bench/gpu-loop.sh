#!/usr/bin/env bash
# The engine's decode loop against the raw step, for A/B of CUDA modules: exl_cuda_bench mode
# `loop` (tinyllama-1.1b and llama3-8b, 4-bit and 4.0 bpw mix, context 0: the raw step, then one
# forward_sample per token with greedy and with chat sampling settings), alternating the modules
# round by round so that a machine's drift hits each alike. Figures compare only within one call.
#   usage (GPU machine, after bench/gpu-prep.sh here; extra modules copied into .gpu/bin):
#     bash bench/gpu-loop.sh OUT_FILE ROUNDS MODULE [MODULE ...]
#   e.g. bash bench/gpu-loop.sh $OUT/loop.txt 2 libexl_cuda_base.so libexl_cuda.so
set -u
out=${1:?usage: bench/gpu-loop.sh OUT_FILE ROUNDS MODULE ...}
rounds=${2:?rounds}
shift 2
[[ $out == /* ]] || out=$PWD/$out
source "$(dirname "$0")/gpu-env.sh"
for ((r = 1; r <= rounds; ++r)); do
  for m in "$@"; do
    EXL_BENCH=loop timeout 200 stdbuf -o0 ./exl_cuda_bench "./$m" 2>&1 |
      grep -E "^== |decode|FAIL|error" | sed "s|^|round $r [$m] |" | tee -a "$out"
  done
done
