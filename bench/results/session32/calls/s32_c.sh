#!/usr/bin/env bash
# Session 32, call 3 (H100). The build with the RMSNorm backward compiled for Pingpong 128x192 in
# 64 x 16 subtiles and the column partials' warps meeting in rounds (.prebuilt/COMMIT; table as
# f513c76): the whole C++ device suite (the new kernels forced in the op tests; every Pingpong
# program's column partials), then where the new kernel ranks: layer-tune on the two RMSNorm
# backward calls of the 8B and 1B layers (inside the training step, M = 16384), and the op tuner on
# the two RMSNorm backward rows at M = 10837 and 16384 (a schedule-flipping pick now confirmed with
# eager and compiled PyTorch in the rounds).
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout 180 "$repo/.prebuilt/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  FAILED|tests from .* ran|^\[  PASSED" device_tests.log | tail -8
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
for size in 8B 1B; do
  left=$((580 - SECONDS + t0)); [ $left -lt 30 ] && break
  timeout $((left < 120 ? left : 120)) python3 -m coda.bench layer-tune --size $size --ops linear_rmsnorm_bwd,linear_rmsnorm_bwd_add_ \
    --out "$OUT/r/layer_tune_$size" > layer_tune_$size.log 2>&1
  echo "layer-tune $size rc=$? at $((SECONDS - t0)) s"; tail -6 layer_tune_$size.log
done
for model in 1B 8B; do
  left=$((580 - SECONDS + t0)); [ $left -lt 30 ] && break
  timeout $left python3 -m coda.bench tune --models $model --ops linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv --tokens 10837,16384 \
    --seed 323 --out "$OUT/r/tune_$model" > tune_$model.log 2>&1
  echo "tune $model rc=$? at $((SECONDS - t0)) s"; tail -8 tune_$model.log
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
