#!/usr/bin/env bash
# Prepared in the 41st session for the next (H200: run with needs_h200; carry .prebuilt/s41o and
# .prebuilt/s41m). The 12 H200 rows of the 41st session's call 4 (M buckets 4096 and 8192),
# old = .prebuilt/s41o (67331f7: main with the H200 table before them), new = .prebuilt/s41m
# (d2eebe0, main), as the GPU comes, at the M `scripts/table_buckets.py --ab-m
# bench/results/session41/call4/both_states.inc src/ops/op_table_h200.inc` names: 7500 reaches ten
# of them, 2900 the other two. Controls: RoPE (no new row reaches it).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
export PYTHONUNBUFFERED=1
AB_TOKENS=7500 AB_STATES=boost AB_BUDGET_S=380 AB_LABEL=s41-h200-rows-7500 OUT="$OUT/r/m7500" scripts/wheel-ab.sh .prebuilt/s41o .prebuilt/s41m \
  "8B linear_bias_gelu_save_pre,linear_qknorm_rope_save_pre,linear_rmsnorm_bwd_qkv,linear_rope" \
  "Qwen3-8B linear_cross_entropy" \
  "1B linear_qknorm_rope,linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope,linear_rmsnorm_qknorm_rope_save_pre,linear_rmsnorm_rope,linear_swiglu_bwd,linear_rope"
AB_ROUNDS=10 AB_TOKENS=2900 AB_STATES=boost AB_BUDGET_S=$((585 - SECONDS + t0)) AB_LABEL=s41-h200-rows-2900 OUT="$OUT/r/m2900" scripts/wheel-ab.sh .prebuilt/s41o .prebuilt/s41m \
  "Qwen3-8B linear_rmsnorm_swiglu,linear_rope" "1B linear_rmsnorm_bwd_qkv,linear_rope"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
