#!/bin/bash
set -x
HERE=$1; W=$2
cd $HERE
nvidia-smi; python3 -c "import torch, sys; print(sys.version, torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))"
python3 -c "import exllamav3, transformers, safetensors, tokenizers, numpy; print('versions', exllamav3.__version__, transformers.__version__, safetensors.__version__, tokenizers.__version__, numpy.__version__)"
t0=$SECONDS
python3 -c "from exllamav3.ext import exllamav3_ext as ext; print('ext ok', ext)" || { touch $W/done; exit 1; }
echo "JIT build took $((SECONDS - t0)) s"
mkdir -p $W/models $W/out $W/work
# name bits head_bits
for spec in "2.0 6" "3.0 6" "4.0 6" "6.0 6" "2.0 8"; do
  set -- $spec
  name=ref-s-$1bpw; [ "$2" != 6 ] && name=ref-s-$1bpw-h$2
  t1=$SECONDS
  python3 -m exllamav3.conversion.convert_model -i fixtures/ref-s -o $W/models/$name -w $W/work/$name \
      -b $1 -hb $2 -ss 4 -cr 40 -cc 1024 > $W/out/convert_$name.log 2>&1
  echo "convert $name rc=$? took $((SECONDS - t1)) s"
  tail -5 $W/out/convert_$name.log
done
python3 make_refs.py $W
echo "make_refs rc=$?"
touch $W/done
