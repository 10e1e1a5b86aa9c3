#!/usr/bin/env bash
# Session 28, call 8 (H100): why the fused ops ran 1.16-1.41 x matmul at the random M = 4686 of
# call 7 (1.0-1.1 at 8192): the op and CODA's plain GEMM against matmul, naming the kernel each
# row ran; then every candidate at 4686 and 8192 (is it the choice or the GEMM?). One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
cd "$OUT/r"
timeout 200 python3 -m coda.bench ops --models 8B,1B --ops linear_swiglu_bwd,linear_rmsnorm_swiglu,linear_residual_rms,linear_rope,linear_swiglu \
  --tokens 4686,8192 --variants coda,torch_matmul,coda_gemm --rounds 5 --out "$OUT/r/ops" > ops.log 2>&1
echo "ops rc=$?"; grep -E "^\| linear_" ops.log | tail -20
timeout 330 python3 -m coda.bench tune --models 8B --ops linear_swiglu_bwd,linear_rmsnorm_swiglu,linear_residual_rms \
  --tokens 4686,8192 --seed 28 --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$?"; grep -E "^\| linear_" tune.log | tail -6; tail -2 tune.log; cat tune/op_table.inc 2>/dev/null
cd "$OUT" && tar -czf r.tgz r && rm -rf r
