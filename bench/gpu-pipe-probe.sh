#!/usr/bin/env bash
# One device call: where the decode pipeline's consumer time goes (session 21). The module's SASS
# (cuobjdump, to count the instructions of the consumer's unit loop against the launch form's),
# pipeline traces (EXL_PIPE_TRACE=1): the default form, 16 consumer warps, the input in stored order
# (EXL_PIPE_ORDER=1), the mma left out (EXL_PIPE_SKIP=1); then A/B rounds against the launches.
#   usage (GPU machine, after bench/gpu-prep.sh here): bash bench/gpu-pipe-probe.sh OUT_DIR [ROUNDS]
set -u
out=${1:?usage: bench/gpu-pipe-probe.sh OUT_DIR [ROUNDS]}
rounds=${2:-2}
[[ $out == /* ]] || out=$PWD/$out
mkdir -p "$out"
bench=$(cd "$(dirname "$0")" && pwd)
source "$bench/gpu-env.sh"
dump=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null | head -n 1)
if [ -n "$dump" ]; then
  "$dump" -sass libexl_cuda.so 2>&1 | gzip -c >"$out/sass.txt.gz"
  echo "sass rc $?" >>"$out/probe.log"
fi
trace() {  # tag, settings...
  local tag=$1
  shift
  env "$@" EXL_CUDA_PIPE=1 EXL_PIPE_TRACE=1 EXL_BENCH=decode timeout 60 ./exl_cuda_bench ./libexl_cuda.so \
    >"$out/trace-$tag.log" 2>&1
  echo "trace $tag rc $?: $(grep -E 'decode ctx' "$out/trace-$tag.log" | tr -s ' ' | tr '\n' ' ')" >>"$out/probe.log"
}
trace default
trace warps16 EXL_PIPE_WARPS=16
trace order EXL_PIPE_ORDER=1
trace skip1 EXL_PIPE_SKIP=1
bash "$bench/gpu-ab.sh" "$out/ab.txt" "$rounds" - "EXL_CUDA_PIPE=1" "EXL_CUDA_PIPE=1 EXL_PIPE_WARPS=16" \
  "EXL_CUDA_PIPE=1 EXL_PIPE_ATTN=1" >/dev/null 2>&1
cat "$out/probe.log"
