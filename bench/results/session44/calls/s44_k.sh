#!/usr/bin/env bash
# Session 44, call 11 (H200, needs_h200; carry .prebuilt/ab: s44r = main before the QK-norm change,
# s44h = b3d0b5f + the H200's 8B/Qwen3-8B QKV QK-norm RoPE row on ovcoop along N, swizzle 8).
# What an H200 user gets from the change: processes old new new old, as the GPU comes and
# sustained, M = 16384, outputs checked. The 1B rows and the RMSNorm + QK-norm rows keep their
# kernels (the node change alone); 8B RoPE is the control.
AB_LABEL=s44-qknorm-h200 AB_BUDGET_S=560 scripts/wheel-ab.sh .prebuilt/ab/s44r .prebuilt/ab/s44h \
  "8B linear_qknorm_rope,linear_rmsnorm_qknorm_rope,linear_rope" "Qwen3-8B linear_qknorm_rope" \
  "1B linear_qknorm_rope,linear_rmsnorm_qknorm_rope"
cd "$OUT" && tar -czf ab.tgz ab && rm -rf ab
