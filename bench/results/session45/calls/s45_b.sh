#!/usr/bin/env bash
# Session 45, call 2 (H100; carry .prebuilt/ab/s45h = the hoisted row scale, branch
# hoist-row-scale). The whole C++ device suite and Python GPU suite on it (the overlapped kernel
# changed for every program; the six new ovcoop kernels run in every op test's forced configs),
# then the op tuner on the RMSNorm + QK-norm programs, ovcoop against today's Pingpong 128 x 128,
# 8B / Qwen3-8B widths, M = 16384, as the GPU comes.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
W=$repo/${WHEEL:-.prebuilt/ab/s45h}
export CODA_COMMIT=$(cat "$W/COMMIT")
python3 -m pip install -q --no-deps --force-reinstall "$W"/coda-*.whl > /dev/null 2>&1 || exit 1
tar -xJf "$W/tests.tar.xz" -C "$W" || exit 1
timeout 200 "$W/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -12
CODA_REQUIRE_GPU=1 timeout 240 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
rm -rf .benchmarks
timeout $((585 - SECONDS + t0)) python3 -m coda.bench tune --ops linear_rmsnorm_qknorm_rope,linear_rmsnorm_qknorm_rope_save_pre \
  --models 8B,Qwen3-8B --tokens 16384 --rounds 5 --seed 3407 --configs ovcoop_128x256_2x1,pingpong_128x128_2x1 \
  --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$? at $((SECONDS - t0)) s"; tail -30 tune.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
