#!/usr/bin/env bash
# Alternating A/B rounds of exl_cuda_bench (by default mode `decode`, the raw decode step:
# tinyllama-1.1b and llama3-8b, 4-bit, context 0) under several settings, so that a machine's
# drift hits every setting alike. Figures are comparable only within one call.
#   usage (GPU machine, after bench/gpu-prep.sh here; other modules copied into .gpu/bin):
#     bash bench/gpu-ab.sh OUT_FILE ROUNDS SETTING [SETTING ...]
#   SETTING: space-separated VAR=VALUE pairs, "-" for the defaults; MODULE=FILE runs that module
#   instead of libexl_cuda.so, EXL_BENCH=MODE another mode (loop: the engine's decode loop with
#   device sampling beside the raw step, 4-bit and 4.0 bpw mix; gemv-quick: PDL chains of the 8B's
#   GEMV shapes), e.g.
#     bash bench/gpu-ab.sh $OUT/ab.txt 3 - "EXL_GEMV_PRIME=2" "EXL_GEMV_OVERHEAD=6"
#     bash bench/gpu-ab.sh $OUT/loop.txt 2 "EXL_BENCH=loop MODULE=libexl_cuda_base.so" "EXL_BENCH=loop"
set -u
out=${1:?usage: bench/gpu-ab.sh OUT_FILE ROUNDS SETTING ...}
rounds=${2:?rounds}
shift 2
[[ $out == /* ]] || out=$PWD/$out
source "$(dirname "$0")/gpu-env.sh"
for ((r = 1; r <= rounds; ++r)); do
  for s in "$@"; do
    envs=()
    module=libexl_cuda.so
    kv=()
    [[ $s == "-" ]] || read -r -a kv <<<"$s"
    for x in "${kv[@]}"; do
      case $x in
        MODULE=*) module=${x#MODULE=} ;;
        *) envs+=("$x") ;;
      esac
    done
    env EXL_BENCH=decode "${envs[@]}" timeout 200 stdbuf -o0 ./exl_cuda_bench "./$module" 2>&1 |
      grep -E "^== |^gemv |decode|prefill|FAIL|error" | sed "s|^|round $r [$s] |" | tee -a "$out"
  done
done
