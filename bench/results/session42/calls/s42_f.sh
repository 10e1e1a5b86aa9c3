#!/usr/bin/env bash
# Session 42, call 4 (H200 with needs_h200; carry .prebuilt/s41r, s42r, s41m, s41c, s41o).
# (1) The rule refits at Qwen2.5-7B's widths, M = 5958 and 10000, eager PyTorch in the rounds
# (old s41r, new s42r; with eager in the rounds). (2) The CE fwd+bwd chunks (s41m -> s41c) at M = 5958.
# (3) The 41st session's 12 H200 rows (s41o = main without them -> s41m) at M = 7500, with what is
# left (s41_next_c.sh's first half).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
export PYTHONUNBUFFERED=1
ops="linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_cross_entropy,linear_rope,linear_rmsnorm_rope"
ops="$ops,linear_swiglu_bwd,linear_bias_gelu_bwd,linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd"
for m in 5958 10000; do
  AB_VARIANTS=coda,torch_matmul,coda_gemm,eager AB_TOKENS=$m AB_STATES=boost AB_BUDGET_S=120 AB_LABEL=s42-rules-$m \
    OUT="$OUT/r/m$m" scripts/wheel-ab.sh .prebuilt/s41r .prebuilt/s42r "Qwen2.5-7B $ops"
  echo "rules $m done at $((SECONDS - t0)) s"
done
AB_TOKENS=5958 AB_STATES=boost AB_BUDGET_S=140 AB_LABEL=s42-ce-chunks-5958 OUT="$OUT/r/ce5958" \
  scripts/wheel-ab.sh .prebuilt/s41m .prebuilt/s41c "Qwen3-8B linear_cross_entropy_fwd_bwd" "8B linear_cross_entropy_fwd_bwd,linear_rope"
echo "ce done at $((SECONDS - t0)) s"
AB_TOKENS=7500 AB_STATES=boost AB_BUDGET_S=$((540 - SECONDS + t0)) AB_LABEL=s41-h200-rows-7500 OUT="$OUT/r/rows7500" \
  scripts/wheel-ab.sh .prebuilt/s41o .prebuilt/s41m \
  "8B linear_bias_gelu_save_pre,linear_qknorm_rope_save_pre,linear_rmsnorm_bwd_qkv,linear_rope" \
  "1B linear_qknorm_rope,linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope,linear_rmsnorm_qknorm_rope_save_pre,linear_rmsnorm_rope,linear_swiglu_bwd,linear_rope"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
