#!/usr/bin/env bash
# Session 28, call 11 (H100): the H100 fallback of 32f4476 (Pingpong 128x192 from K = 4096) at widths
# no table row is near — Qwen3-8B's FFN and vocabulary at M = 12000 — against every candidate (the
# op tuner: "today" is the rule there), then the same ops in the op benchmark with torch.compile.
# One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
cd "$OUT/r"
OPS=linear_swiglu,linear_rmsnorm_swiglu,linear_swiglu_bwd,linear_bias_gelu,linear_bias_gelu_save_pre,linear_bias_gelu_bwd,linear_cross_entropy,linear_rmsnorm_bwd
PYTHONUNBUFFERED=1 timeout 280 python3 -m coda.bench tune --models Qwen3-8B --ops $OPS --tokens 12000 --seed 28 \
  --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$?"; grep -E "^\| linear_" tune.log | tail -8; grep within tune.log
PYTHONUNBUFFERED=1 timeout 240 python3 -m coda.bench ops --models Qwen3-8B --ops $OPS --tokens 12000 \
  --variants coda,torch_matmul,compile,eager --rounds 5 --out "$OUT/r/ops" > ops.log 2>&1
echo "ops rc=$?"; grep -E "^\| linear_" ops.log | tail -8
cd "$OUT" && tar -czf r.tgz r && rm -rf r
