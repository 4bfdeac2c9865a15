#!/bin/bash
# One device call of the EXL3 measurements (bench/exl3-device-job.sh): starts the job on the first
# call, then waits up to WAIT_S seconds (default 540) and returns what is there so far under $OUT
# (logs.tgz, refs.tgz, and one tarball per converted reference model without the shard that holds
# only the fp16 embedding). Call again on the same warm machine to pick the job up.
# Carry .gpu and .gpu-exl3/whl on the first call, .gpu-exl3/fixtures (the ref-s fixture) on a later one.
cd "$(dirname "$0")/.."; REPO=$PWD
W=/tmp/exl3dev; mkdir -p $W
# The ref-s fixture, whenever a call carries it (the job waits for $W/fixtures/ref-s).
if [ -f .gpu-exl3/fixtures/ref-s/config.json ] && [ ! -f $W/fixtures/ref-s/config.json ]; then
  mkdir -p $W/fixtures.tmp && cp -r .gpu-exl3/fixtures/. $W/fixtures.tmp/ && mv $W/fixtures.tmp $W/fixtures
fi
if [ ! -f $W/started ]; then
  touch $W/started
  setsid nohup bash $REPO/bench/exl3-device-job.sh $REPO $W > $W/job.log 2>&1 < /dev/null &
fi
end=$((SECONDS + ${WAIT_S:-540}))
while [ ! -f $W/done ] && [ $SECONDS -lt $end ]; do sleep 5; done
cp $W/job.log $W/log/ 2>/dev/null
tar czf $OUT/logs.tgz -C $W log $( [ -d $W/out ] && cd $W && ls out/*.log 2>/dev/null ) 2>/dev/null
if [ -f $W/out/manifest.json ]; then
  tar czf $OUT/refs.tgz -C $W --exclude='*.log' --exclude='*.exclude' --exclude='*.ok' out
  for m in $W/models/*/; do
    n=$(basename $m)
    [ -f $W/out/$n.ok ] && tar czf $OUT/$n.tgz -C $W/models --exclude-from=$W/out/$n.exclude $n
  done
fi
ls -la $OUT; grep "^== \|^convert\|rc=" $W/job.log | tail -30
for f in $W/log/selftest*.log; do echo "-- $f"; grep -E "passed|FAIL" $f | tail -5; done 2>/dev/null
