#!/usr/bin/env bash
# Session 37, call 4 (H100). Call 3 found the boost-clock and sustained tuner runs disagreeing on the
# rows tuned to Pingpong 128 x 128 at the boost clock: sustained, 128 x 192 ran ~10 % ahead of them
# at the 8B RoPE and residual shapes (boost: within 1-3 % behind). The same two runs here on the
# other ops whose H100 row at M = 16384 is Pingpong 128 x 128 (1B SwiGLU, RMSNorm-SwiGLU, bias-GELU
# and its save-pre and backward; 8B RMSNorm at the QKV shape), for a decision on both states.
# Wheel: .prebuilt/s37s (9ced8dc's kernels and tables).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=9ced8dc
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s37s/coda-*.whl > /dev/null 2>&1 || exit 1
ops=linear_rmsnorm,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_bias_gelu_save_pre,linear_bias_gelu_bwd
for state in boost sustained; do
  extra=""; [ $state = sustained ] && extra="--sustained 20"
  left=$((585 - SECONDS + t0)); [ $left -lt 60 ] && break
  timeout $left python3 -m coda.bench tune --models 1B,8B --tokens 16384 --rounds 5 --seed 3407 \
    --ops $ops $extra --out "$OUT/r/tune_$state" > tune_$state.log 2>&1
  echo "tune $state rc=$? at $((SECONDS - t0)) s"
  grep -E "within|written" tune_$state.log | cut -c1-200
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
