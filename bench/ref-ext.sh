# Sourced by bench/ref-convert.sh and bench/ref-repeat.sh on the GPU machine: ExLlamaV2 0.2.7 from
# its wheel into a work folder (nothing is fetched there) and its C++/CUDA extension built by torch's
# JIT, the environment exported for the converter's runs.
#   ref_env WORK                    PYTHONPATH, TORCH_CUDA_ARCH_LIST, MAX_JOBS
#   ref_build WHEEL WORK LOG_DIR    pip install + extension build; returns the build's status,
#                                   logs in LOG_DIR/pip.log and LOG_DIR/build.log, seconds in ref_build_s
ref_env() {
  export PYTHONPATH=$1/py${PYTHONPATH:+:$PYTHONPATH}
  export TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=${MAX_JOBS:-16}
}
ref_build() {
  local wheel=$1 work=$2 logs=$3 t0 rc
  mkdir -p "$work/py" "$logs"
  python3 -m pip install --no-index --no-deps --target "$work/py" "$wheel" >"$logs/pip.log" 2>&1 || return 1
  # The converter imports fastparquet at the top of its tokenizer module but uses it only for a
  # user's parquet calibration file; the default calibration never reaches it.
  python3 -c "import fastparquet" 2>/dev/null || : >"$work/py/fastparquet.py"
  t0=$(date +%s)
  python3 -c "import exllamav2.ext" >"$logs/build.log" 2>&1
  rc=$?
  ref_build_s=$(( $(date +%s) - t0 ))
  return $rc
}
