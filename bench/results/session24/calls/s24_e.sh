#!/usr/bin/env bash
# Twenty-fourth session, call 5 (H100; .prebuilt/s24): every fused op in one process at 16384 and a
# random M (the end state: the two layer-tuned H100 rows and the RMSNorm backward without 128x192).
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > gpu.txt 2>&1
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/s24/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
export PYTHONPATH=/tmp/ov:/tmp/whl
PYTHONUNBUFFERED=1 timeout 570 python3 -m coda.bench ops --out "$OUT/r/ops" --models 1B,8B --tokens 16384 --random-tokens --rounds 5 > ops.log 2>&1
echo "ops rc=$? at $((SECONDS - start)) s"; grep -iE "random" ops.log | head -1; grep -cE "^\| linear" ops.log
tar czf "$OUT/0-all.tgz" . 2>/dev/null
