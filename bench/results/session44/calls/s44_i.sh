#!/usr/bin/env bash
# Session 44, call 9 (H100; carry .prebuilt/ab: s44r = main, s44v = main + the spill-free QK-norm
# node + the 8B/Qwen3-8B QKV QK-norm RoPE row (16384 x 6144 x 4096) on ovcoop along N, swizzle 8).
# Nsight Compute read the spill-free node's ovcoop kernel 6 % fewer cycles than today's Pingpong
# 128 x 128 one (call 7); this asks whether that holds as op time: processes old new new old, as
# the GPU comes and sustained, eager added (a Pingpong -> Cooperative flip, docs/benchmarks.md
# §5.1). 8B RoPE is the control.
AB_LABEL=s44-qknorm-ovcoop AB_ROUNDS=7 AB_VARIANTS=coda,torch_matmul,coda_gemm,eager AB_BUDGET_S=570 \
  scripts/wheel-ab.sh .prebuilt/ab/s44r .prebuilt/ab/s44v \
  "8B linear_qknorm_rope,linear_rope" "Qwen3-8B linear_qknorm_rope"
cd "$OUT" && tar -czf ab.tgz ab && rm -rf ab
