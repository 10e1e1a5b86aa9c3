#!/usr/bin/env bash
# Session 43, calls 7-9 (H100, warm; carry .prebuilt/s43m), as run (one-line commands then):
#   call 7: the 1B layer again, more rounds:  bash s43_f.sh layer
#   calls 8, 9: the layer's kernels, 1B / 8B: bash s43_f.sh kernels 1B; bash s43_f.sh kernels 8B
set -u; repo=$PWD; mkdir -p $OUT/r; cd $OUT/r; export PYTHONUNBUFFERED=1 CODA_COMMIT=d083239
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s43m/coda-*.whl > /dev/null 2>&1 || exit 1
if [ "$1" = layer ]; then
  timeout 400 python3 -m coda.bench layer --out $OUT/r/layer1b --sizes 1B --rounds 7 --iters 5 > layer1b.log 2>&1
else
  size=$2; tag=$(echo $size | tr 'B' 'b')
  timeout 300 python3 -m coda.bench kernels --size $size --variants coda,floor,hf_compile --iters 5 --m 16384 \
    --top 30 --out $OUT/r/kernels$tag > kernels$tag.log 2>&1
fi
echo rc=$?; cd $OUT && tar -czf r.tgz r && rm -rf r
