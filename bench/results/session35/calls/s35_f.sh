#!/usr/bin/env bash
# Session 35, call 6. Branch exp-k32 (ovcoop K-block 64 and 32 as two configs) on whatever GPU comes
# (an H200 was warm): coda-bench only, then tune-ops --epilogue-cost, M = 16384, 8B and 1B.
set -u
mkdir -p "$OUT/r" third_party; t0=$SECONDS
tar -xJf .prebuilt/cutlass.tar.xz -C third_party || exit 1
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cmake -S . -B /tmp/bx -G Ninja -DCMAKE_BUILD_TYPE=Release -DCODA_BUILD_TESTS=OFF -DCODA_BUILD_BENCH=ON > "$OUT/r/cmake.log" 2>&1 \
  && ninja -C /tmp/bx -j16 coda-bench > "$OUT/r/build.log" 2>&1
echo "build rc=$? at $((SECONDS - t0)) s"; tail -2 "$OUT/r/build.log"
cd "$OUT/r"
for size in 8B 1B; do
  timeout $((560 - SECONDS + t0)) /tmp/bx/bench/coda-bench tune-ops --models $size \
    --ops linear_qknorm_rope,linear_rope,linear_cross_entropy,linear_swiglu,linear_qknorm_rope_save_pre \
    --rounds 3 --epilogue-cost > tune_ops_fwd_$size.log 2>&1
  echo "tune-ops fwd $size rc=$? at $((SECONDS - t0)) s"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
