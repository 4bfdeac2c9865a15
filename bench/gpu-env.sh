# Sourced by the bench/gpu-*.sh scripts on the GPU machine: enters .gpu/bin (bench/gpu-prep.sh's
# layout), unpacks the carried libraries once and puts them on LD_LIBRARY_PATH; finds ncu and
# compute-sanitizer.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here/.gpu/bin" || exit 2
for f in ../lib/*.xz ./*.xz; do if [ -e "$f" ]; then unxz -f "$f"; fi; done
export LD_LIBRARY_PATH=$PWD/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -n 1)
# sanitize TOOL FILTER LOG [SECONDS]: compute-sanitizer TOOL over `exl selftest --filter FILTER`
# (output in LOG); prints the exit status, the tool's summary and the selftest's count.
sanitize() {
  timeout "${4:-60}" "$cs" --tool "$1" ./exl selftest --device cuda --fixtures ../fixtures --filter "$2" >"$3" 2>&1
  echo "$1 rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed' "$3" | tr '\n' ' ')"
}
start=$(date +%s)
# say MESSAGE: the message after the seconds since the script started, also appended to $log if set.
say() { echo "[$(( $(date +%s) - start ))s] $*" | tee -a "${log:-/dev/null}"; }
