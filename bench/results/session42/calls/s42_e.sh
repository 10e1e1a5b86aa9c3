#!/usr/bin/env bash
# Session 42, call 3 (H100, warm after call 2; carry .prebuilt/s41r, s42r, s41m, s41c). (1) The
# rule refits at Qwen2.5-7B's widths at M = 10000, with eager PyTorch in the rounds (the backward
# changes flip Cooperative to Pingpong: docs/benchmarks.md §5.1). (2) The CE fwd+bwd chunks
# (s41m -> s41c) at M = 16384: Qwen3-8B three chunks of 5504 instead of five.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
export PYTHONUNBUFFERED=1
ops="linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_cross_entropy,linear_rope,linear_rmsnorm_rope"
ops="$ops,linear_swiglu_bwd,linear_bias_gelu_bwd,linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd"
AB_VARIANTS=coda,torch_matmul,coda_gemm,eager AB_TOKENS=10000 AB_STATES=boost AB_BUDGET_S=260 AB_LABEL=s42-rules-10000 \
  OUT="$OUT/r/m10000" scripts/wheel-ab.sh .prebuilt/s41r .prebuilt/s42r "Qwen2.5-7B $ops"
echo "rules done at $((SECONDS - t0)) s"
AB_TOKENS=16384 AB_STATES=boost AB_BUDGET_S=$((585 - SECONDS + t0)) AB_LABEL=s42-ce-chunks-16384 OUT="$OUT/r/ce16384" \
  scripts/wheel-ab.sh .prebuilt/s41m .prebuilt/s41c \
  "Qwen3-8B linear_cross_entropy_fwd_bwd" "8B linear_cross_entropy_fwd_bwd,linear_rope" "1B linear_cross_entropy_fwd_bwd"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
