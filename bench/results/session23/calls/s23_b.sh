#!/usr/bin/env bash
# Twenty-third session, call 2 (H100, warm; .prebuilt/new2 + the working tree's Python): the 8B and
# 1B layer with the in-place residual gradient, before any table change.
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name --format=csv > gpu.txt 2>&1; cat gpu.txt
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new2/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
export PYTHONPATH=/tmp/ov:/tmp/whl
for spec in "8B 3" "1B 5"; do
  set -- $spec
  PYTHONUNBUFFERED=1 timeout 120 python3 -m coda.bench layer --out "$OUT/r/layer$1" --sizes $1 --rounds 7 --iters $2 > layer$1.log 2>&1
  echo "layer $1 rc=$? at $((SECONDS - start)) s"; tail -4 layer$1.log
  tar czf "$OUT/0-all.tgz" . 2>/dev/null
done
