#!/usr/bin/env bash
# Tuning runs of the EXL2 GEMV on the GPU machine: exl_cuda_bench gemv-quick under each setting of
# the experiment knobs (EXL_GEMV_UPB units per block, EXL_GEMV_SKIP stages left out; exl2_gemv.cu).
#   usage (on the GPU machine, after bench/gpu-prep.sh here):  bash bench/gpu-tune.sh OUT_FILE [SETTING ...]
#   SETTING: UPB:SKIP, e.g. 0:0 (defaults) 32:0 0:1
set -u
out=${1:?usage: bench/gpu-tune.sh OUT_FILE [UPB:SKIP ...]}; shift
source "$(dirname "$0")/gpu-env.sh"
for s in "${@:-0:0}"; do
  EXL_GEMV_UPB=${s%%:*} EXL_GEMV_SKIP=${s##*:} EXL_BENCH=gemv-quick timeout 60 ./exl_cuda_bench ./libexl_cuda.so 2>&1 |
    grep -E "^gemv|FAIL" | sed "s/^/upb ${s%%:*} skip ${s##*:}: /" | tee -a "$out"
done
