#!/usr/bin/env bash
# Session 35, call 1 (H100). Branch exp-k32 = main 71dadf0 + an experimental second overlapped
# Cooperative config with a K-block of 32 (ovcoopk32_128x256_2x1: 6 mainloop stages of 24 KB
# where ovcoop has 3 of 48 KB). Built here on 16 cores into /tmp/b (kept while the machine is
# warm). (1) the C++ device suite (it runs every compiled config, the new one included);
# (2) tune-ops --epilogue-cost at M = 16384, every candidate against cuBLAS and its own plain twin
# in the same rounds, so ovcoop and ovcoopk32 are compared in the same process and rounds.
set -u
mkdir -p "$OUT/r" third_party
t0=$SECONDS
tar -xJf .prebuilt/cutlass.tar.xz -C third_party || exit 1
tar -xJf .prebuilt/googletest.tar.xz -C third_party || exit 1
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCODA_BUILD_TESTS=ON -DCODA_BUILD_BENCH=ON > "$OUT/r/cmake.log" 2>&1 \
  && ninja -C /tmp/b -j16 coda_device_tests coda-bench > "$OUT/r/build.log" 2>&1
echo "build rc=$? at $((SECONDS - t0)) s"; tail -3 "$OUT/r/build.log"
cd "$OUT/r"
timeout 200 /tmp/b/tests/coda_device_tests --gtest_brief=1 > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED)|FAILED" device_tests.log | head -20
for size in 8B 1B; do
  left=$((585 - SECONDS + t0)); [ $left -lt 30 ] && break
  timeout $left /tmp/b/bench/coda-bench tune-ops --models $size --ops linear_qknorm_rope,linear_rope,linear_cross_entropy \
    --rounds 3 --epilogue-cost > tune_ops_fwd_$size.log 2>&1
  echo "tune-ops fwd $size rc=$? at $((SECONDS - t0)) s"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
