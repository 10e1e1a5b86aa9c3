#!/usr/bin/env bash
# Session 44, call 8 (H100; carry .prebuilt/ab/s44r = main, .prebuilt/ab/s44q = main + the QK-norm node
# with one or two heads a subtile behind a uniform branch). Op-level A/B of the node change on
# today's table (the QK-norm rows run Pingpong 128 x 128 at these shapes): processes old new new
# old, as the GPU comes and sustained, M = 16384, outputs checked (scripts/wheel-ab.sh). Nsight
# Compute read the new node 1-2.5 % fewer cycles on Pingpong 128 x 128 at 8B (call 7); the 39th
# session read 8B 0.96-1.03 x and 1B (two heads a subtile) 1.03-1.07 x. 8B RoPE is the control.
AB_LABEL=s44-qknorm-uniform AB_BUDGET_S=570 scripts/wheel-ab.sh .prebuilt/ab/s44r .prebuilt/ab/s44q \
  "8B linear_qknorm_rope,linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope,linear_rmsnorm_qknorm_rope_save_pre,linear_rope" \
  "Qwen3-8B linear_qknorm_rope,linear_rmsnorm_qknorm_rope" \
  "1B linear_qknorm_rope,linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope,linear_rmsnorm_qknorm_rope_save_pre"
cd "$OUT" && tar -czf ab.tgz ab && rm -rf ab
