#!/usr/bin/env bash
# Predicted (exl fit --json) vs measured device memory of a real load and generation (exl bench
# --json on the CUDA backend; exl generate --draft-model for cases with a draft), for the issue-6
# acceptance table in bench/RESULTS.md.
#
# usage: bench/plan_vs_actual.sh [-x path/to/exl] [-g "GPU name"] [-s SYNTH_DIR] [-t TABLE.md]
#                                [--dry-run] CASE...
#   CASE = MODEL:CTX[:CACHE[:GEN[:DRAFT]]]   e.g.  /models/llama3-8b-4.0bpw:8192:fp16
#   MODEL and DRAFT are a folder, or PRESET@BPW (e.g. llama3-8b@4.0): a model `exl synth` writes
#   into SYNTH_DIR (default /tmp/exl-synth) unless it is there already.
#   (or a file of cases, one a line, with -f FILE)
# exl: -x, else $EXL, else .gpu/bin/exl (the GPU-machine layout of bench/gpu-prep.sh: libraries
# from .gpu/lib, unpacked on first use), else build/*/app/cli/exl.
# Measured = the process's peak device memory from nvidia-smi's per-process usage, sampled every
# 50 ms while exl loads the model and fills the context (prompt = CTX - GEN - 1 tokens, then GEN
# generated). Prints predicted, measured and the error; PASS when within max(3 %, 64 MiB).
# EXL_CUDA_MEMTRACE=1: also the CUDA module's memory milestones of each run (device in use and
# the allocator's count after load, cache, scratch, graph captures and the first eager steps).
# --dry-run (no GPU needed): runs the same steps on the CPU and reports the peak resident memory
# instead, to check the script and the cases; verdict DRY.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
EXL=${EXL:-}
GPU_NAME=""
SYNTH_DIR=${SYNTH_DIR:-/tmp/exl-synth}
TABLE=""
DRY=0
CASES=()
while [ $# -gt 0 ]; do
  case "$1" in
    -x) EXL=$2; shift 2 ;;
    -g) GPU_NAME=$2; shift 2 ;;
    -s) SYNTH_DIR=$2; shift 2 ;;
    -t) TABLE=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    -f) while read -r line; do [ -n "$line" ] && [ "${line#\#}" = "$line" ] && CASES+=("$line"); done <"$2"; shift 2 ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) CASES+=("$1"); shift ;;
  esac
done
if [ -z "$EXL" ] && [ -x "$here/.gpu/bin/exl" ]; then
  EXL=$here/.gpu/bin/exl
  for f in "$here"/.gpu/lib/*.xz "$here"/.gpu/bin/*.xz; do if [ -e "$f" ]; then unxz -f "$f"; fi; done
  export LD_LIBRARY_PATH="$here/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -n "$EXL" ] && [ -x "$EXL" ] || { for c in "$here"/build/*/app/cli/exl; do [ -x "$c" ] && EXL=$c && break; done; }
[ -x "$EXL" ] || { echo "exl not found (build it, or pass -x)" >&2; exit 2; }
if [ $DRY -eq 0 ]; then
  command -v nvidia-smi >/dev/null || { echo "nvidia-smi not found: run this on the GPU machine (or --dry-run)" >&2; exit 2; }
fi
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON" >&2; exit 2; }
[ ${#CASES[@]} -gt 0 ] || { echo "no cases; see --help" >&2; exit 2; }
DEVICE=cuda; [ $DRY -eq 1 ] && DEVICE=cpu

gpu_args=()
if [ -n "$GPU_NAME" ]; then
  gpu_args=(--gpu "$GPU_NAME")
elif [ $DRY -eq 1 ]; then
  gpu_args=(--gpu H200)
else
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1)
  if "$EXL" fit --preset tinyllama-1.1b --ctx 2048 --gpu "$name" --json >/dev/null 2>&1; then
    gpu_args=(--gpu "$name")
  else
    mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 | head -1)
    gpu_args=(--vram "${mem}MiB" --bandwidth 1000)
    echo "note: '$name' is not in the GPU table; using its ${mem} MiB and a nominal 1000 GB/s" >&2
  fi
fi

# A folder for MODEL: itself, or PRESET@BPW synthesized into SYNTH_DIR once.
resolve() {
  local m=$1
  case "$m" in
    *@*)
      local preset=${m%@*} bpw=${m#*@}
      local dir="$SYNTH_DIR/$preset-$bpw"
      if [ ! -f "$dir/config.json" ]; then
        mkdir -p "$SYNTH_DIR"
        "$EXL" synth --preset "$preset" --bpw "$bpw" -o "$dir" --quiet >&2 || return 1
      fi
      echo "$dir" ;;
    *) echo "$m" ;;
  esac
}

json_get() {  # json_get FILE EXPR (python expression over j)
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# Peak memory (MiB) of process $1 while it runs: device memory from nvidia-smi, or (dry run) VmHWM.
# Where the per-process query shows no such pid (a container's PID namespace), the rise of the
# device's used memory over its level before the process started (issue 6 allows either).
gpu_used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 | head -1; }
sample_peak() {
  local pid=$1 base=$2 peak=0 used
  while kill -0 "$pid" 2>/dev/null; do
    if [ $DRY -eq 1 ]; then
      used=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$pid/status" 2>/dev/null)
    else
      used=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
             awk -F', *' -v p="$pid" '$1 == p {print $2}')
      [ -z "$used" ] && used=$(( $(gpu_used) - base ))
    fi
    [ -n "$used" ] && [ "$used" -gt "$peak" ] && peak=$used
    sleep 0.05
  done
  echo "$peak"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-44s %7s %6s %12s %12s %8s  %s\n' model ctx cache "pred MiB" "meas MiB" "err %" verdict
if [ -n "$TABLE" ] && [ ! -s "$TABLE" ]; then
  printf '| model | context | cache | draft | predicted MiB | measured MiB | error | verdict |\n|---|---|---|---|---|---|---|---|\n' >"$TABLE"
fi
fails=0
for c in "${CASES[@]}"; do
  IFS=: read -r model ctx cache gen draft <<<"$c"
  cache=${cache:-fp16}; gen=${gen:-64}; draft=${draft:-}
  prompt=$((ctx - gen - 1))
  dir=$(resolve "$model") || { echo "$c: exl synth failed"; fails=$((fails + 1)); continue; }
  fit_draft=()
  ddir=""
  if [ -n "$draft" ]; then
    ddir=$(resolve "$draft") || { echo "$c: exl synth (draft) failed"; fails=$((fails + 1)); continue; }
    fit_draft=(--draft "$ddir")
  fi
  if ! "$EXL" fit -m "$dir" --ctx "$ctx" --cache "$cache" "${gpu_args[@]}" "${fit_draft[@]}" --json >"$tmp/fit.json" 2>"$tmp/fit.err"; then
    [ -s "$tmp/fit.json" ] || { echo "$c: exl fit failed: $(cat "$tmp/fit.err")"; fails=$((fails + 1)); continue; }
  fi
  base=0; [ $DRY -eq 0 ] && base=$(gpu_used)
  pred=$(json_get "$tmp/fit.json" "j['devices'][0]['used_bytes'] - j['devices'][0]['components']['fragmentation_margin']")
  if [ -z "$ddir" ]; then
    "$EXL" bench -m "$dir" --device "$DEVICE" --ctx "$ctx" --cache "$cache" --prompt-tokens "$prompt" --gen-tokens "$gen" \
      --repeats 1 --json >"$tmp/bench.json" 2>"$tmp/bench.err" &
  else
    # A text of about `prompt` tokens for the synthetic byte-level tokenizer: " abc" words.
    unit=$("$EXL" tokenize -m "$dir" " abc abd abe abf" | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")
    python3 -c "import sys; n=int(sys.argv[1]); sys.stdout.write(' abc abd abe abf' * n)" $(( (prompt - 1) / unit )) >"$tmp/prompt.txt"
    "$EXL" generate -m "$dir" --draft-model "$ddir" --device "$DEVICE" --ctx "$ctx" --cache "$cache" \
      -p "$(cat "$tmp/prompt.txt")" -n "$gen" --ignore-eos --json >"$tmp/bench.json" 2>"$tmp/bench.err" &
  fi
  pid=$!
  peak=$(sample_peak "$pid" "$base")
  wait "$pid"; rc=$?
  # EXL_CUDA_MEMTRACE=1 in the environment: the module's memory milestones of the run.
  grep '^memtrace' "$tmp/bench.err" | sed 's/^/    /' || true
  if [ $rc -ne 0 ] || [ "$peak" -eq 0 ]; then
    echo "$c: exl bench failed (rc $rc, peak ${peak} MiB): $(tail -2 "$tmp/bench.err")"; fails=$((fails + 1)); continue
  fi
  python3 - "$c" "$ctx" "$cache" "$pred" "$peak" "$tmp/fit.json" "$tmp/bench.json" "$DRY" "$TABLE" <<'PY' || fails=$((fails + 1))
import json, sys
case, ctx, cache, pred, peak, fit, bench, dry, table = sys.argv[1:]
pred_mib = int(pred) / 2**20
meas_mib = float(peak)
err = (pred_mib - meas_mib) / meas_mib * 100
ok = abs(pred_mib - meas_mib) <= max(0.03 * meas_mib, 64)
verdict = "DRY" if dry == "1" else ("PASS" if ok else "FAIL")
model = case.split(':')[0]
draft = case.split(':')[4] if len(case.split(':')) > 4 else ""
print(f"{model[-44:]:<44} {ctx:>7} {cache:>6} {pred_mib:12.1f} {meas_mib:12.1f} {err:+8.2f}  {verdict}"
      + (f"  (draft {draft})" if draft else ""))
f = json.load(open(fit)); b = json.load(open(bench))
c = f['devices'][0]['components']
w_pred = c['layers'] + c['embedding'] + c['head']
if 'weights_bytes' in b:
    print(f"    weights: predicted {w_pred / 2**20:.1f} MiB, backend {b['weights_bytes'] / 2**20:.1f} MiB"
          f" (backend counts EXL2 tensors only, not norms/embedding/units)")
for k in ('cache_bytes', 'scratch_bytes'):
    if k in b: print(f"    {k}: predicted {f['devices'][0][k] / 2**20:.1f} MiB, backend {b[k] / 2**20:.1f} MiB")
if 'device_used_bytes' in b:
    print(f"    device in use at the end (all processes): {b['device_used_bytes'] / 2**20:.1f} MiB;"
          f" components predicted: " + ", ".join(f"{k} {v / 2**20:.1f}" for k, v in c.items() if v))
print(f"    context {c['cuda_context'] / 2**20:.0f} MiB assumed; decode bound {f['decode_bound_tokens_per_s']:.1f} tok/s,"
      f" measured {b.get('decode_tokens_per_s', 0):.1f}")
if table:
    with open(table, "a") as t:
        t.write(f"| {model} | {ctx} | {cache} | {draft or '-'} | {pred_mib:.1f} | {meas_mib:.1f} | {err:+.2f} % | {verdict} |\n")
sys.exit(0 if ok or dry == "1" else 1)
PY
done
echo "$fails case(s) failed"
[ $fails -eq 0 ]
