#!/bin/bash
# The EXL3 device job (started by bench/exl3-device.sh in its own process session, so that it runs
# on across calls of one warm GPU machine). Steps, each logged to $W/log/*.log:
#   1. exl (from .gpu/) on the GPU: CUDA selftest, EXL3 kernel bench, synthetic EXL3 models (llama3-8b, tinyllama-1.1b at 4.0 bpw) -- while
#      ExLlamaV3 1.6.5's extension builds (JIT) in the background;
#   2. speed: ExLlamaV3 (bench/exl3_ref_bench.py, its defaults) and `exl bench` on the same files,
#      alternating, plus the EXL2 8B figure;
#   3. the references: ExLlamaV3's converter on ref-s (once fixtures/ref-s has arrived) and
#      tests/data/exl3/make_refs.py (EXL3_INT8_GEMV=0 there only);
#   4. the CUDA backend against those references (cuda_model.exl3ref_*), then compute-sanitizer
#      (memcheck, racecheck) over the EXL3 kernels.
# Usage: exl3-device-job.sh REPO W
set -x
REPO=$1; W=$2
cd "$W"
export TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=14 PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site
G=$W/g; M=$W/m; L=$W/log; mkdir -p $L $M
step() { echo "== $(date +%T) $*"; }
nvidia-smi; python3 -c "import torch, sys; print(sys.version, torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))"

step "install ExLlamaV3 and start its JIT build"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $REPO/.gpu-exl3/whl/*.whl > $L/pip.log 2>&1
( t0=$SECONDS; python3 -c "from exllamav3.ext import exllamav3_ext as ext; print('ext ok', ext)" > $L/build.log 2>&1 && touch $W/built.ok || touch $W/built.fail
  echo "JIT build $((SECONDS - t0)) s" >> $L/build.log ) &

step "exl on the GPU"
cp -r $REPO/.gpu $G; cd $G/bin && unxz -f ../lib/*.xz *.xz; export LD_LIBRARY_PATH=$G/lib; cd $W
EXL=$G/bin/exl
timeout 300 $EXL selftest --device cuda --fixtures $G/fixtures > $L/selftest.log 2>&1; echo "selftest rc=$?" >> $L/selftest.log
EXL_BENCH=exl3 $G/bin/exl_cuda_bench > $L/cuda_bench_exl3.log 2>&1; echo "rc=$?" >> $L/cuda_bench_exl3.log
for p in tinyllama-1.1b llama3-8b; do
  $EXL synth --preset $p --bpw 4.0 --format exl3 -o $M/$p-exl3-4.0 --quiet >> $L/synth.log 2>&1
done
step "wait for the ExLlamaV3 build"
while [ ! -f $W/built.ok ] && [ ! -f $W/built.fail ]; do sleep 3; done
cat $L/build.log | tail -5

step "speed: ExLlamaV3 and exl on the same files"
if [ -f $W/built.ok ]; then
  for p in tinyllama-1.1b llama3-8b; do
    m=$M/$p-exl3-4.0
    $EXL bench -m $m --prompt 2048 --ctx 0 --gen 128 --json > $L/bench_exl_$p.json 2> $L/bench_exl_$p.log
    python3 $REPO/bench/exl3_ref_bench.py $m --prompt 2048 --gen 128 --reps 3 --json $L/bench_ref_$p.json > $L/bench_ref_$p.log 2>&1
    $EXL bench -m $m --prompt 2048 --ctx 0 --gen 128 --json > $L/bench_exl_${p}_2.json 2>> $L/bench_exl_$p.log
  done
fi
$EXL bench --synth llama3-8b --bpw 4.0 --prompt 2048 --ctx 0 --gen 128 --json > $L/bench_exl2_llama3-8b.json 2> $L/bench_exl2.log

step "references: wait for fixtures/ref-s"
for i in $(seq 1 200); do [ -f $W/fixtures/ref-s/config.json ] && break; sleep 3; done
if [ -f $W/built.ok ] && [ -f $W/fixtures/ref-s/config.json ]; then
  K=$W/kit; mkdir -p $K $W/models $W/out $W/work; cp -r $W/fixtures $K/; cp $REPO/tests/data/exl3/make_refs.py $K/
  cd $K
  for spec in "2.0 6" "3.0 6" "4.0 6" "6.0 6" "2.0 8"; do
    set -- $spec
    name=ref-s-$1bpw; [ "$2" != 6 ] && name=ref-s-$1bpw-h$2
    t1=$SECONDS
    python3 -m exllamav3.conversion.convert_model -i fixtures/ref-s -o $W/models/$name -w $W/work/$name \
        -b $1 -hb $2 -ss 4 -cr 40 -cc 1024 > $W/out/convert_$name.log 2>&1
    echo "convert $name rc=$? $((SECONDS - t1)) s"
  done
  EXL3_INT8_GEMV=0 python3 make_refs.py $W > $L/make_refs.log 2>&1; echo "make_refs rc=$?" >> $L/make_refs.log
  cd $W
  step "the CUDA backend against the references"
  mkdir -p $W/x3data; ln -sfn $W/models $W/x3data/models; ln -sfn $W/out $W/x3data/refs
  mkdir -p $W/fx/models/hf; cp -r $G/fixtures/. $W/fx/; cp -r $K/fixtures/ref-s $W/fx/models/hf/
  EXL_EXL3_DATA=$W/x3data $EXL selftest --device cuda --fixtures $W/fx --filter 'cuda_model.exl3*' > $L/selftest_exl3ref.log 2>&1
  echo "rc=$?" >> $L/selftest_exl3ref.log
  EXL_EXL3_DATA=$W/x3data $EXL selftest --device cpu --fixtures $W/fx --filter 'model_exl3' > $L/selftest_exl3ref_cpu.log 2>&1
  echo "rc=$?" >> $L/selftest_exl3ref_cpu.log
fi
step "compute-sanitizer over the EXL3 kernels"
timeout 200 compute-sanitizer --tool memcheck $EXL selftest --device cuda --fixtures $G/fixtures --filter 'cuda_kernels.exl3_*' > $L/memcheck.log 2>&1; echo "rc=$?" >> $L/memcheck.log
timeout 200 compute-sanitizer --tool racecheck $EXL selftest --device cuda --fixtures $G/fixtures --filter 'cuda_kernels.exl3_matmul*' > $L/racecheck.log 2>&1; echo "rc=$?" >> $L/racecheck.log
step "done"
touch $W/done
