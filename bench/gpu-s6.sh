#!/usr/bin/env bash
# Session 6's device call: selftest (unfolded short chunks), verification costs per GEMV form,
# the KV cache types, the fixture pair's speculation.
set -u
out=${1:?}
source "$(dirname "$0")/gpu-env.sh"
S=$(date +%s)
EXL_CUDA_UNFOLD=1 timeout 150 ./exl selftest --device cuda --fixtures ../fixtures --verbose >"$out/selftest.log" 2>&1
echo "rc $? at $(( $(date +%s)-S ))s" >>"$out/selftest.log"
for v in "0 0" "1 0" "0 2" "0 16"; do
  set -- $v
  echo "== unfold $1 skip $2" >>"$out/verify.txt"
  EXL_CUDA_UNFOLD=$1 EXL_GEMV_SKIP=$2 EXL_BENCH=verify timeout 50 ./exl_cuda_bench ./libexl_cuda.so 2>&1 | grep -E "forward|decode" >>"$out/verify.txt"
done
echo "verify done $(( $(date +%s)-S ))s" >>"$out/verify.txt"
EXL_BENCH=cache timeout 120 ./exl_cuda_bench ./libexl_cuda.so >"$out/cache.txt" 2>&1
echo "cache done $(( $(date +%s)-S ))s" >>"$out/cache.txt"
cd ../..
EXL_CUDA_UNFOLD=1 timeout 80 bash bench/spec-bench.sh "$out/spec.txt" >/dev/null 2>&1
echo "end $(( $(date +%s)-S ))s" >>"$out/spec.txt"
