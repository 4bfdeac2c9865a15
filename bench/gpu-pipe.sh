#!/usr/bin/env bash
# One device call for the persistent decode pipeline (EXL_CUDA_PIPE=1, kernels/cuda/exl2_pipe.cu)
# and the converter's device-side measurement, in priority order, each step time-limited:
#   1. the pipeline against the CPU twin (kernel test modes 9 and 10) and against separate
#      launches on a fixture model (teacher-forced logits, seeded repeats); compute-sanitizer
#      memcheck over the kernel test when the tool is there;
#   2. the converter's GPU measurement against the CPU's (the first-token rule, session 17);
#   3. only if step 1 passed: the pipeline's time accounts (EXL_PIPE_TRACE=1, printed when each
#      model's backend goes) on tinyllama and llama3-8b, then alternating A/B rounds of the raw
#      decode step: launches, the pipeline with 8 consumer warps (gathering through the
#      permutation, and with the input in stored order: EXL_PIPE_ORDER=1) and with 16.
# usage (GPU machine, after `bash bench/gpu-prep.sh build/dev ref-s-4.0bpw` here):
#   bash bench/gpu-pipe.sh OUT_DIR [ROUNDS]
set -u
out=${1:?usage: bench/gpu-pipe.sh OUT_DIR [ROUNDS]}
rounds=${2:-2}
[[ $out == /* ]] || out=$PWD/$out
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/gpu-env.sh"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start))s] $*" | tee -a "$out/pipe.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv >"$out/env.txt" 2>&1
say "kernel test (modes 0 1 2 6 8 9 10)"
timeout 150 ./exl selftest --device cuda --fixtures ../fixtures --filter cuda_kernels.exl2_matmul_fused_and_cublas \
  >"$out/kernel.log" 2>&1
kernel_rc=$?
say "kernel test rc $kernel_rc: $(tail -n 1 "$out/kernel.log")"
say "model test (pipeline vs launches)"
timeout 120 ./exl selftest --device cuda --fixtures ../fixtures --filter cuda_model.pipe_decode_matches_launches \
  >"$out/model.log" 2>&1
model_rc=$?
say "model test rc $model_rc: $(grep -E 'pipeline vs|passed' "$out/model.log" | tr '\n' ' ')"
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$san" ] && [ $kernel_rc -eq 0 ]; then
  say "memcheck over the kernel test"
  timeout 150 "$san" --tool memcheck --error-exitcode 9 ./exl selftest --device cuda --fixtures ../fixtures \
    --filter cuda_kernels.exl2_matmul_fused_and_cublas >"$out/memcheck.log" 2>&1
  say "memcheck rc $?: $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -n 1)"
fi
say "converter measurement on the device"
timeout 150 ./exl selftest --device cuda --fixtures ../fixtures --filter convert.cuda_measurement_matches_cpu \
  >"$out/convert.log" 2>&1
say "convert rc $?: $(tail -n 1 "$out/convert.log")"
if [ $kernel_rc -ne 0 ] || [ $model_rc -ne 0 ]; then
  say "pipeline failed its tests: no timings"
  exit 1
fi
say "trace (tinyllama-1.1b, then llama3-8b; a report per model)"
EXL_CUDA_PIPE=1 EXL_PIPE_TRACE=1 EXL_BENCH=decode timeout 120 ./exl_cuda_bench ./libexl_cuda.so >"$out/trace.log" 2>&1
say "trace rc $?: $(grep -E 'decode ctx' "$out/trace.log" | tr '\n' ' ')"
say "A/B"
bash "$here/gpu-ab.sh" "$out/ab.txt" "$rounds" - "EXL_CUDA_PIPE=1" "EXL_CUDA_PIPE=1 EXL_PIPE_ORDER=1" \
  "EXL_CUDA_PIPE=1 EXL_PIPE_WARPS=16" >/dev/null 2>&1
say "A/B done: $(wc -l <"$out/ab.txt") lines"
