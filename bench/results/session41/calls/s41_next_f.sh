#!/usr/bin/env bash
# Prepared in the 41st session for the next (run on an H200 with needs_h200, and on an H100; carry
# .prebuilt/s41r and .prebuilt/s41m). The 41st session's rule refinements for wide-output ops,
# new = .prebuilt/s41m (d2eebe0, main), old = .prebuilt/s41r (4ee79b2: the same with both old
# rules), at Qwen2.5-7B's widths (hidden 3584, FFN 18944, V 152064), which no table row is near
# (every op runs its GPU's rule): scripts/wheel-ab.sh as the GPU comes at M = 5958 and 10000.
# H200 (along_m_where_measured: SwiGLU, RMSNorm-SwiGLU, bias-GELU, loss-only CE along M, swizzle
# 1, up to 12288 rows, the CE up to 6144): predicted SwiGLU / RMSNorm-SwiGLU 0.88-0.92 x the old
# time, bias-GELU ~0.97, CE ~0.90 at 5958 and unchanged at 10000. H100 (the MLP's wide output
# widens to 128 x 192 at K = 3584): SwiGLU family 0.90-0.97 x, the CE unchanged. RoPE rows (QKV
# side, unchanged on both) are the controls.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
export PYTHONUNBUFFERED=1
ops="linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_cross_entropy,linear_rope,linear_rmsnorm_rope"
AB_TOKENS=5958 AB_STATES=boost AB_BUDGET_S=300 AB_LABEL=s41-h200-rule-5958 OUT="$OUT/r/m5958" \
  scripts/wheel-ab.sh .prebuilt/s41r .prebuilt/s41m "Qwen2.5-7B $ops"
AB_TOKENS=10000 AB_STATES=boost AB_BUDGET_S=$((585 - SECONDS + t0)) AB_LABEL=s41-h200-rule-10000 OUT="$OUT/r/m10000" \
  scripts/wheel-ab.sh .prebuilt/s41r .prebuilt/s41m "Qwen2.5-7B $ops"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
