#!/bin/bash
# Makes the EXL3 reference models and outputs with the real ExLlamaV3 on a CUDA machine.
# Layout expected next to this script (copied there by the caller):
#   whl/        exllamav3-1.6.5-py3-none-any.whl and the pure-Python/binary wheels its import needs
#   fixtures/   ref-s (HF fp16 model folder), prompts.json, ppl_ids.json
# Results go to $W (default /tmp/exl3work); $OUT receives tarballs (one per model + refs + logs).
# The work runs in its own process session so that a second call can pick it up while it continues.
cd "$(dirname "$0")"; HERE=$PWD
export TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 EXL3_INT8_GEMV=0 PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site
W=${W:-/tmp/exl3work}; mkdir -p $W
if [ ! -f $W/started ]; then
  touch $W/started
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site whl/*.whl > $W/pip.log 2>&1
  setsid nohup bash "$HERE/make_refs_job.sh" "$HERE" "$W" > $W/job.log 2>&1 < /dev/null &
fi
end=$((SECONDS + ${WAIT_S:-550}))
while [ ! -f $W/done ] && [ $SECONDS -lt $end ]; do sleep 5; done
cp $W/job.log $W/pip.log $OUT/ 2>/dev/null
if [ -d $W/models ]; then
  for m in $W/models/*/; do
    n=$(basename $m)
    [ -f $W/out/$n.ok ] && tar czf $OUT/$n.tgz -C $W/models --exclude-from=$W/out/$n.exclude $n
  done
fi
[ -d $W/out ] && tar czf $OUT/refs.tgz -C $W out
ls -la $OUT; tail -40 $W/job.log
