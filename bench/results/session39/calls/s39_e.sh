#!/usr/bin/env bash
# Session 39, call 6 (H100). Branch exp-pp192x128 at 157268f with the QK-norm node cut to one head a
# subtile (results/session39/ptxas/qknorm_one_head_only.diff: head_dim 128 only; its 192 x 128
# QK-norm RoPE kernels do not spill): does the 1 x 2 tile's QK-norm epilogue become free?
# coda-bench tune-ops --epilogue-cost on the 8B QK-norm programs (head_dim 128), binaries old
# (.prebuilt/exp192c, the branch as built) and new (one head), processes old new new old, 10 rounds
# each; then the new binary's QK-norm device tests (head_dim 64 cases are expected to fail).
set -u
repo=$PWD; t0=$SECONDS
tar -xJf .prebuilt/c39/bins.tar.xz -C .prebuilt || exit 1     # exp192c/coda-bench (old)
mkdir -p .prebuilt/onehead && tar -xJf .prebuilt/c39e/onehead.tar.xz -C .prebuilt/onehead || exit 1
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
for pass in o1 n1 n2 o2; do
  bin="$repo"/.prebuilt/exp192c/coda-bench; [ "${pass%[12]}" = n ] && bin="$repo"/.prebuilt/onehead/coda-bench
  timeout 120 "$bin" tune-ops --models 8B --ops linear_qknorm_rope,linear_rmsnorm_qknorm_rope \
    --rounds 10 --epilogue-cost > tune_ops_8B_$pass.log 2>&1
  echo "tune-ops $pass rc=$? at $((SECONDS - t0)) s"
done
timeout 240 "$repo"/.prebuilt/onehead/coda_device_tests --gtest_filter='*QkNorm*' > device_tests_qknorm.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests_qknorm.log | tail -8
cd "$OUT" && tar -czf r.tgz r && rm -rf r
