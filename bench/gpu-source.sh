#!/usr/bin/env bash
# Per-instruction stall profile (ncu source page, SASS) of one kernel launch of a decode step of
# the synthetic llama3-8b: by default the 4th EXL2 GEMV launch (the first layer's down projection).
#   usage (on the GPU machine, after bench/gpu-prep.sh here):  bash bench/gpu-source.sh OUT_DIR [REGEX] [SKIP]
set -u
out=${1:?usage: bench/gpu-source.sh OUT_DIR [REGEX] [SKIP]}
re=${2:-exl2_gemv}
skip=${3:-3}
mkdir -p "$out"
source "$(dirname "$0")/gpu-env.sh"
EXL_BENCH=llama3-8b timeout 200 "$ncu" --clock-control none --profile-from-start off --kernel-name "regex:$re" \
  --launch-skip "$skip" --launch-count 1 --set full -o /tmp/src ./exl_cuda_bench ./libexl_cuda.so >"$out/run.log" 2>&1
echo "profile rc $?"
"$ncu" -i /tmp/src.ncu-rep --page source --csv --print-source sass >"$out/source.csv" 2>"$out/source.err"
echo "source rc $?"
"$ncu" -i /tmp/src.ncu-rep --page details >"$out/details.txt" 2>&1
gzip -f "$out/source.csv"
