#!/usr/bin/env bash
# One GPU-machine session for the benchmarks that need synthetic models: writes the models with
# `exl synth` into a work folder, runs the issue-10 server benchmark (bench/serve_bench.py) and the
# issue-6 plan-vs-actual table (bench/plan_vs_actual.sh), and leaves logs, JSON and markdown in
# OUT_DIR. Steps run in priority order; one that would not end within the time budget is skipped
# (and said so), so the whole fits one device call.
#
# usage: bench/gpu-session.sh [-o OUT_DIR] [--budget SECONDS] [--part small|70b|all] [--work DIR]
#                             [-x EXL] [--dry-run]
#   --budget   wall seconds for everything (default 560: one 600 s call with room to copy back)
#   --part     small: tinyllama/llama3.2-1b/llama3-8b; 70b: only the llama3-70b cases; all (default)
#   --work     where the models go (default /tmp/exl-synth; about 17 GB, 37 GB more for 70b, which
#              first removes the 2.5/6.0 bpw 8B models: the GPU machine has 64 GiB of disk)
#   --dry-run  no GPU: every preset becomes test-tiny, contexts shrink, everything on the CPU
# exl: -x, else $EXL, else .gpu/bin/exl (bench/gpu-prep.sh layout), else build/*/app/cli/exl.
# Device call:  bash bench/gpu-session.sh -o $OUT --budget 560
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$here/gpu-session-out}
BUDGET=560
PART=all
WORK=/tmp/exl-synth
EXL=${EXL:-}
DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    -o) OUT=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --part) PART=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    -x) EXL=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
START=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - START))); }
if [ -z "$EXL" ] && [ -x "$here/.gpu/bin/exl" ]; then
  EXL=$here/.gpu/bin/exl
  for f in "$here"/.gpu/lib/*.xz "$here"/.gpu/bin/*.xz; do if [ -e "$f" ]; then unxz -f "$f"; fi; done
  export LD_LIBRARY_PATH="$here/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -n "$EXL" ] && [ -x "$EXL" ] || { for c in "$here"/build/*/app/cli/exl; do [ -x "$c" ] && EXL=$c && break; done; }
[ -x "$EXL" ] || { echo "exl not found (bench/gpu-prep.sh, or -x)" >&2; exit 2; }
EXL=$(cd "$(dirname "$EXL")" && pwd)/$(basename "$EXL")
export EXL
mkdir -p "$OUT" "$WORK"
LOG=$OUT/session.log
say() { echo "[$(( $(date +%s) - START ))s] $*" | tee -a "$LOG"; }

DEVICE=cuda
PVA=(bash "$here/bench/plan_vs_actual.sh" -x "$EXL" -s "$WORK" -t "$OUT/plan_vs_actual.md")
if [ $DRY -eq 1 ]; then
  DEVICE=cpu
  PVA+=(--dry-run)
fi
# m PRESET: the preset a step uses (test-tiny in a dry run); c CTX: the context (shrunk in a dry run).
m() { if [ $DRY -eq 1 ]; then echo test-tiny; else echo "$1"; fi; }
c() { if [ $DRY -eq 1 ]; then echo $(( $1 > 1024 ? 1024 : $1 )); else echo "$1"; fi; }

# step NAME SECONDS CMD...: runs CMD (output to OUT/NAME.log and the session log) when about
# SECONDS are left, with a timeout at the end of the budget.
skipped=()
step() {
  local name=$1 need=$2; shift 2
  local l; l=$(left)
  if [ "$l" -lt "$need" ]; then
    say "skip $name: needs about ${need}s, ${l}s left"; skipped+=("$name"); return 0
  fi
  say "start $name"
  local t0; t0=$(date +%s)
  timeout --signal=TERM --kill-after=10 $((l - 5)) "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 25 "$OUT/$name.log" | sed 's/\r/\n/g' | tail -n 25 >>"$LOG"
  say "end $name: rc $rc, $(( $(date +%s) - t0 ))s"
  return 0
}

synth() {  # synth PRESET BPW: into WORK/PRESET-BPW (as plan_vs_actual.sh names them) unless there
  local dir="$WORK/$1-$2"
  [ -f "$dir/config.json" ] && { echo "$dir exists"; return 0; }
  local tv=(); [ -x /usr/bin/time ] && tv=(/usr/bin/time -v)
  "${tv[@]}" "$EXL" synth --preset "$1" --bpw "$2" -o "$dir" 2>&1 | tr '\r' '\n' |
    grep -E "wrote|Elapsed|Maximum resident|error" || true
  [ -f "$dir/config.json" ]
}
export -f synth
export WORK

{
  say "exl: $EXL; out: $OUT; work: $WORK; budget ${BUDGET}s; part $PART; dry-run $DRY"
  "$EXL" --version 2>&1 | head -20
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version,clocks.max.memory --format=csv
  else
    echo "nvidia-smi not found"
  fi
  df -h "$WORK" | tail -1
  nproc
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt" >>"$LOG"

T8=$(m llama3-8b); TT=$(m tinyllama-1.1b); T1=$(m llama3.2-1b); T70=$(m llama3-70b)
if [ "$PART" != 70b ]; then
  # Models first (the synth speed is a result too: the brief's 10-minute bound for the 8B).
  step synth_tinyllama_4.0 30 bash -c 'synth "$@"' synth "$TT" 4.0
  step synth_llama3-8b_4.0 120 bash -c 'synth "$@"' synth "$T8" 4.0
  # Issue 10: server vs exl bench.
  step serve_tinyllama 90 python3 "$here/bench/serve_bench.py" --exl "$EXL" -m "$WORK/$TT-4.0" --device "$DEVICE" \
    --json "$OUT/serve_tinyllama-1.1b.json"
  step serve_llama3-8b 120 python3 "$here/bench/serve_bench.py" --exl "$EXL" -m "$WORK/$T8-4.0" --device "$DEVICE" \
    --port 5078 --json "$OUT/serve_llama3-8b.json"
  # Issue 6: the 12 configurations (70B last).
  step pva_tinyllama 120 "${PVA[@]}" "$TT@4.0:$(c 2048):fp16" "$TT@4.0:$(c 2048):q4" "$TT@4.0:$(c 32768):fp16" \
    "$TT@4.0:$(c 32768):q4"
  step pva_llama3-8b_4.0 90 "${PVA[@]}" "$T8@4.0:$(c 8192):fp16"
  step pva_llama3-8b_4.0_65536_q4 150 "${PVA[@]}" "$T8@4.0:$(c 65536):q4"
  step pva_llama3-8b_draft 120 "${PVA[@]}" "$T8@4.0:$(c 8192):fp16:64:$T1@4.0"
  step pva_llama3-8b_2.5 120 "${PVA[@]}" "$T8@2.5:$(c 8192):fp16"
  step pva_llama3-8b_6.0 150 "${PVA[@]}" "$T8@6.0:$(c 8192):fp16"
fi
if [ "$PART" != small ]; then
  # Disk: 64 GiB on the GPU machine; the 70B at 4.0 bpw takes about 37 GB.
  rm -rf "$WORK/$T8-2.5" "$WORK/$T8-6.0"
  free_gb=$(df -BG --output=avail "$WORK" | tail -1 | tr -dc 0-9)
  if [ $DRY -eq 0 ] && [ "${free_gb:-0}" -lt 40 ]; then
    say "skip llama3-70b: ${free_gb} GB free in $WORK, needs 40"; skipped+=(llama3-70b)
  else
    step synth_llama3-70b_4.0 300 bash -c 'synth "$@"' synth "$T70" 4.0
    if [ -f "$WORK/$T70-4.0/config.json" ]; then
      step pva_llama3-70b_8192_q4 120 "${PVA[@]}" "$T70@4.0:$(c 8192):q4"
      step pva_llama3-70b_32768_q4 150 "${PVA[@]}" "$T70@4.0:$(c 32768):q4"
    fi
  fi
fi

{
  echo "## Session summary ($(date -u +%Y-%m-%dT%H:%MZ), $(( $(date +%s) - START )) s)"
  echo
  grep -h "" "$OUT"/env.txt | head -3
  echo
  echo "### Synth"
  grep -h "^wrote" "$OUT"/synth_*.log 2>/dev/null
  echo
  echo "### Server vs exl bench (issue 10)"
  grep -h "overhead" "$OUT"/serve_*.log 2>/dev/null
  echo
  echo "### Predicted vs measured (issue 6)"
  cat "$OUT/plan_vs_actual.md" 2>/dev/null
  echo
  [ ${#skipped[@]} -gt 0 ] && echo "skipped (time or disk): ${skipped[*]}"
} >"$OUT/summary.md"
cat "$OUT/summary.md" | tee -a "$LOG"
