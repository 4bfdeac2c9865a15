#!/usr/bin/env bash
# On the GPU machine: where an EXL3 2048-token prefill's time goes (the synthetic llama3-8b of
# exl_cuda_bench, mul1 at 4 bits): Nsight Systems' kernel summary (kern.txt), else Nsight Compute's
# per-kernel durations of the first timed forward (prefill.csv), summed per kernel name.
#   usage: bash bench/exl3-prefill-profile.sh OUT_DIR     (in .gpu/bin's layout, after bench/gpu-prep.sh)
set -u
out=${1:?usage: bench/exl3-prefill-profile.sh OUT_DIR}
mkdir -p "$out"
source "$(dirname "$0")/gpu-env.sh"
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -n 1)
if [ -n "$nsys" ]; then
  EXL_BENCH=exl3-8b-prefill timeout 240 "$nsys" profile -o /tmp/exl3pf --force-overwrite true --stats=false \
    ./exl_cuda_bench ./libexl_cuda.so > "$out/run.txt" 2>&1
  "$nsys" stats --report cuda_gpu_kern_sum --format csv /tmp/exl3pf.nsys-rep > "$out/kern.csv" 2>&1
  echo "nsys rc $?"; head -25 "$out/kern.csv" | cut -c1-220
elif [ -n "$ncu" ]; then
  EXL_BENCH=exl3-8b-prefill timeout 300 "$ncu" --clock-control none --profile-from-start off \
    --metrics gpu__time_duration.sum --csv ./exl_cuda_bench ./libexl_cuda.so > "$out/prefill.csv" 2> "$out/prefill.err"
  echo "ncu rc $?"
  python3 - "$out/prefill.csv" <<'PY'
import csv, sys, collections
t = collections.Counter(); n = collections.Counter()
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; ki = head.index("Kernel Name"); vi = head.index("Metric Value"); ui = head.index("Metric Unit")
scale = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}
for r in rows[1:]:
    try: v = float(r[vi].replace(",", "")) * scale.get(r[ui], 1.0)
    except ValueError: continue
    k = r[ki].split("(")[0].split("<")[0][-60:]; t[k] += v; n[k] += 1
tot = sum(t.values())
for k, v in t.most_common(20): print(f"{v/1e6:9.2f} ms {100*v/tot:5.1f} % {n[k]:6d}  {k}")
print(f"total {tot/1e6:.2f} ms")
PY
else
  echo "no nsys or ncu"
fi
