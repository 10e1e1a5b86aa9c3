#!/usr/bin/env bash
# Session 46, call 5 (H100; carry .prebuilt/ab/s44f = b3d0b5f, main's library, .prebuilt/ab/s46q =
# branch hoist-qk-loads: main + the QK-norm node prefetching the tile's RoPE frequencies into L1 at
# the tile's start, and .prebuilt/ab/s46r2 = branch reg-prefetch: the register pre-norm store's
# second version (s45p) + the same prefetch). Call 4's Nsight Compute found the two-heads path
# (head_dim 64, 1B widths) waiting on those loads, issued ~10 instructions before their use: 5 % of
# the stall samples of main's kernel, 18 % of the register-store kernel's. The QK-norm, NaN and
# bad-input device tests on both new wheels, then two A/Bs, processes old new new old, both clock
# states. Predicted: 1B QK-norm rows 0.95-0.98 x on main + prefetch; the register store's 1B
# loss (1.12-1.15 x) mostly gone; Qwen3-8B (one-head path, loads already early) ~1.00 x.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
for w in s46q s46r2; do
  W=$repo/.prebuilt/ab/$w
  tar -xJf "$W/tests.tar.xz" -C "$W" || exit 1
  timeout 90 "$W/coda_device_tests" --gtest_filter='*QkNorm*:*qknorm*:*Nan*:*BadInput*' > device_tests_$w.log 2>&1
  echo "$w device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests_$w.log | tail -4
done
cd "$repo"
OUT=$OUT/ab1 AB_LABEL=qk-prefetch AB_BUDGET_S=$((330 - SECONDS + t0)) scripts/wheel-ab.sh .prebuilt/ab/s44f .prebuilt/ab/s46q \
  "1B linear_qknorm_rope,linear_rmsnorm_qknorm_rope_save_pre" "Qwen3-8B linear_rmsnorm_qknorm_rope_save_pre"
OUT=$OUT/ab2 AB_LABEL=register-store-prefetch AB_BUDGET_S=$((575 - SECONDS + t0)) scripts/wheel-ab.sh .prebuilt/ab/s44f .prebuilt/ab/s46r2 \
  "1B linear_rmsnorm_qknorm_rope_save_pre" "Qwen3-8B linear_rmsnorm_qknorm_rope_save_pre"
cd "$OUT" && tar -czf r.tgz r ab1 ab2 && rm -rf r ab1 ab2
