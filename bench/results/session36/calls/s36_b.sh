#!/usr/bin/env bash
# Session 36, call 2 (H100). The Python op tuner (every compiled candidate forced in the op
# benchmark's harness, against today's choice and matmul in the same rounds; a pick confirmed head
# to head in 10 fresh rounds, and with every variant where it changes schedule) on the rows whose
# fused kernel runs a smaller tile than the plain GEMM of its shape (call 1: the 1B RoPE rows at
# 0.306 ms on Pingpong 128 x 128 where the plain GEMM's 128 x 192 ran 0.265, same clock).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=1ddf404
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s36w/coda-*.whl > /dev/null 2>&1 || exit 1
timeout 570 python3 -m coda.bench tune --models 1B,8B,Qwen3-8B --tokens 16384 --rounds 5 --seed 3407 \
  --ops linear_rope,linear_rmsnorm_rope,linear_qknorm_rope,linear_rmsnorm_qknorm_rope,linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope_save_pre,linear_swiglu,linear_rmsnorm_swiglu \
  --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$? at $((SECONDS - t0)) s"
grep -E "^\| linear|within|written|kept" tune.log | cut -c1-200
cd "$OUT" && tar -czf r.tgz r && rm -rf r
