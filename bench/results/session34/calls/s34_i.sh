#!/usr/bin/env bash
# Session 34, call 9 (asked as nvidia-h200 after giving the H100 back; no H200 came: it ran on an H100). The same as call 3 on the H200: the merged kernels (overlap-coop binaries of 9833cc4; main b4f3bf1 has the same device code). The overlapped Cooperative kernel, second build (overlap-coop 992f85f:
# 2 load / 1 store epilogue stages, so 3 mainloop stages for the residual-RMS and RMSNorm-backward
# programs; 16-byte handoff chunks; no ovcoop for the programs that scale the accumulator). (1) the
# C++ device suite; (2) tune-ops --epilogue-cost, every candidate against cuBLAS and its own
# plain twin in the same rounds: forward ops at 8B and 1B widths, backward ops at 8B and 1B,
# M = 16384.
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
