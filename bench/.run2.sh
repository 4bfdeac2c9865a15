#!/usr/bin/env bash
cd "$(dirname "$0")/.." || exit 2
(cd .gpu/bin && [ -f libexl_cuda.so.xz ] && unxz -f libexl_cuda.so.xz)
source bench/gpu-env.sh
F=../fixtures
for spec in "3.0 6" "4.0 6" "6.0 8"; do
  set -- $spec
  T0=$(date +%s.%N)
  ./exl convert -i $F/models/hf/ref-s -o /tmp/s-$1 -b $1 -hb $2 --device cuda > $OUT/convert-$1.txt 2>&1
  echo "rc $? $(echo "$(date +%s.%N) - $T0" | bc) s" >> $OUT/convert-$1.txt
  for t in wiki tiny; do
    ./exl ppl -m /tmp/s-$1 --text $F/text/heldout_$t.txt --window 512 --tokens 2048 --device cpu --json > $OUT/ppl-$1-$t.json 2>&1
  done
done
