#!/usr/bin/env bash
# Session 45, call 4 (H100; carry .prebuilt/ab/s45r = 233c200: the hoisted row scale + the QK-norm
# save-Pre programs storing Pre from registers). The QK-norm and NaN / bad-input / capture device
# tests and the Python QK-norm and layer tests, then the op tuner on the two save-Pre ops, ovcoop
# against Pingpong 128 x 128, 8B / Qwen3-8B widths, M = 16384, as the GPU comes.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
W=$repo/${WHEEL:-.prebuilt/ab/s45r}
export CODA_COMMIT=$(cat "$W/COMMIT")
python3 -m pip install -q --no-deps --force-reinstall "$W"/coda-*.whl > /dev/null 2>&1 || exit 1
tar -xJf "$W/tests.tar.xz" -C "$W" || exit 1
timeout 150 "$W/coda_device_tests" --gtest_filter='*QkNorm*:*qknorm*:*BadInput*:*Nan*:*Capture*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -8
CODA_REQUIRE_GPU=1 timeout 120 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python/test_gpu_layer_parity.py" \
  "$repo/tests/python/test_gpu_ops.py" -k "qknorm or qk_norm or layer" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
timeout $((330 - SECONDS + t0)) python3 -m coda.bench tune --ops linear_rmsnorm_qknorm_rope_save_pre,linear_qknorm_rope_save_pre \
  --models 8B,Qwen3-8B --tokens 16384 --rounds 5 --seed 3407 --configs ovcoop_128x256_2x1,pingpong_128x128_2x1 \
  --min-gain 0.02 --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$? at $((SECONDS - t0)) s"; grep -A8 "^| op " tune.log | tail -8; tail -3 tune.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
