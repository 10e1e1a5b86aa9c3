#!/usr/bin/env bash
# Session 34, call 9 (asked as nvidia-h200 after giving the H100 back; no H200 came: it ran on an H100). The same as call 3 (s34_c.sh): the device suite
# and tune-ops --epilogue-cost at 8B and 1B widths, on the binaries of 9833cc4 (.prebuilt/ovpack;
# the kernels merged into main).
set -u
tar -xJf .prebuilt/ovpack/ovbin.tar.xz -C .prebuilt || exit 1
bin=$PWD/.prebuilt/ovbin
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat "$bin/COMMIT" | tee "$OUT/r/commit.txt"
cd "$OUT/r"
t0=$SECONDS
timeout 200 "$bin/coda_device_tests" --gtest_brief=1 > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED)|tests ran" device_tests.log | head -20
fwd=linear_swiglu,linear_residual_rms,linear_qknorm_rope,linear_qknorm_rope_save_pre,linear_rope,linear_cross_entropy,linear_bias_gelu
for size in 8B 1B; do
  timeout $((560 - SECONDS + t0)) "$bin/coda-bench" tune-ops --models $size --ops $fwd \
    --rounds 3 --epilogue-cost > tune_ops_fwd_$size.log 2>&1
  echo "tune-ops fwd $size rc=$? at $((SECONDS - t0)) s"
  timeout $((560 - SECONDS + t0)) "$bin/coda-bench" tune-ops --bwd --models $size \
    --ops linear_swiglu_bwd,linear_rmsnorm_bwd,linear_bias_gelu_bwd --rounds 3 --epilogue-cost > tune_ops_bwd_$size.log 2>&1
  echo "tune-ops bwd $size rc=$? at $((SECONDS - t0)) s"
done
grep -h "^{OpKey" tune_ops_*.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
