#!/usr/bin/env bash
# Session 28, call 12 (H100): the 1B ops that ran 1.2-1.75 x matmul at call 10's M = 4686 (and lost
# to torch.compile: the RMSNorm backward), every candidate at that M. One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
cd "$OUT/r"
PYTHONUNBUFFERED=1 timeout 300 python3 -m coda.bench tune --models 1B --tokens 4686 --seed 28 \
  --ops linear_swiglu_bwd,linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv,linear_bias_gelu_bwd,linear_residual_rms,linear_rmsnorm_swiglu,linear_bias_gelu_save_pre,linear_bias_gelu \
  --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$?"; grep -E "^\| linear_" tune.log | tail -8; grep within tune.log; cat tune/op_table.inc
cd "$OUT" && tar -czf r.tgz r && rm -rf r
