#!/usr/bin/env bash
# Prepared in the 45th session for the next (H100, then an H200 with needs_h200). The QK-norm
# pre-norm store from registers, second version: branch register-pre-store (9b2f1ac = main +
# results/session45/register_pre_store_8byte.diff): one shuffle per pair of column groups and an
# 8-byte store a lane, where the first version (16-byte stores after a 4 x 4 quad transpose) ran
# Pingpong's head_dim-64 save-Pre kernels 1.14 x slower and the head_dim-128 ones 0.96-0.99 x
# (call 5). Carry OLD=.prebuilt/ab/s44f (main's library) and NEW=.prebuilt/ab/s45p (a wheel of
# 9b2f1ac with tests.tar.xz; rebuild if gone). Predicted: head_dim 128 0.96-0.99 x again; head_dim
# 64 ~1.00 x if the transpose's instructions were the 1B cost. Before merging, the full suites
# (as results/session44/calls/s44_j.sh) on the same wheel.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
NEW=${NEW:-.prebuilt/ab/s45p} OLD=${OLD:-.prebuilt/ab/s44f}
tar -xJf "$repo/$NEW/tests.tar.xz" -C "$repo/$NEW" || exit 1
timeout 100 "$repo/$NEW/coda_device_tests" --gtest_filter='*QkNorm*:*qknorm*:*Nan*:*BadInput*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
cd "$repo"
AB_LABEL=register-pre-store-8byte AB_BUDGET_S=$((580 - SECONDS + t0)) scripts/wheel-ab.sh "$OLD" "$NEW" \
  "1B linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope_save_pre" \
  "Qwen3-8B linear_rmsnorm_qknorm_rope_save_pre,linear_qknorm_rope_save_pre,linear_rope"
cd "$OUT" && tar -czf r.tgz r ab && rm -rf r ab
