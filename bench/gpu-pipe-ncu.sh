#!/usr/bin/env bash
# One device call: Nsight Compute on one launch of the decode pipeline (EXL_CUDA_PIPE=1,
# exl2_pipe_kernel) and, for comparison, four launch-form GEMV launches (exl2_gemv_kernel), in
# exl_cuda_bench's decode mode (tinyllama first): speed of light, warp states, scheduler, source
# counters (stall samples per SASS instruction: sass.csv, gemv-sass.csv).
# Everything is packed into OUT_DIR/ncu.tgz (a call brings back at most 8 files).
#   usage (GPU machine, after bench/gpu-prep.sh here):
#     bash bench/gpu-pipe-ncu.sh OUT_DIR [PIPE_LAUNCH_SKIP [GEMV_LAUNCH_SKIP]]
# What session 21 found: ncu does not see kernels inside the decode graphs (so every step goes
# launch by launch here), under ncu the bench runs few tokens (keep the skips small), and ncu's
# default cache control flushes the caches, instruction caches too, before each replay pass.
set -u
out=${1:?usage: bench/gpu-pipe-ncu.sh OUT_DIR [PIPE_LAUNCH_SKIP [GEMV_LAUNCH_SKIP]]}
pipe_skip=${2:-60}
gemv_skip=${3:-100}
export EXL_CUDA_GRAPHS=0
[[ $out == /* ]] || out=$PWD/$out
mkdir -p "$out"
source "$(dirname "$0")/gpu-env.sh"
o=$(mktemp -d)
[ -n "$ncu" ] || { echo "no ncu" | tee "$out/error.txt"; exit 3; }
# profile TAG KERNEL SKIP COUNT [VAR=VALUE ...]: $o/TAG.ncu-rep, TAG-details.txt, TAG-sass.csv.
profile() {
  local tag=$1 kernel=$2 skip=$3 count=$4
  shift 4
  env "$@" EXL_BENCH=decode timeout 300 "$ncu" --clock-control none --cache-control none \
    --kernel-name-base mangled --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count "$count" \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
    --section SourceCounters --section InstructionStats --section LaunchStats --import-source yes \
    -o "$o/$tag" ./exl_cuda_bench ./libexl_cuda.so >"$o/ncu-$tag-run.txt" 2>&1
  echo "ncu $tag rc $?" | tee -a "$o/log.txt"
  "$ncu" -i "$o/$tag.ncu-rep" --print-details all >"$o/$tag-details.txt" 2>&1
  "$ncu" -i "$o/$tag.ncu-rep" --page source --csv --print-source sass >"$o/$tag-sass.csv" 2>&1
  echo "export $tag rc $?" | tee -a "$o/log.txt"
}
profile pipe exl2_pipe_kernel "$pipe_skip" 1 EXL_CUDA_PIPE=1
profile gemv exl2_gemv_kernel "$gemv_skip" 4
tar czf "$out/ncu.tgz" -C "$o" .
grep -E 'Stall|Issue|Warp Cycles|Active Warps|Eligible|No Eligible' "$o/pipe-details.txt" | head -40
