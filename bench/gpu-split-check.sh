#!/usr/bin/env bash
# Issue #13 on a machine with two GPUs (`nvidia-h200-x2`), in one device call after
# `bench/gpu-prep.sh BUILD_DIR ref-s-4.0bpw ref-xs-4.0bpw`:
#   the model selftest (two-GPU logits identity, skipped on one GPU), then a synthetic llama3-70b at
#   4.0 bpw split manually (-gs) and automatically: decode speed beside the one-GPU run, and each
#   GPU's peak memory (nvidia-smi, sampled every 100 ms) against the planner's prediction for it
#   (`exl fit --json` used_bytes: CUDA context, rounding and margin included; issue #13: within 3 %).
# Writes $OUT/split-report.txt.
set -uo pipefail
source "$(dirname "$0")/gpu-env.sh"
[ -f libexl_cuda.so.xz ] && unxz -f libexl_cuda.so.xz
R=${OUT:-/tmp}/split-report.txt
{
nvidia-smi --query-gpu=index,name,memory.total --format=csv
nvidia-smi topo -m 2>/dev/null | head -5
echo "== selftest cuda_model"
./exl selftest --device cuda --fixtures ../fixtures --filter cuda_model 2>&1 | grep -E "layer_split|speculative|FAIL|passed"
./exl synth --preset llama3-70b --bpw 4.0 -o /tmp/l70 2>&1 | tail -1
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
for split in "" "-gs 20,60" "-gs 40,40" "--auto-split"; do
  echo "== llama3-70b ${split:-one GPU}"
  fitargs=(--gpu "${gpus}x H200" --ctx 4096)
  [ -n "$split" ] && ./exl fit -m /tmp/l70 "${fitargs[@]}" $split --json > /tmp/fit.json
  [ -z "$split" ] && ./exl fit -m /tmp/l70 --gpu H200 --ctx 4096 --json > /tmp/fit.json
  if ! python3 -c "import json; json.load(open('/tmp/fit.json'))" 2>/dev/null; then
    echo "(no plan for this split on ${gpus} GPU(s))"
    continue
  fi
  nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 100 > /tmp/smi.log &
  smi=$!
  base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | tr '\n' ' ')
  # bench sizes its cache to (largest --ctx + --gen + 1) = 4096 tokens, the context exl fit plans for
  ./exl bench -m /tmp/l70 --prompt 512 --ctx 3967 --gen 128 --repeats 2 --json $split 2>&1 | tail -2
  kill $smi
  python3 - "$base" <<'PY'
import json, sys, collections
base = [float(x) for x in sys.argv[1].split()]
fit = json.load(open('/tmp/fit.json'))
peak = collections.defaultdict(float)
for line in open('/tmp/smi.log'):
    try:
        i, used = (float(x) for x in line.split(','))
    except ValueError:
        continue
    peak[int(i)] = max(peak[int(i)], used)
for i, d in enumerate(fit['devices']):
    if d.get('layers') is None and not d.get('has_head'):
        continue
    predicted = d['used_bytes'] / 2**20
    measured = peak[i] - (base[i] if i < len(base) else 0)
    print(f"GPU {i}: layers {d.get('layers')} head {d.get('has_head')}: planner {predicted:.0f} MiB, "
          f"measured peak {measured:.0f} MiB (nvidia-smi, less {base[i] if i < len(base) else 0:.0f} before): "
          f"{100 * (measured - predicted) / predicted:+.2f} %")
PY
done
} > "$R" 2>&1
echo "wrote $R"
