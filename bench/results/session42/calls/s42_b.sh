#!/usr/bin/env bash
# Session 42, call 2 (H100; carry .prebuilt/s41r and .prebuilt/s42r) and call 3 (H200, the same
# script). Every rule refit since the 40th session at Qwen2.5-7B's widths (hidden 3584, FFN 18944,
# V 152064), which no table row of either GPU is near, so each op runs its GPU's rule alone:
# old = .prebuilt/s41r (4ee79b2: the 40th session's rules), new = .prebuilt/s42r (45ae566: the
# 41st session's forward refits — H100: an MLP's wide output in 128 x 192 below K = 4096; H200:
# wide outputs along M s1 up to 12288 rows, 6144 for the CE — and this session's backward refits:
# SwiGLU / bias-GELU backward along N s2 on the H100, bias-GELU backward in Pingpong, the RMSNorm
# backward of the QKV dgrad in Pingpong along N s1 on both). scripts/wheel-ab.sh as the GPU comes,
# M = 5958, then 10000 with what is left. Controls: RoPE, RMSNorm-RoPE, the RMSNorm backward of the
# gate/up dgrad (unchanged on both GPUs).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
export PYTHONUNBUFFERED=1
fwd="linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_cross_entropy,linear_rope,linear_rmsnorm_rope"
bwd="linear_swiglu_bwd,linear_bias_gelu_bwd,linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd"
AB_TOKENS=5958 AB_STATES=boost AB_BUDGET_S=${AB_BUDGET_5958:-330} AB_LABEL=s42-rules-5958 OUT="$OUT/r/m5958" \
  scripts/wheel-ab.sh .prebuilt/s41r .prebuilt/s42r "Qwen2.5-7B $fwd,$bwd"
AB_TOKENS=10000 AB_STATES=boost AB_BUDGET_S=$((585 - SECONDS + t0)) AB_LABEL=s42-rules-10000 OUT="$OUT/r/m10000" \
  scripts/wheel-ab.sh .prebuilt/s41r .prebuilt/s42r "Qwen2.5-7B $fwd,$bwd"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
