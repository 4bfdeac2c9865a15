#!/usr/bin/env bash
# One GPU-machine call: ExLlamaV3 1.6.5 (wheels in .gpu-exl3/whl, its CUDA extension built here by
# JIT, about 4.5 min, while exl writes the models) and exl (.gpu/ from bench/gpu-prep.sh) on the same
# synthetic EXL3 4.0 bpw models (tinyllama-1.1b, llama3-8b): exl, exl with the EXL3 output transform
# folded into the GEMV (EXL_CUDA_EXL3_FOLD=1), ExLlamaV3 (bench/exl3_ref_bench.py, its defaults), exl
# again. JSON per run under $OUT, a summary on stdout.
#   usage: [PRESETS="llama3-8b"] [VARIANTS="name:VAR=V,VAR2=V2 ..."] [DURING="cmd"] [AFTER="cmd"]
#          bash bench/exl3-compare.sh      (carry .gpu and .gpu-exl3/whl)
# VARIANTS: exl runs before ExLlamaV3's, each with its environment (default "exl: fold:EXL_CUDA_EXL3_FOLD=1";
# a module built beside .gpu/bin's in the same build tree is picked by EXL_CUDA_MODULE). DURING runs while
# ExLlamaV3's extension builds (correctness checks, not timings), AFTER at the end.
set -u
REPO=$PWD; W=/tmp/x3cmp; mkdir -p $W/site $W/m
export TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=14 PYTHONPATH=$W/site PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target $W/site .gpu-exl3/whl/*.whl > $W/pip.log 2>&1
(t0=$SECONDS; python3 -c "from exllamav3.ext import exllamav3_ext" > $W/build.log 2>&1
 echo "rc=$? JIT $((SECONDS - t0)) s" >> $W/build.log) &
bp=$!
(cd .gpu/bin && unxz -f ../lib/*.xz ./*.xz 2>/dev/null)
export LD_LIBRARY_PATH=$REPO/.gpu/lib; EXL=$REPO/.gpu/bin/exl
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
for p in ${PRESETS:-tinyllama-1.1b llama3-8b}; do $EXL synth --preset $p --bpw 4.0 --format exl3 -o $W/m/$p --quiet; done
if [ -n "${DURING:-}" ]; then (cd .gpu/bin && bash -c "$DURING") > $OUT/during.log 2>&1; tail -5 $OUT/during.log; fi
wait $bp; tail -2 $W/build.log
b() { "$EXL" bench -m "$1" --prompt 2048 --ctx 0 --gen 128 --json > "$2" 2> "$2.err"; }
for p in ${PRESETS:-tinyllama-1.1b llama3-8b}; do
  m=$W/m/$p
  for v in ${VARIANTS:-exl: fold:EXL_CUDA_EXL3_FOLD=1}; do
    name=${v%%:*}; envs=${v#*:}
    (IFS=,; for e in $envs; do [ -n "$e" ] && export "$e"; done; b $m $OUT/${name}_$p.json)
  done
  python3 bench/exl3_ref_bench.py $m --prompt 2048 --gen 128 --reps 3 --json $OUT/ref_$p.json > $OUT/ref_$p.log 2>&1
  b $m $OUT/exl2nd_$p.json
done
if [ -n "${AFTER:-}" ]; then (cd .gpu/bin && bash -c "$AFTER") > $OUT/after.log 2>&1; tail -20 $OUT/after.log; fi
python3 - "$OUT" <<'PY'
import json, sys, glob, os
out = sys.argv[1]
for f in sorted(glob.glob(out + "/*.json")):
    try: d = json.load(open(f))
    except Exception as e: print(os.path.basename(f), "unreadable", e); continue
    if "decode_tokens_per_s" in d:
        print(f"{os.path.basename(f):32s} decode {d['decode_tokens_per_s']:8.1f} tok/s ({d['decode'][0]['percent_of_bound']:.1f} % of {d['decode'][0]['bound_tokens_per_s']:.1f})  prefill {d['prefill_tokens_per_s']:9.0f}")
    else:
        print(f"{os.path.basename(f):32s}", json.dumps(d)[:400])
PY
