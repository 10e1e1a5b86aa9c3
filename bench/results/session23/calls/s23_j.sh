#!/usr/bin/env bash
# Twenty-third session, call 11 (H100; .prebuilt/new3 + the working tree's Python): the kernels and
# layer-tune entry points after the review's refactor (layer.gpu_problem), briefly, at 1B.
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new3/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
export PYTHONPATH=/tmp/ov:/tmp/whl
timeout 60 python3 -m coda.bench kernels --size 1B --variants coda --iters 1 --out "$OUT/r/k" > k.log 2>&1; echo "kernels rc=$?"; grep "ms of kernels" k.log
timeout 90 python3 -m coda.bench layer-tune --size 1B --ops linear_rmsnorm_rope,linear_swiglu_bwd --rounds 2 --out "$OUT/r/lt" > lt.log 2>&1; echo "layer-tune rc=$?"; grep -E "^\| linear" lt.log
