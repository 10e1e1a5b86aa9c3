#!/usr/bin/env bash
# Twenty-fifth session, call 4 (H200): the cold test build of this tree (16 jobs), the device suite
# on it, the Python GPU tests and the layer parity tests with the autotuner on, then the 1B fused
# ops in one process (the H200's 1B rows at the end state).
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"
nproc
export CMAKE_BUILD_PARALLEL_LEVEL=16 CUTLASS_DIR=$repo/third_party/cutlass
t0=$SECONDS
timeout 300 python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir=/tmp/b_new \
  -Ccmake.define.CODA_BUILD_TESTS=ON -Ccmake.define.CODA_BUILD_BENCH=ON . > "$OUT/r/build.log" 2>&1
echo "cold test build (16 jobs) rc=$? in $((SECONDS - t0)) s"
python3 scripts/ninja_slowest.py /tmp/b_new 5 > "$OUT/r/slowest.txt" 2>&1; cat "$OUT/r/slowest.txt"
t1=$SECONDS
timeout 150 /tmp/b_new/tests/coda_device_tests --gtest_brief=1 > "$OUT/r/device_tests.log" 2>&1
echo "device tests rc=$? in $((SECONDS - t1)) s"; tail -2 "$OUT/r/device_tests.log"; grep "FAILED  \]" "$OUT/r/device_tests.log"
cd "$OUT/r"
CODA_REQUIRE_GPU=1 timeout 150 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$?"; tail -1 pytest.log; grep -E "^FAILED|^E " pytest.log | head -20
CODA_TUNE=1 CODA_TUNE_CACHE=$(mktemp -d) CODA_REQUIRE_GPU=1 timeout 60 python3 -m pytest -q -p no:cacheprovider \
  "$repo/tests/python/test_gpu_layer_parity.py" > pytest_tuned.log 2>&1
echo "pytest CODA_TUNE=1 layer parity rc=$?"; tail -1 pytest_tuned.log
left=$((570 - (SECONDS - t0)))
echo "$left s left for ops-py"
[ $left -gt 60 ] && { PYTHONUNBUFFERED=1 timeout $left python3 -m coda.bench ops --models 1B --tokens 16384 --random-tokens --rounds 5 \
  --out "$OUT/r/ops" > ops_1b.log 2>&1; echo "ops rc=$?"; tail -4 ops_1b.log; }
echo "total $((SECONDS - t0)) s"
