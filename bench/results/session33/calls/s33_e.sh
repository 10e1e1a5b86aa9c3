#!/usr/bin/env bash
# Session 33, call 5 (asked for an H200). The build of 1c03be1 (.prebuilt/coda-*.whl: the H200 QKV
# rows of call 3): every op call of the 8B and 1B decoder layers ranked inside the training step
# (layer-tune, M = 16384), where the H200 table's forward rows came from the op tuner alone.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
for size in 8B 1B; do
  left=$((585 - SECONDS + t0)); [ $left -lt 60 ] && break
  timeout $((left < 280 ? left : 280)) python3 -m coda.bench layer-tune --size $size --m 16384 \
    --ops linear_rmsnorm_swiglu,linear_rmsnorm_rope,linear_residual_rms,linear_swiglu_bwd --out "$OUT/r/layer_tune_${size}" > layer_tune_${size}.log 2>&1
  echo "layer-tune $size rc=$? at $((SECONDS - t0)) s"; tail -7 layer_tune_${size}.log
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
