#!/usr/bin/env bash
# Twenty-third session, call 10, asked of an H200 ( .prebuilt/new3 + the working tree's Python): the backward op
# calls ranked inside the 8B and 1B layer (layer-tune, now with backward calls).
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name --format=csv > gpu.txt 2>&1; cat gpu.txt
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new3/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
export PYTHONPATH=/tmp/ov:/tmp/whl
for size in 8B 1B; do
  PYTHONUNBUFFERED=1 timeout 200 python3 -m coda.bench layer-tune --size $size \
    --ops linear_rmsnorm_bwd,linear_rmsnorm_bwd_add_,linear_swiglu_bwd --rounds 5 --out "$OUT/r/lt$size" > lt$size.log 2>&1
  echo "layer-tune $size rc=$? at $((SECONDS - start)) s"; grep -E "^\| linear|written|rror" lt$size.log | head
  tar czf "$OUT/0-all.tgz" . 2>/dev/null
done
