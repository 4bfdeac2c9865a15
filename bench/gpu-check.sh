#!/usr/bin/env bash
# One device call that checks a build on the GPU machine and measures it: `exl selftest --device
# cuda`, the run-to-run determinism of seeded sampling (the same generation three times on two
# models), then exl_cuda_bench (GEMV shapes and decode/prefill of the synthetic models). Logs go
# to OUT_DIR; each step has a time limit so the whole fits one call.
#   usage (on the GPU machine, after bench/gpu-prep.sh here):  bash bench/gpu-check.sh OUT_DIR [BENCH]
#   BENCH: what exl_cuda_bench measures (EXL_BENCH: all, models, gemv; default all)
set -u
out=${1:?usage: bench/gpu-check.sh OUT_DIR [BENCH]}
bench=${2:-all}
mkdir -p "$out"
source "$(dirname "$0")/gpu-env.sh"
start=$(date +%s)
say() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "$out/check.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv >"$out/env.txt" 2>&1
./exl --version >>"$out/env.txt" 2>&1
say "selftest"
timeout 250 ./exl selftest --device cuda --fixtures ../fixtures >"$out/selftest.log" 2>&1
say "selftest rc $?: $(tail -n 1 "$out/selftest.log")"
say "determinism"
for m in ref-s-4.0bpw ref-xs-4.0bpw; do
  [ -d "../fixtures/models/exl2/$m" ] || continue
  for i in 1 2 3; do
    timeout 60 ./exl generate -m "../fixtures/models/exl2/$m" -p "Once upon a time" -n 96 --ignore-eos \
      --temperature 0.9 --seed 7 --device cuda 2>/dev/null | md5sum | cut -c1-12
  done | sort | uniq -c | sed "s|^|$m: |" | tee -a "$out/check.log"
done
say "exl_cuda_bench $bench"
EXL_BENCH=$bench timeout 200 ./exl_cuda_bench ./libexl_cuda.so >"$out/bench.log" 2>&1
say "bench rc $?"
grep -E "tok/s|GB/s|µs|us " "$out/bench.log" | head -60 >>"$out/check.log"
