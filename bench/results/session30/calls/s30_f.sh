#!/usr/bin/env bash
# Session 30, call 6 (H100). 1. EpiloguePrograms.CrossEntropyPartials at the seed that failed in
# call 5 (92755150), on the device tests of 933717e (before this session) and of the commit in
# .prebuilt/TESTS_COMMIT (the bf16 floor), then the whole new suite with fresh seeds.
# 2. The benchmark of record on the wheel of aabedb0 (the submitted device code and table): the
# fused ops of 8B, 1B and Qwen3-8B widths in one process, every variant, M = 16384 and a random M.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
for b in device_tests_933717e coda_device_tests; do
  CODA_TEST_SEED=92755150 timeout 60 "$repo/.prebuilt/$b" --gtest_filter=EpiloguePrograms.CrossEntropyPartials > "seed_$b.log" 2>&1
  echo "$b at seed 92755150: rc=$?"; grep -E "^\[  (PASSED|FAILED) " "seed_$b.log" | head -2
done
timeout 150 "$repo/.prebuilt/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  FAILED|tests from .* ran|^\[  PASSED" device_tests.log | tail -6
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
timeout $((580 - SECONDS + t0)) python3 -m coda.bench ops --models 8B,1B,Qwen3-8B --tokens 16384 --random-tokens \
  --seed 3006 --rounds 5 --out "$OUT/r/ops" > ops.log 2>&1
echo "ops rc=$? at $((SECONDS - t0)) s"; grep -E "^random" ops.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
