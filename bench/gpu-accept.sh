#!/usr/bin/env bash
# Issue #3's acceptance checks on the GPU machine, in parts (a comma-separated list, or all):
#   bench     `exl bench` of llama3-8b (prompt 2048; decode at context 0, 2048, 32768) and
#             tinyllama-1.1b (decode at context 0), about 2 minutes
#   selftest  the whole `exl selftest --device cuda`
#   sanitize  compute-sanitizer memcheck (leak check) over the suite cuda_kernels, memcheck over
#             cuda_model and cuda_cache, racecheck over one case per kernel family
# Each step has a time limit and is skipped (and said so) when the budget cannot cover it, so a
# call ends in time. Logs and summary.txt go to OUT_DIR (more than 8 files: a device call returns
# at most 8, so keep OUT_DIR outside $OUT and tar it there).
#   usage (GPU machine, after bench/gpu-prep.sh BUILD ref-s-4.0bpw ref-xs-4.0bpw here):
#     bash bench/gpu-accept.sh OUT_DIR PARTS [BUDGET_SECONDS]   (default budget 540)
#   e.g. bash bench/gpu-accept.sh $OUT/acc bench,selftest 420; bash bench/gpu-accept.sh $OUT/san sanitize
set -u
out=${1:?usage: bench/gpu-accept.sh OUT_DIR PARTS [BUDGET_SECONDS]}
part=${2:-all}
[[ $part == all ]] && part=bench,selftest,sanitize
has() { [[ ,$part, == *,$1,* ]]; }
budget=${3:-540}
mkdir -p "$out"
[[ $out == /* ]] || out=$PWD/$out
log=$out/summary.txt
source "$(dirname "$0")/gpu-env.sh"
# step SECONDS NAME COMMAND...: runs the command under `timeout SECONDS` with its output in
# OUT_DIR/NAME.log, unless fewer seconds than that are left of the budget.
step() {
  local limit=$1 name=$2; shift 2
  local left=$((budget - ($(date +%s) - start)))
  if ((left < limit)); then say "$name: skipped ($left s left of the budget, $limit s needed)"; return; fi
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  say "$name rc $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed,' "$out/$name.log" | tail -n 2 | tr '\n' ' ')"
}
# show LOG PATTERN: the log's matching lines into the summary (nothing where the step was skipped).
show() { [ -f "$1" ] && grep -E "$2" "$1" | tee -a "$log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory,memory.total --format=csv,noheader | tee -a "$log"
./exl --version 2>&1 | head -n 1 | tee -a "$log"
st=(./exl selftest --device cuda --fixtures ../fixtures)
if has bench; then
  step 150 bench-8b ./exl bench --synth llama3-8b --bpw 4.0 --prompt 2048 --ctx 0,2048,32768 --gen 64
  show "$out/bench-8b.log" "GB/s|TFLOP|prefill|decode|peak"
  step 60 bench-tinyllama ./exl bench --synth tinyllama-1.1b --bpw 4.0 --prompt 2048 --ctx 0 --gen 128
  show "$out/bench-tinyllama.log" "GB/s|decode|peak"
fi
if has selftest; then
  step 150 selftest "${st[@]}"
  [ -f "$out/selftest.log" ] && grep -E "^FAIL|^SKIP" "$out/selftest.log" | head -n 20 >>"$log"
fi
if has sanitize; then
  if [ -z "$cs" ]; then say "no compute-sanitizer on this machine"; exit 0; fi
  step 150 memcheck-kernels "$cs" --tool memcheck --leak-check full "${st[@]}" --filter 'cuda_kernels.*'
  step 200 memcheck-model "$cs" --tool memcheck "${st[@]}" --filter 'cuda_model.*'
  step 60 memcheck-cache "$cs" --tool memcheck "${st[@]}" --filter 'cuda_cache.step_last_*'
  # CASE:SECONDS, most telling first (H100 times under racecheck: the decode step 136 s, the KV
  # stores 64 s, the rest 1-20 s).
  for t in cuda_kernels.exl2_every_single_width:45 cuda_kernels.exl2_matmul_silu_gather:45 \
           cuda_kernels.attention_decode_and_prefill:60 cuda_kernels.sampler_rows_selects_small:45 \
           cuda_cache.step_last_q4:45 cuda_kernels.exl2_reconstruct_bit_exact:30 cuda_kernels.rms_norm:30 \
           cuda_kernels.rope_all_scalings:30 cuda_kernels.silu_mul_and_embedding:30 \
           cuda_kernels.exact_accumulators_round_trip:30 cuda_kernels.sampler_greedy_ties_and_edge_rows:30 \
           cuda_kernels.kv_cache_stores_and_attention:120 cuda_model.greedy_ref_xs_4_0:200; do
    c=${t%:*}
    step "${t#*:}" "racecheck-${c#*.}" "$cs" --tool racecheck "${st[@]}" --filter "$c"
  done
fi
say "done"
