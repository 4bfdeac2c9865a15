#!/usr/bin/env bash
# Prefill on the GPU machine (after bench/gpu-prep.sh): alternating rounds of exl_cuda_bench mode
# llama3-8b-prefill (a 2048-token prompt, 4-bit g128) under several settings (bench/gpu-ab.sh),
# then the time of each kernel over one such run: nsys where installed (concurrent kernels as
# they ran), else Nsight Compute's durations (kernels serialised). The synthetic model's build
# kernels (fill_*, repack) are in the summary too.
#   usage: bash bench/gpu-prefill.sh OUT_DIR ROUNDS SETTING [SETTING ...]
#   SETTING as for bench/gpu-ab.sh ("-": the defaults; MODULE=FILE another module), e.g.
#     bash bench/gpu-prefill.sh $OUT/prefill 2 - EXL_CUDA_DQ_OVERLAP=0 "MODULE=libexl_cuda_base.so"
set -u
out=${1:?usage: bench/gpu-prefill.sh OUT_DIR ROUNDS SETTING ...}
rounds=${2:?rounds}
shift 2
mkdir -p "$out"
[[ $out == /* ]] || out=$PWD/$out
here=$(cd "$(dirname "$0")" && pwd)
settings=()
for s in "$@"; do
  if [[ $s == "-" ]]; then settings+=("EXL_BENCH=llama3-8b-prefill"); else settings+=("EXL_BENCH=llama3-8b-prefill $s"); fi
done
bash "$here/gpu-ab.sh" "$out/ab.txt" "$rounds" "${settings[@]}" | grep prefill
source "$here/gpu-env.sh"
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -n 1)
if [ -n "$nsys" ]; then
  EXL_BENCH=llama3-8b-prefill timeout 300 "$nsys" profile -o "$out/prefill" --force-overwrite true \
    ./exl_cuda_bench ./libexl_cuda.so >"$out/profile.log" 2>&1
  "$nsys" stats --report cuda_gpu_kern_sum --format csv "$out/prefill.nsys-rep" >"$out/kernels.csv" 2>>"$out/profile.log"
  rm -f "$out/prefill.nsys-rep" "$out/prefill.sqlite"
else
  EXL_BENCH=llama3-8b-prefill timeout 400 "$ncu" --metrics gpu__time_duration.sum --print-summary per-kernel \
    ./exl_cuda_bench ./libexl_cuda.so >"$out/kernels.txt" 2>"$out/profile.log"
fi
echo "profile: $(ls "$out")"
