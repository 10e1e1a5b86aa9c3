#!/usr/bin/env bash
# Session 42, call 2 (H100; carry .prebuilt/s41r, s42r, s41m, s41c). (1) The rule refits at
# Qwen2.5-7B's widths, M = 5958 (old .prebuilt/s41r: the 40th session's rules; new .prebuilt/s42r: 45ae566, the 41st session's forward refits and this session's backward ones). (2) The CE forward +
# backward in the fewest equal chunks of <= ~2 GiB of logits (branch exp-ce-chunk2g-balanced,
# a2b2ce5 = .prebuilt/s41c) against main's chunks (.prebuilt/s41m, d2eebe0) at the benchmark of
# record's random M = 5958, where one chunk now holds every row at Qwen3-8B and 8B widths (was two)
# and the bar (<= 1.10 x its GEMMs) is met on 0 of 3 rows: predicted 0.95-0.98 x the old time.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
export PYTHONUNBUFFERED=1
fwd="linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_cross_entropy,linear_rope,linear_rmsnorm_rope"
bwd="linear_swiglu_bwd,linear_bias_gelu_bwd,linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd"
AB_TOKENS=5958 AB_STATES=boost AB_BUDGET_S=300 AB_LABEL=s42-rules-5958 OUT="$OUT/r/m5958" \
  scripts/wheel-ab.sh .prebuilt/s41r .prebuilt/s42r "Qwen2.5-7B $fwd,$bwd"
echo "rules done at $((SECONDS - t0)) s"
AB_TOKENS=5958 AB_STATES=boost AB_BUDGET_S=$((585 - SECONDS + t0)) AB_LABEL=s42-ce-chunks-5958 OUT="$OUT/r/ce5958" \
  scripts/wheel-ab.sh .prebuilt/s41m .prebuilt/s41c \
  "Qwen3-8B linear_cross_entropy_fwd_bwd" "8B linear_cross_entropy_fwd_bwd,linear_rope"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
