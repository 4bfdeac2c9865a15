#!/usr/bin/env bash
# One device call for the persistent decode pipeline (EXL_CUDA_PIPE=1, kernels/cuda/exl2_pipe.cu)
# and the converter's device-side measurement, in priority order, each step time-limited and
# skipped once the call's budget would be passed:
#   1. the pipeline against the CPU twin (kernel test modes 9 and 10) and against separate
#      launches on a fixture model (teacher-forced logits, seeded repeats: the default form, 16
#      warps with the input in stored order, attention as a stage, a cooperative launch), then
#      the pipeline over the whole step (EXL_PIPE_STEP=1) on ref-xs and ref-s;
#   2. the converter's GPU measurement against the CPU's (the first-token rule, session 17);
#   3. only if step 1 passed: the pipeline's time accounts (EXL_PIPE_TRACE=1, printed when each
#      model's backend goes) on tinyllama and llama3-8b, per layer with and without the attention
#      stage and over the whole step,
#      then alternating A/B rounds of the raw decode step: launches against the pipeline's forms;
#   4. where the per-layer form's time goes: traces with parts left out (EXL_PIPE_SKIP);
#   5. compute-sanitizer memcheck over the kernel test, if the tool is there and time is left;
#   6. the whole `exl selftest --device cuda`, and `exl bench` of the synthetic 8B and tinyllama.
# (All of it passed the CUDA emulator first, kernels/cuda/emu: what can still fail here is what the
# emulator does not model — the memory model, registers, timing.)
# usage (GPU machine, after `bash bench/gpu-prep.sh build/dev ref-s-4.0bpw ref-xs-4.0bpw` here):
#   bash bench/gpu-pipe.sh OUT_DIR [ROUNDS] [BUDGET_SECONDS]
set -u
out=${1:?usage: bench/gpu-pipe.sh OUT_DIR [ROUNDS] [BUDGET_SECONDS]}
rounds=${2:-2}
budget=${3:-560}
[[ $out == /* ]] || out=$PWD/$out
mkdir -p "$out"
bench=$(cd "$(dirname "$0")" && pwd)  # (gpu-env.sh sets its own `here`)
source "$bench/gpu-env.sh"
start=$(date +%s)
say() { echo "[$(($(date +%s) - start))s] $*" | tee -a "$out/pipe.log"; }
# Whether a step of about $1 seconds still fits the budget.
fits() { [ $(($(date +%s) - start + $1)) -le "$budget" ] || { say "skipped (budget): $2"; return 1; }; }
selftest() { ./exl selftest --device cuda --fixtures ../fixtures --filter "$1"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv >"$out/env.txt" 2>&1
say "kernel test (modes 0 1 2 6 8 9 10)"
timeout 120 bash -c "$(declare -f selftest); selftest cuda_kernels.exl2_matmul_fused_and_cublas" >"$out/kernel.log" 2>&1
kernel_rc=$?
say "kernel test rc $kernel_rc: $(tail -n 1 "$out/kernel.log")"
say "model test (pipeline vs launches)"
timeout 150 bash -c "$(declare -f selftest); selftest cuda_model.pipe_decode_matches_launches" >"$out/model.log" 2>&1
model_rc=$?
say "model test rc $model_rc: $(grep -E 'pipeline|passed' "$out/model.log" | tr '\n' ' ')"
say "model test (the whole step as one pipeline launch)"
timeout 120 bash -c "$(declare -f selftest); selftest cuda_model.pipe_step_matches_launches" >"$out/step.log" 2>&1
step_rc=$?
say "step test rc $step_rc: $(grep -E 'pipeline|passed' "$out/step.log" | tr '\n' ' ')"
if fits 90 "converter measurement"; then
  timeout 90 bash -c "$(declare -f selftest); selftest convert.cuda_measurement_matches_cpu" >"$out/convert.log" 2>&1
  say "convert rc $?: $(tail -n 1 "$out/convert.log")"
fi
if [ $kernel_rc -ne 0 ] || [ $model_rc -ne 0 ]; then
  say "pipeline failed its tests: no timings"
  exit 1
fi
forms=("EXL_CUDA_PIPE=1" "EXL_CUDA_PIPE=1 EXL_PIPE_ATTN=1")
[ $step_rc -eq 0 ] && forms+=("EXL_CUDA_PIPE=1 EXL_PIPE_STEP=1")
for form in "${forms[@]}"; do
  fits 60 "trace $form" || break
  tag=$(echo "$form" | tr ' =' '_-')
  env $form EXL_PIPE_TRACE=1 EXL_BENCH=decode timeout 60 ./exl_cuda_bench ./libexl_cuda.so >"$out/trace-$tag.log" 2>&1
  say "trace [$form] rc $?: $(grep -E 'decode ctx' "$out/trace-$tag.log" | tr '\n' ' ')"
done
# Where the per-layer form's time goes: parts left out (EXL_PIPE_SKIP bits: 1 decode + mma,
# 2 weight copies, 4 stage-input waits, 8 the tail's global sums; the results are wrong, the
# timings place the time).
for skip in 1 2 4 8 6; do
  fits 30 "trace skip $skip" || break
  EXL_CUDA_PIPE=1 EXL_PIPE_SKIP=$skip EXL_PIPE_TRACE=1 EXL_BENCH=decode timeout 60 ./exl_cuda_bench ./libexl_cuda.so \
    >"$out/trace-skip-$skip.log" 2>&1
  say "trace [skip $skip] rc $?: $(grep -E 'decode ctx' "$out/trace-skip-$skip.log" | tr '\n' ' ')"
done
if fits 240 "A/B"; then
  step_forms=()
  [ $step_rc -eq 0 ] && step_forms=("EXL_CUDA_PIPE=1 EXL_PIPE_STEP=1" "EXL_CUDA_PIPE=1 EXL_PIPE_STEP=1 EXL_PIPE_ORDER=1")
  bash "$bench/gpu-ab.sh" "$out/ab.txt" "$rounds" - "EXL_CUDA_PIPE=1" "EXL_CUDA_PIPE=1 EXL_PIPE_ATTN=1" \
    "EXL_CUDA_PIPE=1 EXL_PIPE_ATTN=1 EXL_PIPE_ORDER=1" "EXL_CUDA_PIPE=1 EXL_PIPE_ATTN=1 EXL_PIPE_WARPS=16" \
    "EXL_CUDA_PIPE=1 EXL_PIPE_ATTN=1 EXL_PIPE_COOP=1" "${step_forms[@]}" >/dev/null 2>&1
  say "A/B done: $(wc -l <"$out/ab.txt" 2>/dev/null) lines"
fi
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$san" ] && fits 120 "memcheck"; then
  timeout 120 "$san" --tool memcheck --error-exitcode 9 ./exl selftest --device cuda --fixtures ../fixtures \
    --filter cuda_kernels.exl2_matmul_fused_and_cublas >"$out/memcheck.log" 2>&1
  say "memcheck rc $?: $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -n 1)"
fi
if fits 100 "full selftest"; then
  timeout 100 ./exl selftest --device cuda --fixtures ../fixtures >"$out/selftest.log" 2>&1
  say "selftest rc $?: $(tail -n 1 "$out/selftest.log")"
fi
# The product's own benchmark (launch form, device sampling) beside its bounds, for the record.
for m in llama3-8b tinyllama-1.1b; do
  fits 90 "exl bench $m" || break
  timeout 90 ./exl bench --synth $m --bpw 4.0 --prompt 2048 --ctx 0,2048,32768 --gen 128 --device cuda \
    >"$out/bench-$m.log" 2>&1
  say "exl bench $m rc $?"
done
