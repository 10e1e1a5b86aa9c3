#!/usr/bin/env bash
# Twenty-sixth session, call 8 (H100): HEAD (c370e80: the SwiGLU backward's 16-column Pingpong
# subtile) built here with the tests and bench (16 jobs, installed), the device suite on it, then
# the op against HEAD's old program (coda-bench-A: 32 columns) A N A N on this machine.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"
export CMAKE_BUILD_PARALLEL_LEVEL=16 CUTLASS_DIR=$repo/third_party/cutlass
t0=$SECONDS
timeout 330 python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir=/tmp/b_new \
  -Ccmake.define.CODA_BUILD_TESTS=ON -Ccmake.define.CODA_BUILD_BENCH=ON . > "$OUT/r/build.log" 2>&1
echo "build rc=$? in $((SECONDS - t0)) s"; grep -E "error|spill" "$OUT/r/build.log" | cut -c1-160 | head -5
t0=$SECONDS
timeout 200 /tmp/b_new/tests/coda_device_tests --gtest_brief=1 > "$OUT/r/device_tests.log" 2>&1
echo "device tests rc=$? in $((SECONDS - t0)) s"; tail -3 "$OUT/r/device_tests.log"; grep -E "^\[  FAILED" "$OUT/r/device_tests.log" | head
for x in A N A N; do
  b=$repo/.prebuilt/s26/coda-bench-A; [ $x = N ] && b=/tmp/b_new/bench/coda-bench
  $b ops --bwd --models 1B,8B --ops linear_swiglu_bwd --rounds 7 --tokens 16384 2>&1 | grep "^linear_swiglu_bwd" | sed "s/^/$x /"
done | tee "$OUT/r/an_swiglu_bwd.h100.log"
