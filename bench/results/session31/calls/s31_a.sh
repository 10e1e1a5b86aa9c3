#!/usr/bin/env bash
# Session 31, call 1 (H100). The wheel and device tests of efbb226 (= HEAD's device code and tables;
# see .prebuilt/COMMIT): the whole C++ device suite and the whole Python GPU suite on the submitted
# build (last session ran only subsets of them on it). Then the op tuner on every op at
# M = 11585 (the log-midpoint of the 8192 and 16384 table rows), one model per process so a
# timeout keeps the models done; rows it writes are candidates for the H100 table.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout 170 "$repo/.prebuilt/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  FAILED|tests from .* ran|^\[  PASSED" device_tests.log | tail -6
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 200 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
for model in 1B Qwen3-8B 8B; do
  left=$((585 - SECONDS + t0)); [ $left -lt 60 ] && break
  timeout $left python3 -m coda.bench tune --models $model --tokens 11585 --seed 311 --out "$OUT/r/tune_11585_$model" > tune_11585_$model.log 2>&1
  echo "tune $model rc=$? at $((SECONDS - t0)) s"; grep -E "within|rows written" tune_11585_$model.log
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
