#!/usr/bin/env bash
# Session 37, call 3 (asked for an H200; the device tool ran it on the H100 it held: an H100 run). The Python op tuner on the H200's rows that run behind their plain
# GEMM as the GPU comes (the 36th session's H200 record: 8B / Qwen3-8B RMSNorm-RoPE on Pingpong
# 128 x 128 at 1.08-1.13 x CODA's GEMM, the QK-norm programs, the 1B residual RMSNorm, the 1B
# SwiGLU backward), once as the GPU comes and once sustained (--sustained 20), for
# scripts/agreed_picks.py: a row changes only where both runs confirm a pick over today's choice.
# Wheel: .prebuilt/s37s (9ced8dc's kernels and tables).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=9ced8dc
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s37s/coda-*.whl > /dev/null 2>&1 || exit 1
ops=linear_rope,linear_rmsnorm_rope,linear_qknorm_rope,linear_rmsnorm_qknorm_rope,linear_residual_rms,linear_swiglu_bwd
for state in boost sustained; do
  extra=""; [ $state = sustained ] && extra="--sustained 20"
  left=$((585 - SECONDS + t0)); [ $left -lt 60 ] && break
  timeout $left python3 -m coda.bench tune --models 1B,8B,Qwen3-8B --tokens 16384 --rounds 5 --seed 3407 \
    --ops $ops $extra --out "$OUT/r/tune_$state" > tune_$state.log 2>&1
  echo "tune $state rc=$? at $((SECONDS - t0)) s"
  grep -E "^\| linear|within|written" tune_$state.log | cut -c1-200
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
