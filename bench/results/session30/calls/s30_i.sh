#!/usr/bin/env bash
# Session 30, call 9 (asked as nvidia-h200; adapts). Wheel of 62ac933. H200: the op tuner at
# M = 16384 (1B, 8B) on the ops with Pingpong 128x192 candidates or the per-column node, which no
# H200 row saw (rows confirmed head to head >= 2 % written to op_table.inc). H100: the op tuner on
# every op at M = 7000 (8B, 1B, Qwen3-8B), a third M the fit rules were not designed on (no rows
# merged). One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
if grep -q H200 gpu.txt; then
  OPS=linear_swiglu_bwd,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_bias_gelu_save_pre,linear_bias_gelu_bwd,linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv,linear_rmsnorm_rope,linear_rope,linear_residual_rms,linear_rmsnorm,linear_cross_entropy
  timeout 250 python3 -m coda.bench tune --models 1B,8B --ops $OPS --tokens 16384 --seed 309 --out "$OUT/r/tune_h200" > tune_h200.log 2>&1
  echo "tune h200 rc=$? at $((SECONDS - t0)) s"; grep -E "within|rows written" tune_h200.log
else
  timeout 250 python3 -m coda.bench tune --models 8B,1B,Qwen3-8B --tokens 7000 --seed 309 --out "$OUT/r/tune_7000" > tune_7000.log 2>&1
  echo "tune 7000 rc=$? at $((SECONDS - t0)) s"; grep -E "within" tune_7000.log
fi
cd "$OUT" && tar -czf r.tgz r && rm -rf r
