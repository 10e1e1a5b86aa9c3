#!/usr/bin/env bash
# Session 35, call 7. Branch exp-coopk32 = main + a plain-GEMM-only Cooperative 128x256 2x1 config
# with a K-block of 32 (coopk32_128x256_2x1: 8 stages of 24 KB where coop has 4 of 48 KB): does
# the K-block that closed ovcoop's gap help Cooperative too? coda-bench only, then `coda-bench
# tune` (every config's best raster and swizzle in the same rounds), 8B and 1B forward, M = 16384.
set -u
mkdir -p "$OUT/r" third_party; t0=$SECONDS
tar -xJf .prebuilt/cutlass.tar.xz -C third_party || exit 1
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cmake -S . -B /tmp/by -G Ninja -DCMAKE_BUILD_TYPE=Release -DCODA_BUILD_TESTS=OFF -DCODA_BUILD_BENCH=ON > "$OUT/r/cmake.log" 2>&1 \
  && ninja -C /tmp/by -j16 coda-bench > "$OUT/r/build.log" 2>&1
echo "build rc=$? at $((SECONDS - t0)) s"; tail -2 "$OUT/r/build.log"
cd "$OUT/r"
timeout $((305 - SECONDS + t0)) /tmp/by/bench/coda-bench tune --models 8B,1B --passes fwd --tokens 16384 --rounds 3 > tune_gemm.log 2>&1
echo "tune rc=$? at $((SECONDS - t0)) s"; tail -5 tune_gemm.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
