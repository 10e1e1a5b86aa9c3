#!/usr/bin/env bash
# Session 45, call 5 (H100; carry .prebuilt/ab/s44f = b3d0b5f, main's library, and
# .prebuilt/ab/s45r = 233c200: the hoisted row scale, no table change, + the QK-norm save-Pre
# programs storing Pre from registers). What users run changes only in the save-Pre kernels (their
# Pingpong 128 x 128 rows): the op-level A/B, processes old new new old, both clock states, with
# the non-saving QK-norm and the RoPE as controls.
set -u
cd "$PWD"
AB_LABEL=register-pre-store AB_BUDGET_S=${AB_BUDGET_S:-450} scripts/wheel-ab.sh .prebuilt/ab/s44f .prebuilt/ab/s45r \
  "8B linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope" \
  "Qwen3-8B linear_rmsnorm_qknorm_rope_save_pre,linear_qknorm_rope_save_pre,linear_rope" \
  "1B linear_rmsnorm_qknorm_rope_save_pre,linear_qknorm_rope_save_pre"
cd "$OUT" && tar -czf ab.tgz ab && rm -rf ab
