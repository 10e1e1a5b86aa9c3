#!/usr/bin/env bash
# Session 31, call 9 (asked with needs_h200; adapts). Wheel and device tests of 9a4deab. On an
# H200: the op tuner at M = 16384 on every op of 8B and 1B widths (no H200 row has seen the kernels
# of the last sessions), then the whole C++ device suite. On an H100: the whole C++ device suite.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/COMMIT | tee "$OUT/r/commit.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
if grep -q H200 gpu.txt; then
  for model in 8B 1B; do
    timeout 170 python3 -m coda.bench tune --models $model --tokens 16384 --seed 319 --out "$OUT/r/tune_h200_16384_$model" > tune_h200_16384_$model.log 2>&1
    echo "tune h200 $model rc=$? at $((SECONDS - t0)) s"; grep -E "within|rows written" tune_h200_16384_$model.log
  done
fi
timeout $((585 - SECONDS + t0)) "$repo/.prebuilt/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  FAILED|tests from .* ran|^\[  PASSED" device_tests.log | tail -6
cd "$OUT" && tar -czf r.tgz r && rm -rf r
