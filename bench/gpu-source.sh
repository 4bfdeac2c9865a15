#!/usr/bin/env bash
# Per-instruction stall profile (ncu source page, SASS) of one kernel launch of a decode step of
# the synthetic llama3-8b: by default the 4th EXL2 GEMV launch (the first layer's down projection);
# EXL_BENCH=llama3-8b-prefill: of its 2048-token prefill instead.
# Writes NAME.csv.gz (the source page) and NAME.txt (every section), NAME defaulting to launchSKIP.
#   usage (on the GPU machine, after bench/gpu-prep.sh here):  bash bench/gpu-source.sh OUT_DIR [REGEX] [SKIP] [NAME]
set -u
out=${1:?usage: bench/gpu-source.sh OUT_DIR [REGEX] [SKIP] [NAME]}
re=${2:-exl2_gemv}
skip=${3:-3}
name=${4:-launch$skip}
mkdir -p "$out"
source "$(dirname "$0")/gpu-env.sh"
EXL_BENCH=${EXL_BENCH:-llama3-8b} timeout 200 "$ncu" --clock-control none --profile-from-start off --kernel-name "regex:$re" \
  --launch-skip "$skip" --launch-count 1 --set full -f -o /tmp/src-$name ./exl_cuda_bench ./libexl_cuda.so \
  >"$out/$name.log" 2>&1
echo "profile rc $?"
"$ncu" -i /tmp/src-$name.ncu-rep --page source --csv --print-source sass >"$out/$name.csv" 2>>"$out/$name.log"
echo "source rc $?"
"$ncu" -i /tmp/src-$name.ncu-rep --page details >"$out/$name.txt" 2>&1
gzip -f "$out/$name.csv"
