#!/usr/bin/env bash
# One device call: Nsight Compute on one launch of the decode pipeline (EXL_CUDA_PIPE=1,
# exl2_pipe_kernel) of the synthetic llama3-8b in exl_cuda_bench's decode mode: speed of light,
# warp states, scheduler, source counters (stall samples per SASS instruction, sass.csv).
# Everything is packed into OUT_DIR/ncu.tgz (a call brings back at most 8 files).
#   usage (GPU machine, after bench/gpu-prep.sh here):  bash bench/gpu-pipe-ncu.sh OUT_DIR [LAUNCH_SKIP [GEMV_LAUNCH_SKIP]]
set -u
out=${1:?usage: bench/gpu-pipe-ncu.sh OUT_DIR [LAUNCH_SKIP [GEMV_LAUNCH_SKIP]]}
skip=${2:-60}  # a launch of tinyllama past the first steps (under ncu the bench runs few tokens)
# ncu does not see the kernels inside the decode graphs: every step launch by launch.
export EXL_CUDA_GRAPHS=0
[[ $out == /* ]] || out=$PWD/$out
mkdir -p "$out"
source "$(dirname "$0")/gpu-env.sh"
o=$(mktemp -d)
[ -n "$ncu" ] || { echo "no ncu" | tee "$out/error.txt"; exit 3; }
EXL_CUDA_PIPE=1 EXL_BENCH=decode timeout 300 "$ncu" --clock-control none --cache-control none --graph-profiling node --kernel-name-base mangled --kernel-name regex:exl2_pipe_kernel \
  --launch-skip "$skip" --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section SourceCounters --section InstructionStats --section LaunchStats --import-source yes \
  -o "$o/pipe" ./exl_cuda_bench ./libexl_cuda.so >"$o/ncu-run.txt" 2>&1
echo "ncu rc $?" | tee "$o/log.txt"
"$ncu" -i "$o/pipe.ncu-rep" --print-details all >"$o/details.txt" 2>&1
"$ncu" -i "$o/pipe.ncu-rep" --page source --csv --print-source sass >"$o/sass.csv" 2>&1
echo "export rc $?" | tee -a "$o/log.txt"
# The launch form for comparison: four consecutive GEMV launches of the 8B (one layer's q/k/v,
# o, gate/up, down), the same sections.
EXL_BENCH=decode timeout 300 "$ncu" --clock-control none --cache-control none --graph-profiling node --kernel-name-base mangled --kernel-name regex:exl2_gemv_kernel \
  --launch-skip "${3:-100}" --launch-count 4 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section Occupancy --section SourceCounters --section InstructionStats --section LaunchStats --import-source yes \
  -o "$o/gemv" ./exl_cuda_bench ./libexl_cuda.so >"$o/ncu-gemv-run.txt" 2>&1
echo "ncu gemv rc $?" | tee -a "$o/log.txt"
"$ncu" -i "$o/gemv.ncu-rep" --print-details all >"$o/gemv-details.txt" 2>&1
"$ncu" -i "$o/gemv.ncu-rep" --page source --csv --print-source sass >"$o/gemv-sass.csv" 2>&1
tar czf "$out/ncu.tgz" -C "$o" .
grep -E 'Stall|Issue|Warp Cycles|Active Warps|Eligible|No Eligible' "$o/details.txt" | head -40
