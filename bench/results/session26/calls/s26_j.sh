#!/usr/bin/env bash
# Twenty-sixth session, call 10 (H200): HEAD built here (16 jobs), the device suite, the SwiGLU
# backward against the old program (coda-bench-A, 32-column Pingpong subtile) A N A N, the 1B
# backward ops in the benchmark of record, and the CPU train test that failed on the H100 box.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"
export CMAKE_BUILD_PARALLEL_LEVEL=16 CUTLASS_DIR=$repo/third_party/cutlass
t0=$SECONDS
timeout 300 python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir=/tmp/b_new \
  -Ccmake.define.CODA_BUILD_TESTS=ON -Ccmake.define.CODA_BUILD_BENCH=ON . > "$OUT/r/build.log" 2>&1
echo "build rc=$? in $((SECONDS - t0)) s"
for x in A N A N; do
  b=$repo/.prebuilt/s26/coda-bench-A; [ $x = N ] && b=/tmp/b_new/bench/coda-bench
  $b ops --bwd --models 1B,8B --ops linear_swiglu_bwd --rounds 7 --tokens 16384 2>&1 | grep "^linear_swiglu_bwd" | sed "s/^/$x /"
done | tee "$OUT/r/an_swiglu_bwd.h200.log"
timeout 150 /tmp/b_new/tests/coda_device_tests --gtest_brief=1 > "$OUT/r/device_tests.log" 2>&1
echo "device tests rc=$?"; tail -1 "$OUT/r/device_tests.log"; grep -E "^\[  FAILED" "$OUT/r/device_tests.log" | head
cd "$OUT/r"
timeout 60 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python/test_train_cpu.py" > pytest_train_cpu.log 2>&1
echo "train cpu rc=$?"; tail -1 pytest_train_cpu.log; grep -E "^E " pytest_train_cpu.log | head -5
timeout 100 python3 -m coda.bench ops --models 1B --ops linear_swiglu_bwd --tokens 16384 --random-tokens --rounds 5 --out "$OUT/r/ops_swiglu_bwd_1b" > ops.log 2>&1
echo "ops rc=$?"; grep -E "^\| linear|random" ops.log | head -3
