#!/usr/bin/env bash
# Speculative decoding on the GPU machine (issue #5): the fixture pair (target ref-s-4.0bpw, draft
# ref-xs-4.0bpw) with K = 0 (plain) .. 8 drafted tokens — decode tokens/s, speedup, acceptance,
# tokens per target pass — then exl_cuda_bench's `verify` figures (synthetic llama3-8b target:
# forward of K + 1 tokens; llama3.2-1b draft: one decode step).
#   usage (on the GPU machine, after bench/gpu-prep.sh here):  bash bench/spec-bench.sh OUT_FILE
set -u
out=${1:?usage: bench/spec-bench.sh OUT_FILE}
source "$(dirname "$0")/gpu-env.sh"
fx=../fixtures/models/exl2
prompt="The history of the city begins with a small settlement on the river, where traders from the north"
base=""
{
  echo "K  decode tok/s  speedup  acceptance  tokens/pass"
  for k in 0 1 2 3 4 5 6 7 8; do
    draft=(); [ "$k" -gt 0 ] && draft=(--draft-model "$fx/ref-xs-4.0bpw" --draft-tokens "$k")
    json=$(timeout 60 ./exl generate -m "$fx/ref-s-4.0bpw" "${draft[@]}" -p "$prompt" -n 256 --greedy --ignore-eos \
           --json --device cuda 2>/dev/null)
    echo "$json" | python3 -c "
import json,sys
j=json.load(sys.stdin); k=$k; base=float('${base:-0}' or 0)
d=j.get('draft') or {}
r=j['decode_tokens_per_s']
print(f\"{k}  {r:12.1f}  {r/base if base else 1.0:7.2f}  {d.get('acceptance_rate', 0):10.3f}  {d.get('tokens_per_pass', 1.0):11.2f}\")"
    [ "$k" -eq 0 ] && base=$(echo "$json" | python3 -c "import json,sys; print(json.load(sys.stdin)['decode_tokens_per_s'])")
  done
  EXL_BENCH=verify timeout 120 ./exl_cuda_bench ./libexl_cuda.so | grep -E "==|decode ctx|forward"
} 2>&1 | tee "$out"
