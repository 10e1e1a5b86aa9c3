#!/usr/bin/env bash
# Session 40, call 4 (H200). The 24 H200 rows of call 3 (M = 5793 and 11585, best over both clock
# states; .prebuilt/s40b = main + those rows) against 1cf0d79 (.prebuilt/s39a): scripts/wheel-ab.sh
# at M = 5958 (the 39th session's random M, not tuned: the 5793 rows are its nearest), as the GPU
# comes and sustained, every op with a new row there; linear_rope (no new row) as the control.
set -u
export PYTHONUNBUFFERED=1
AB_TOKENS=5958 AB_BUDGET_S=560 AB_LABEL=s40-h200-rows OUT="$OUT/r" scripts/wheel-ab.sh .prebuilt/s39a .prebuilt/s40b \
  "8B linear_residual_rms,linear_rmsnorm_swiglu,linear_qknorm_rope,linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope,linear_swiglu_bwd,linear_bias_gelu,linear_bias_gelu_save_pre,linear_rope" \
  "Qwen3-8B linear_swiglu,linear_rmsnorm_swiglu,linear_cross_entropy" \
  "1B linear_swiglu,linear_rmsnorm_swiglu,linear_qknorm_rope,linear_swiglu_bwd,linear_rmsnorm_bwd_qkv,linear_bias_gelu,linear_bias_gelu_save_pre,linear_rope"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
