#!/usr/bin/env bash
# Session 41, call 5 (H100). The 14 H100 op-table rows of call 3 (M buckets 4096 and 8192)
# against the old table, both wheels built from main's kernels (.prebuilt/s41b = the new tables,
# .prebuilt/s39a = 1cf0d79), scripts/wheel-ab.sh as the GPU comes at two M no table row has:
# 4600 (nearest bucket 4096) and 7300 (nearest 8192). Control: linear_rope (unchanged rows).
set -u
export PYTHONUNBUFFERED=1
AB_TOKENS=4600 AB_STATES=boost AB_BUDGET_S=${AB1_S:-250} AB_LABEL=s41-h100-rows-4600 OUT="$OUT/m4600" scripts/wheel-ab.sh .prebuilt/s39a .prebuilt/s41b \
  "8B linear_swiglu,linear_rmsnorm_swiglu,linear_rmsnorm_rope,linear_qknorm_rope,linear_qknorm_rope_save_pre,linear_bias_gelu,linear_rope" \
  "Qwen3-8B linear_swiglu,linear_rmsnorm_swiglu" "1B linear_bias_gelu_save_pre,linear_rope"
AB_TOKENS=7300 AB_STATES=boost AB_BUDGET_S=${AB2_S:-180} AB_LABEL=s41-h100-rows-7300 OUT="$OUT/m7300" scripts/wheel-ab.sh .prebuilt/s39a .prebuilt/s41b \
  "8B linear_residual_rms,linear_rmsnorm_bwd_qkv,linear_bias_gelu,linear_bias_gelu_save_pre,linear_rope" "1B linear_swiglu,linear_rope"
cd "$OUT" && tar -czf r.tgz m4600 m7300 && rm -rf m4600 m7300
