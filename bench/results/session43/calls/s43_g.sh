#!/usr/bin/env bash
# Session 43, call 10 (H200, needs_h200; carry .prebuilt/s43o and .prebuilt/s43m): four of the
# 41st session's seven H200 rows never A/B'd at an untuned M, against the table without them
# (.prebuilt/s43o = main with the seven rows marked "not A/B'd" removed; s43m = main). At
# M = 5958 they are reached: 8B / Qwen3-8B QK-norm RoPE save-Pre (its only row, 8192), the 8B QKV
# RMSNorm backward (4096), the 1B RMSNorm + QK-norm RoPE save-Pre (4096), the 1B SwiGLU backward
# (8192). Control: the 8B RoPE (unchanged).
set -u
mkdir -p "$OUT/r"
AB_TOKENS=5958 AB_LABEL=s43o-vs-s43m OUT="$OUT/r" scripts/wheel-ab.sh .prebuilt/s43o .prebuilt/s43m \
  "8B linear_qknorm_rope_save_pre,linear_rmsnorm_bwd_qkv,linear_rope" \
  "1B linear_rmsnorm_qknorm_rope_save_pre,linear_swiglu_bwd" "Qwen3-8B linear_qknorm_rope_save_pre"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
