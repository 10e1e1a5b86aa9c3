#!/usr/bin/env bash
# Session 29, call 3 (H100): CODA's own per-column partial node (column_partial_sum.hpp) against
# CUTLASS's Sm90RowReduction. Carries .prebuilt/ab/{old,new}.whl (old = 49cbac1, new = the node)
# and the new build's coda_device_tests. 1. The C++ device suite on the new build. 2. The Python
# GPU tests of the two ops on the new wheel. 3. The op tuner (every candidate x matmul in the same
# rounds) on the ops with a per-column partial, old / new / old / new processes, 1B and 8B at
# M = 16384. One tarball back.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
timeout 200 "$repo/.prebuilt/ab/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" device_tests.log | tail -12
python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab/new/"coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 120 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" -k "gelu or rmsnorm_bwd or rms_norm_bwd or backward" > pytest.log 2>&1
echo "pytest rc=$?"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
OPS=linear_bias_gelu_bwd,linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv
i=0
for w in old new old new; do
  i=$((i + 1))
  python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab/$w/"coda-*.whl > /dev/null 2>&1 || exit 1
  timeout 100 python3 -m coda.bench tune --models 1B,8B --ops $OPS --tokens 16384 --seed 29$i \
    --out "$OUT/r/tune_${i}_$w" > "tune_${i}_$w.log" 2>&1
  echo "tune $i $w rc=$?"
done
python3 "$repo/bench/results/session29/calls/ab_candidates.py" tune_1_old tune_2_new tune_3_old tune_4_new
cd "$OUT" && tar -czf r.tgz r && rm -rf r
