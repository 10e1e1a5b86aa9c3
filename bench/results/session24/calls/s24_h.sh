#!/usr/bin/env bash
# Twenty-fourth session, call 8 (H100): the cold device build on 16 cores (issue 11: <= 3 min), as
# scripts/test.sh builds (pip install ., tests and bench on); then, with that build installed, the
# GPU model tests (gradient accumulation with num_items_in_batch is new) and the device suite.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"; nproc
export CMAKE_BUILD_PARALLEL_LEVEL=16 CUTLASS_DIR=$repo/third_party/cutlass
t0=$SECONDS
timeout 420 python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir=/tmp/b16 \
  -Ccmake.define.CODA_BUILD_TESTS=ON -Ccmake.define.CODA_BUILD_BENCH=ON . > "$OUT/r/build16.log" 2>&1
echo "cold build (16 jobs) rc=$? in $((SECONDS - t0)) s"
python3 scripts/ninja_slowest.py /tmp/b16 12 > "$OUT/r/slowest.txt" 2>&1; cat "$OUT/r/slowest.txt"
cd "$OUT/r"
CODA_REQUIRE_GPU=1 timeout 150 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python/test_gpu_model.py" > pytest.log 2>&1
echo "pytest rc=$?"; tail -1 pytest.log; grep -E "^FAILED|^E " pytest.log | head -20
left=$((570 - (SECONDS - t0)))
[ $left -gt 100 ] && { timeout $left /tmp/b16/tests/coda_device_tests --gtest_brief=1 > device_tests.log 2>&1; echo "device tests rc=$?"; tail -2 device_tests.log; }
