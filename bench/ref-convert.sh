#!/usr/bin/env bash
# The reference converter (ExLlamaV2 0.2.7) beside ours on one HF or GGUF model, on the GPU
# machine: builds ExLlamaV2's extension there from its wheel (torch's JIT build; nothing is
# fetched), converts with its default calibration, converts with ours (measured and --fast), and
# measures every file's perplexity with our engine on the fixtures' held-out texts, as
# bench/RESULTS.md records the converter (issues #8 and #9: is a quality gap ours or the source's).
#
#   usage (GPU machine, after bench/gpu-prep.sh here and the wheel copied into .gpu/):
#     bash bench/ref-convert.sh OUT_DIR MODEL BPW [HEAD_BITS]
#   MODEL: an HF folder or a .gguf file (imported to FP16 with `exl import` first).
#   The wheel: `pip download exllamav2==0.2.7 --no-deps -d .gpu/wheels` on this machine.
#   A model over what one call carries (64 MiB with .gpu) goes in pieces, one git-ignored folder
#   per call while the machine stays warm (a carried path replaces only itself there):
#   `split -b 45M FILE .gpu-a/part.` then move the later pieces to .gpu-b/, .gpu-c/; carry
#   [".gpu"], then [".gpu-a"], then [".gpu-b"] with the run, which does `cat .gpu-?/part.* > F`.
#   Environment: REF_STAGES (default "build ref ours fast ppl"), REF_WORK (default /tmp/refconv).
# Results: OUT_DIR/summary.txt (one line per file: wiki ppl, tiny ppl, both), the logs beside it,
# and the reference's measurement.json (so our converter can reuse it: `exl convert --measurement`).
set -uo pipefail
out=${1:?usage: bench/ref-convert.sh OUT_DIR MODEL BPW [HEAD_BITS]}
model=${2:?model}
bpw=${3:?bpw}
hb=${4:-6}
mkdir -p "$out"
out=$(cd "$out" && pwd)
case $model in /*) ;; *) model=$PWD/$model ;; esac
stages=${REF_STAGES:-build ref ours fast ppl}
work=${REF_WORK:-/tmp/refconv}
source "$(dirname "$0")/ref-ext.sh"
source "$(dirname "$0")/gpu-env.sh"  # enters .gpu/bin
fixtures=$(cd ../fixtures 2>/dev/null && pwd || echo /nonexistent)
has() { [[ " $stages " == *" $1 "* ]]; }
stamp() { echo "[$(date +%T)] $*" | tee -a "$out/summary.txt"; }
mkdir -p "$work"

hf=$model
if [[ $model == *.gguf ]]; then
  hf=$work/hf
  if [[ ! -f $hf/config.json ]]; then
    stamp "import $model"
    ./exl import -i "$model" -o "$hf" >"$out/import.log" 2>&1 || { stamp "import failed"; exit 1; }
  fi
fi

ref_env "$work"
if has build; then
  wheel=$(ls ../wheels/exllamav2-*.whl 2>/dev/null | head -n 1)
  [[ -n $wheel ]] || { stamp "no exllamav2 wheel in .gpu/wheels"; exit 1; }
  stamp "building the ExLlamaV2 extension (JIT, $MAX_JOBS jobs)"
  ref_build "$wheel" "$work" "$out"
  stamp "extension build rc $? in ${ref_build_s:-0} s"
fi

if has ref; then
  rm -rf "$work/ref-job" "$work/ref-$bpw"
  stamp "reference converter: $bpw bpw, head $hb"
  t0=$(date +%s)
  python3 -m exllamav2.conversion.convert_exl2 -i "$hf" -o "$work/ref-job" -cf "$work/ref-$bpw" -b "$bpw" -hb "$hb" \
    >"$out/ref-convert.log" 2>&1
  stamp "reference converter rc $? in $(( $(date +%s) - t0 )) s"
  cp "$work/ref-job/measurement.json" "$out/ref-measurement.json" 2>/dev/null
fi

if has ours; then
  rm -rf "$work/ours-$bpw"
  t0=$(date +%s)
  ./exl convert -i "$hf" -o "$work/ours-$bpw" -b "$bpw" -hb "$hb" --device cuda >"$out/ours-convert.log" 2>&1
  stamp "ours (measured) rc $? in $(( $(date +%s) - t0 )) s"
  if [[ -f $out/ref-measurement.json ]]; then
    rm -rf "$work/ours-refm-$bpw"
    ./exl convert -i "$hf" -o "$work/ours-refm-$bpw" -b "$bpw" -hb "$hb" --device cuda \
      --measurement "$out/ref-measurement.json" >"$out/ours-refm-convert.log" 2>&1
    stamp "ours with the reference measurement rc $?"
  fi
fi
if has fast; then
  rm -rf "$work/fast-$bpw"
  ./exl convert -i "$hf" -o "$work/fast-$bpw" -b "$bpw" -hb "$hb" --fast --device cuda >"$out/fast-convert.log" 2>&1
  stamp "ours --fast rc $?"
fi

if has ppl; then
  for d in "$hf" "$work/ref-$bpw" "$work/ours-$bpw" "$work/ours-refm-$bpw" "$work/fast-$bpw"; do
    [[ -f $d/config.json ]] || continue
    line="$(basename "$d"):"
    for t in wiki tiny; do
      p=$(./exl ppl -m "$d" --text "$fixtures/text/heldout_$t.txt" --window 512 --json 2>>"$out/ppl.log" |
          python3 -c 'import json,sys; j=json.load(sys.stdin); print(round(j["ppl"], 4))' 2>>"$out/ppl.log")
      line="$line $t $p"
    done
    stamp "$line"
  done
fi
