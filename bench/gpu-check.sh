#!/usr/bin/env bash
# One device call that checks a build on the GPU machine and measures it: the launch form's
# ceiling (exl_launch_floor, bench/launch_floor.cu), `exl selftest --device cuda`, memcheck and
# racecheck of the device sampler, the run-to-run determinism of seeded sampling (the same
# generation three times on two models), then exl_cuda_bench (GEMV shapes and decode/prefill of the
# synthetic models) and, where a base module was carried as .gpu/bin/libexl_cuda_base.so(.xz), one
# round of the decode loop against it. Logs go to OUT_DIR; each step has a time limit so the whole
# fits one call (about 8 minutes with BENCH=decode).
#   usage (on the GPU machine, after bench/gpu-prep.sh here):  bash bench/gpu-check.sh OUT_DIR [BENCH]
#   BENCH: what exl_cuda_bench measures (EXL_BENCH: all, models, gemv, decode, none; default all)
#   base module, here:  xz -6 -c OTHER_BUILD/bin/libexl_cuda.so > .gpu/bin/libexl_cuda_base.so.xz
set -u
out=${1:?usage: bench/gpu-check.sh OUT_DIR [BENCH]}
bench=${2:-all}
mkdir -p "$out"
[[ $out == /* ]] || out=$PWD/$out
root=$(cd "$(dirname "$0")/.." && pwd)
log=$out/check.log
source "$(dirname "$0")/gpu-env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv >"$out/env.txt" 2>&1
./exl --version >>"$out/env.txt" 2>&1
say "launch floor"
timeout 90 ./exl_launch_floor 15 >"$out/floor.txt" 2>&1
say "floor rc $?"
grep -E "^  |one kernel|skeleton" "$out/floor.txt" >>"$out/check.log"
say "selftest"
timeout 250 ./exl selftest --device cuda --fixtures ../fixtures >"$out/selftest.log" 2>&1
say "selftest rc $?: $(tail -n 1 "$out/selftest.log")"
if [ -n "$cs" ]; then
  say "memcheck, racecheck (sampler)"
  say "$(sanitize memcheck cuda_kernels.sampler_random_vocab_odd "$out/memcheck.log" 120)"
  say "$(sanitize racecheck cuda_kernels.sampler_greedy_ties_and_edge_rows "$out/racecheck.log")"
  say "$(sanitize memcheck cuda_kernels.sampler_rows_selects_small "$out/memcheck-rows.log")"
fi
say "determinism"
for m in ref-s-4.0bpw ref-xs-4.0bpw; do
  [ -d "../fixtures/models/exl2/$m" ] || continue
  for i in 1 2 3; do
    timeout 60 ./exl generate -m "../fixtures/models/exl2/$m" -p "Once upon a time" -n 96 --ignore-eos \
      --temperature 0.9 --seed 7 --device cuda 2>/dev/null | md5sum | cut -c1-12
  done | sort | uniq -c | sed "s|^|$m: |" | tee -a "$out/check.log"
done
if [ "$bench" != none ]; then
  say "exl_cuda_bench $bench"
  EXL_BENCH=$bench timeout 200 ./exl_cuda_bench ./libexl_cuda.so >"$out/bench.log" 2>&1
  say "bench rc $?"
  grep -E "tok/s|GB/s|µs|us " "$out/bench.log" | head -60 >>"$out/check.log"
fi
if [ -e libexl_cuda_base.so ]; then
  say "decode loop against the base module"
  (cd "$root" && bash bench/gpu-ab.sh "$out/loop.txt" 1 "EXL_BENCH=loop MODULE=libexl_cuda_base.so" "EXL_BENCH=loop" \
    >/dev/null 2>&1)
  say "loop done"
  cat "$out/loop.txt" >>"$out/check.log"
fi
