#!/usr/bin/env bash
# Session 40, call 5 (H200). The call-3 rows at M = 11585 (.prebuilt/s40b) against 1cf0d79
# (.prebuilt/s39a): scripts/wheel-ab.sh at M = 10700 (not tuned; 11585 its nearest row), as the GPU
# comes only (the session's device time), linear_rope as the control.
set -u
export PYTHONUNBUFFERED=1
AB_TOKENS=10700 AB_STATES=boost AB_BUDGET_S=250 AB_LABEL=s40-h200-rows-11585 OUT="$OUT/r" scripts/wheel-ab.sh .prebuilt/s39a .prebuilt/s40b \
  "8B linear_swiglu_bwd,linear_rope" "Qwen3-8B linear_swiglu_bwd,linear_cross_entropy" "1B linear_rmsnorm,linear_swiglu_bwd,linear_rmsnorm_bwd"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
