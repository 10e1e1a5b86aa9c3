#!/usr/bin/env bash
# Session 35, call 2 (H100, the machine of call 1, /tmp/b from it). exp-k32 again: tune-ops
# --epilogue-cost, M = 16384: a second reading of call 1's ops, the other ops compiled for ovcoop,
# and the RMSNorm backward.
set -u
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
ls /tmp/b/bench/coda-bench || exit 1
for size in 8B 1B Qwen3-8B; do
  timeout $((585 - SECONDS + t0)) /tmp/b/bench/coda-bench tune-ops --models $size \
    --ops linear_qknorm_rope,linear_rope,linear_cross_entropy,linear_swiglu,linear_qknorm_rope_save_pre \
    --rounds 3 --epilogue-cost > tune_ops_fwd_$size.log 2>&1
  echo "tune-ops fwd $size rc=$? at $((SECONDS - t0)) s"
  timeout $((585 - SECONDS + t0)) /tmp/b/bench/coda-bench tune-ops --bwd --models $size --ops linear_rmsnorm_bwd \
    --rounds 3 --epilogue-cost > tune_ops_bwd_$size.log 2>&1
  echo "tune-ops bwd $size rc=$? at $((SECONDS - t0)) s"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
