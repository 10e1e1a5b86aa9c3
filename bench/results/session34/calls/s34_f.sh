#!/usr/bin/env bash
# Session 34, call 6 (H100). The merged main (b4f3bf1 = overlap-coop): the whole Python GPU suite on
# c8d87a7's wheel (the same native module; b4f3bf1 changes one test's expected candidate range),
# then the decoder-layer benchmark at 8B and 1B (last run in session 24).
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/ab/new/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1 CODA_COMMIT=c8d87a7
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/ab/new/coda-*.whl > /dev/null 2>&1 || exit 1
python3 -m pip install -q --no-index --no-deps --target /tmp/coda-whl "$repo"/.whl/*.whl > /dev/null 2>&1 \
  && export PYTHONPATH=/tmp/coda-whl
cd "$OUT/r"
t0=$SECONDS
CODA_REQUIRE_GPU=1 timeout 330 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
timeout $((585 - SECONDS + t0)) python3 -m coda.bench layer --out "$OUT/r/layer" --sizes 8B,1B --rounds 3 --iters 3 > layer.log 2>&1
echo "layer rc=$? at $((SECONDS - t0)) s"; tail -25 layer.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
