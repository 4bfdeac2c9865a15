#!/usr/bin/env bash
# One GPU-machine call that checks a build and measures the launch form (about 6 minutes):
# the launch-form ceiling (exl_launch_floor), the whole selftest, memcheck and racecheck of the
# device sampler, and, where a base module was carried as .gpu/bin/libexl_cuda_base.so(.xz), one
# round of the decode loop against it.
#   here:  bash bench/gpu-prep.sh build/cli ref-s-4.0bpw ref-xs-4.0bpw
#          [xz -6 -c OTHER_BUILD/bin/libexl_cuda.so > .gpu/bin/libexl_cuda_base.so.xz]
#   there: bash bench/gpu-check.sh $OUT     (run's carry: [".gpu"])
O=${1:?usage: bench/gpu-check.sh OUT_DIR}
[[ $O == /* ]] || O=$PWD/$O
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/bench/gpu-env.sh"
start=$(date +%s); say() { echo "[$(( $(date +%s) - start ))s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv > "$O/env.txt" 2>&1
say floor
timeout 90 ./exl_launch_floor 15 > "$O/floor.txt" 2>&1; say "rc $?"; cat "$O/floor.txt"
say selftest
timeout 200 ./exl selftest --device cuda --fixtures ../fixtures > "$O/selftest.log" 2>&1; say "rc $? $(tail -n 1 "$O/selftest.log")"
grep -E "^FAIL" "$O/selftest.log" | head -n 20
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -n 1)
say memcheck
timeout 120 "$CS" --tool memcheck ./exl selftest --device cuda --fixtures ../fixtures --filter 'cuda_kernels.sampler_random_vocab_odd' > "$O/memcheck.log" 2>&1
say "rc $? $(grep -E 'ERROR SUMMARY|passed' "$O/memcheck.log" | tr '\n' ' ')"
timeout 60 "$CS" --tool racecheck ./exl selftest --device cuda --fixtures ../fixtures --filter 'cuda_kernels.sampler_greedy_ties_and_edge_rows' > "$O/racecheck.log" 2>&1
say "rc $? $(grep -E 'RACECHECK SUMMARY|passed' "$O/racecheck.log" | tr '\n' ' ')"
if [ -e libexl_cuda_base.so ]; then
  say loop
  (cd "$root" && bash bench/gpu-ab.sh "$O/loop.txt" 1 "EXL_BENCH=loop MODULE=libexl_cuda_base.so" "EXL_BENCH=loop" > /dev/null 2>&1)
  grep -v "^$" "$O/loop.txt" | tail -n 40
fi
say done
