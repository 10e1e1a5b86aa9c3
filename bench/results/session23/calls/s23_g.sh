#!/usr/bin/env bash
# Twenty-third session, call 7, asked of an H200 (.prebuilt/new3 + the working tree's Python): the
# forward ops ranked inside the 8B layer for the H200's table; the 8B and 1B layer; the main job.
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > gpu.txt 2>&1; cat gpu.txt
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new3/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
export PYTHONPATH=/tmp/ov:/tmp/whl
PYTHONUNBUFFERED=1 timeout 100 python3 -m coda.bench layer-tune --size 8B \
  --ops linear_rmsnorm_swiglu,linear_rmsnorm_rope,linear_residual_rms --rounds 7 --out "$OUT/r/lt8B" > lt8B.log 2>&1
echo "layer-tune 8B rc=$? at $((SECONDS - start)) s"; grep -E "^\| linear|written|rror" lt8B.log | head
tar czf "$OUT/0-all.tgz" . 2>/dev/null
for spec in "8B 3" "1B 5"; do
  set -- $spec
  PYTHONUNBUFFERED=1 timeout 120 python3 -m coda.bench layer --out "$OUT/r/layer$1" --sizes $1 --rounds 7 --iters $2 > layer$1.log 2>&1
  echo "layer $1 rc=$? at $((SECONDS - start)) s"; tail -4 layer$1.log; grep cudaMalloc layer$1.log
  tar czf "$OUT/0-all.tgz" . 2>/dev/null
done
cd "$repo"
(OUT="$OUT/r/train" CODA_WHEEL=$(ls "$repo"/.prebuilt/new3/coda-*.whl) timeout 300 scripts/device-run.sh train > "$OUT/r/train.log" 2>&1)
echo "train rc=$? at $((SECONDS - start)) s"; tail -9 "$OUT/r/train.log"
cd "$OUT/r" && tar czf "$OUT/0-all.tgz" . 2>/dev/null
