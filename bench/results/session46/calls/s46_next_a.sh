#!/usr/bin/env bash
# Prepared in the 46th session for the next: run on an H200 (needs_h200; carry .prebuilt/ab/s44f =
# b3d0b5f and a wheel of main at 748ad8a or later as .prebuilt/ab/<name>, made with
# `CODA_BINARIES=1 scripts/build-wheel.sh` + `scripts/pack-ab-wheel.sh <name>`; 8060661, the 46th
# session's s46n, is the same code). The register pre-norm store merged in the 46th session was
# measured on an H100 only: head_dim 128 (Qwen3-8B) 0.965-0.989 x, head_dim 64 (1B) 1.02-1.07 x.
# The QK-norm, NaN and bad-input device tests, then the A/B, processes old new new old, both clock
# states, RoPE as the control. If Qwen3-8B loses on the H200, the store needs a per-GPU choice
# (the save-Pre programs with each store, one op table column) or a revert.
set -u
repo=$PWD; t0=$SECONDS
NEW=${NEW:?set NEW=.prebuilt/ab/<a wheel of main>}
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
tar -xJf "$repo/$NEW/tests.tar.xz" -C "$repo/$NEW" || exit 1
timeout 90 "$repo/$NEW/coda_device_tests" --gtest_filter='*QkNorm*:*qknorm*:*Nan*:*BadInput*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -4
cd "$repo"
OUT=$OUT/ab AB_LABEL=register-store-h200 AB_BUDGET_S=$((560 - SECONDS + t0)) scripts/wheel-ab.sh .prebuilt/ab/s44f "$NEW" \
  "1B linear_rmsnorm_qknorm_rope_save_pre,linear_qknorm_rope_save_pre" \
  "Qwen3-8B linear_rmsnorm_qknorm_rope_save_pre,linear_qknorm_rope_save_pre,linear_rope"
cd "$OUT" && tar -czf r.tgz r ab && rm -rf r ab
