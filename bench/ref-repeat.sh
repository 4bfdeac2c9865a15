#!/usr/bin/env bash
# The reference converter (ExLlamaV2 0.2.7) run several times on the same HF model with the same
# measurement, on the GPU machine: its calibration adds two rows of random tokens that it does not
# seed, so each run quantizes differently. The spread of its own results is the yardstick for
# issue #8's "within 1 % of the reference converter" (bench/RESULTS.md, session 17). The weights come
# back to be evaluated here (`exl ppl`), so the GPU machine needs neither exl nor the fixtures.
#
#   usage (GPU machine): bash bench/ref-repeat.sh OUT_DIR SRC_DIR BPW HEAD_BITS RUNS
#   SRC_DIR holds: the HF model folder `ref-s/`, `measurement.json` (the reference's, reused with -m),
#   and the wheel (`pip download exllamav2==0.2.7 --no-deps`). Each run's output.safetensors comes
#   back as OUT_DIR/ref_BPW_N.safetensors (the device tool returns at most 8 files, 16 MiB each).
#   Then here: copy the fixture's EXL2 folder of that bpw, replace its output.safetensors, `exl ppl`.
set -uo pipefail
out=${1:?usage: bench/ref-repeat.sh OUT_DIR SRC_DIR BPW HEAD_BITS RUNS}
src=$(cd "${2:?src}" && pwd)
bpw=${3:?bpw}
hb=${4:?head bits}
runs=${5:?runs}
mkdir -p "$out"
work=${REF_WORK:-/tmp/refrep}
log=$out/summary.txt
stamp() { echo "[$(date +%T)] $*" | tee -a "$log"; }
source "$(dirname "$0")/ref-ext.sh"
ref_env "$work"
ref_build "$(ls "$src"/exllamav2-*.whl | head -n 1)" "$work" "$work"
rc=$?
stamp "extension build rc $rc in ${ref_build_s:-0} s"
[ $rc -eq 0 ] || { tail -n 40 "$work/pip.log" "$work/build.log" | tee -a "$log"; exit 1; }
for ((i = 1; i <= runs; ++i)); do
  rm -rf "$work/job$i" "$work/out$i"
  t0=$(date +%s)
  python3 -m exllamav2.conversion.convert_exl2 -i "$src/ref-s" -o "$work/job$i" -cf "$work/out$i" \
    -b "$bpw" -hb "$hb" -m "$src/measurement.json" >"$work/convert$i.log" 2>&1
  rc=$?
  stamp "run $i rc $rc in $(( $(date +%s) - t0 )) s"
  if [ $rc -ne 0 ]; then tail -n 30 "$work/convert$i.log" | tee -a "$log"; break; fi
  cp "$work/out$i/output.safetensors" "$out/ref_${bpw}_$i.safetensors"
done
cp "$work/convert1.log" "$out/convert1.log" 2>/dev/null
exit 0
