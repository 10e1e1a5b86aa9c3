#!/usr/bin/env bash
# Prepared in the 41st session for the next (H200 with needs_h200; carry .prebuilt/s41r and
# .prebuilt/s41m). The H200's rule for wide-output ops (along_m_where_measured: SwiGLU,
# RMSNorm + SwiGLU, bias-GELU, loss-only cross-entropy walk along M with swizzle 1 up to M = 12288,
# 6144 for the LM head), new = .prebuilt/s41m (3ac98b0, main), old = .prebuilt/s41r (d59be0e: the
# same with the old rule), at Qwen2.5-7B's widths, which no table row is near (every op runs the
# rule): scripts/wheel-ab.sh as the GPU comes at M = 5958 (the record's random M) and 10000.
# Predicted from the tuner logs: SwiGLU / RMSNorm-SwiGLU 0.88-0.92 x the old time, bias-GELU
# ~0.97, cross-entropy ~0.90 at 5958 and unchanged at 10000 (above its 6144 cap); the RoPE rows
# (QKV side, unchanged) are the controls.
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
