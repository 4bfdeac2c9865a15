#!/usr/bin/env bash
# Predicted (exl fit --json) vs measured device memory of a real load and generation (exl bench
# --json on the CUDA backend), for the issue-6 acceptance table in bench/RESULTS.md.
#
# usage: bench/plan_vs_actual.sh [-x path/to/exl] [-g "GPU name"] CASE...
#   CASE = MODEL_DIR:CTX[:CACHE[:GEN]]     e.g.  /models/llama3-8b-4.0bpw:8192:fp16
#   (or a file of cases, one a line, with -f FILE)
# Measured = the process's peak device memory from nvidia-smi's per-process usage, sampled every
# 50 ms while `exl bench` loads the model and fills the context (prompt = CTX - GEN - 1 tokens, then
# GEN generated). Prints predicted, measured and the error; PASS when within max(3 %, 64 MiB).
set -u
EXL=${EXL:-build/release/app/cli/exl}
GPU_NAME=""
CASES=()
while [ $# -gt 0 ]; do
  case "$1" in
    -x) EXL=$2; shift 2 ;;
    -g) GPU_NAME=$2; shift 2 ;;
    -f) while read -r line; do [ -n "$line" ] && [ "${line#\#}" = "$line" ] && CASES+=("$line"); done <"$2"; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) CASES+=("$1"); shift ;;
  esac
done
[ -x "$EXL" ] || { for c in build/*/app/cli/exl; do [ -x "$c" ] && EXL=$c && break; done; }
[ -x "$EXL" ] || { echo "exl not found (build it, or pass -x)" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "nvidia-smi not found: run this on the GPU machine" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON" >&2; exit 2; }
[ ${#CASES[@]} -gt 0 ] || { echo "no cases; see --help" >&2; exit 2; }

gpu_args=()
if [ -n "$GPU_NAME" ]; then
  gpu_args=(--gpu "$GPU_NAME")
else
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1)
  if "$EXL" fit --preset tinyllama-1.1b --gpu "$name" --json >/dev/null 2>&1; then
    gpu_args=(--gpu "$name")
  else
    mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 | head -1)
    gpu_args=(--vram "${mem}MiB" --bandwidth 1000)
    echo "note: '$name' is not in the GPU table; using its ${mem} MiB and a nominal 1000 GB/s" >&2
  fi
fi

json_get() {  # json_get FILE EXPR (python expression over j)
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-44s %7s %6s %12s %12s %8s  %s\n' model ctx cache "pred MiB" "meas MiB" "err %" verdict
fails=0
for c in "${CASES[@]}"; do
  IFS=: read -r dir ctx cache gen <<<"$c"
  cache=${cache:-fp16}; gen=${gen:-64}
  prompt=$((ctx - gen - 1))
  if ! "$EXL" fit -m "$dir" --ctx "$ctx" --cache "$cache" "${gpu_args[@]}" --json >"$tmp/fit.json" 2>"$tmp/fit.err"; then
    [ -s "$tmp/fit.json" ] || { echo "$c: exl fit failed: $(cat "$tmp/fit.err")"; fails=$((fails + 1)); continue; }
  fi
  pred=$(json_get "$tmp/fit.json" "j['devices'][0]['used_bytes'] - j['devices'][0]['components']['fragmentation_margin']")
  "$EXL" bench -m "$dir" --device cuda --ctx "$ctx" --cache "$cache" --prompt-tokens "$prompt" --gen-tokens "$gen" \
    --repeats 1 --json >"$tmp/bench.json" 2>"$tmp/bench.err" &
  pid=$!
  peak=0
  while kill -0 "$pid" 2>/dev/null; do
    used=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
           awk -F', *' -v p="$pid" '$1 == p {print $2}')
    [ -n "$used" ] && [ "$used" -gt "$peak" ] && peak=$used
    sleep 0.05
  done
  wait "$pid"; rc=$?
  if [ $rc -ne 0 ] || [ "$peak" -eq 0 ]; then
    echo "$c: exl bench failed (rc $rc, peak ${peak} MiB): $(tail -2 "$tmp/bench.err")"; fails=$((fails + 1)); continue
  fi
  python3 - "$c" "$ctx" "$cache" "$pred" "$peak" "$tmp/fit.json" "$tmp/bench.json" <<'PY' || fails=$((fails + 1))
import json, sys
case, ctx, cache, pred, peak, fit, bench = sys.argv[1:]
pred_mib = int(pred) / 2**20
meas_mib = float(peak)
err = (pred_mib - meas_mib) / meas_mib * 100
ok = abs(pred_mib - meas_mib) <= max(0.03 * meas_mib, 64)
print(f"{case.split(':')[0][-44:]:<44} {ctx:>7} {cache:>6} {pred_mib:12.1f} {meas_mib:12.1f} {err:+8.2f}  {'PASS' if ok else 'FAIL'}")
f = json.load(open(fit)); b = json.load(open(bench))
c = f['devices'][0]['components']
w_pred = c['layers'] + c['embedding'] + c['head']
if 'weights_bytes' in b:
    print(f"    weights: predicted {w_pred / 2**20:.1f} MiB, backend {b['weights_bytes'] / 2**20:.1f} MiB"
          f" (backend counts EXL2 tensors only, not norms/embedding/units)")
for k in ('cache_bytes', 'scratch_bytes'):
    if k in b: print(f"    {k}: predicted {f['devices'][0][k] / 2**20:.1f} MiB, backend {b[k] / 2**20:.1f} MiB")
print(f"    context {c['cuda_context'] / 2**20:.0f} MiB assumed; decode bound {f['decode_bound_tokens_per_s']:.1f} tok/s,"
      f" measured {b.get('decode_tokens_per_s', 0):.1f}")
sys.exit(0 if ok else 1)
PY
done
echo "$fails case(s) failed"
[ $fails -eq 0 ]
