#!/usr/bin/env bash
# Session 46, call 3 (H100; carry .prebuilt/ab/s46w = branch wide-bands: swizzle 16 and 32, bands
# wider than CUTLASS's cap of 8 clusters, set at launch where they divide the band mode). The GEMM
# and autotuner device tests (the new WideBandsWalkEveryTileOnce among them), then the op tuner,
# every Pingpong candidate (swizzle 1-32) in the same rounds, on the rows whose epilogue streams
# the most through the L2 (the backward ops, residual RMS, the RMSNorm + QK-norm save-Pre), 1B and
# 8B widths, M = 16384, as the GPU comes. Predicted: the 1B SwiGLU backward, whose operands are
# re-read ~7 times from DRAM (28th session), 5-15 % faster at a band of 32; others within noise.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
W=$repo/${WHEEL:-.prebuilt/ab/s46w}
export CODA_COMMIT=$(cat "$W/COMMIT")
python3 -m pip install -q --no-deps --force-reinstall "$W"/coda-*.whl > /dev/null 2>&1 || exit 1
tar -xJf "$W/tests.tar.xz" -C "$W" || exit 1
timeout 60 "$W/coda_device_tests" --gtest_filter='Gemm.*:Programs/Autotune.*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED" device_tests.log | tail -8
timeout $((560 - SECONDS + t0)) python3 -m coda.bench tune \
  --ops linear_swiglu_bwd,linear_rmsnorm_bwd_qkv,linear_bias_gelu_bwd,linear_residual_rms,linear_rmsnorm_qknorm_rope_save_pre \
  --models 1B,8B --tokens 16384 --rounds 5 --seed 3407 --configs pingpong_128x128_2x1,pingpong_128x192_2x1 \
  --min-gain 0.02 --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$? at $((SECONDS - t0)) s"; grep -A12 "^| op " tune.log | tail -12; tail -3 tune.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
