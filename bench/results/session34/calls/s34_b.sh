#!/usr/bin/env bash
# Session 34, call 2 (H100). The overlapped Cooperative kernel (branch overlap-coop): its binaries
# built on the CPU machine (.prebuilt/ovbin: coda_device_tests, coda-bench, COMMIT). (1) the C++
# device suite, which runs every program in every config of kProgramConfigs (the new
# ovcoop_128x256_2x1 among them) against float64 under the numerics contract; (2) tune-ops with
# --epilogue-cost on 8B forward ops at M = 16384: every candidate (ovcoop's among them) against
# cuBLAS and against its own plain twin, same process.
set -u
tar -xJf .prebuilt/ovpack/ovbin.tar.xz -C .prebuilt || exit 1
bin=$PWD/.prebuilt/ovbin
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat "$bin/COMMIT" | tee "$OUT/r/commit.txt"
cd "$OUT/r"
t0=$SECONDS
timeout 200 "$bin/coda_device_tests" --gtest_brief=1 > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED)|tests ran" device_tests.log | head -40
timeout $((570 - SECONDS + t0)) "$bin/coda-bench" tune-ops --models 8B \
  --ops linear_swiglu,linear_residual_rms,linear_qknorm_rope,linear_rope,linear_rmsnorm_swiglu,linear_cross_entropy \
  --rounds 3 --epilogue-cost --json tune_ops_8b.json > tune_ops_8b.log 2>&1
echo "tune-ops rc=$? at $((SECONDS - t0)) s"
grep -E "^(linear|  candidate (ovcoop|coop_128x256_2x1|pingpong))" tune_ops_8b.log | head -150
cd "$OUT" && tar -czf r.tgz r && rm -rf r
