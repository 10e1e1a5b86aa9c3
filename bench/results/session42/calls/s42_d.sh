#!/usr/bin/env bash
# Session 42, call 3 (H200 with needs_h200; carry .prebuilt/s41r and .prebuilt/s42r). The rule
# refits at Qwen2.5-7B's widths (hidden 3584, FFN 18944, V 152064; no H200 table row is near), as
# s42_b.sh: old = s41r (the 40th session's rules), new = s42r (45ae566's wheel: the 41st session's
# along-M walk of the wide-output forward ops, this session's bias-GELU backward in Pingpong and
# the QKV dgrad's RMSNorm backward in Pingpong along N s1), with eager PyTorch in the rounds
# (AB_VARIANTS): the backward changes flip Cooperative to Pingpong, a ranking that what runs
# between launches has reversed before (docs/benchmarks.md §5.1). M = 5958, then 10000.
# Controls: RoPE, RMSNorm-RoPE, the gate/up dgrad's RMSNorm backward (unchanged).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
export PYTHONUNBUFFERED=1 AB_VARIANTS=coda,torch_matmul,coda_gemm,eager
ops="linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_cross_entropy,linear_rope,linear_rmsnorm_rope"
ops="$ops,linear_swiglu_bwd,linear_bias_gelu_bwd,linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd"
AB_TOKENS=5958 AB_STATES=boost AB_BUDGET_S=330 AB_LABEL=s42-rules-5958 OUT="$OUT/r/m5958" \
  scripts/wheel-ab.sh .prebuilt/s41r .prebuilt/s42r "Qwen2.5-7B $ops"
AB_TOKENS=10000 AB_STATES=boost AB_BUDGET_S=$((585 - SECONDS + t0)) AB_LABEL=s42-rules-10000 OUT="$OUT/r/m10000" \
  scripts/wheel-ab.sh .prebuilt/s41r .prebuilt/s42r "Qwen2.5-7B $ops"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
