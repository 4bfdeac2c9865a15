# Sourced by the bench/gpu-*.sh scripts on the GPU machine: enters .gpu/bin (bench/gpu-prep.sh's
# layout), unpacks the carried libraries once and puts them on LD_LIBRARY_PATH; finds ncu.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here/.gpu/bin" || exit 2
for f in ../lib/*.xz ./*.xz; do if [ -e "$f" ]; then unxz -f "$f"; fi; done
export LD_LIBRARY_PATH=$PWD/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
