#!/usr/bin/env bash
# Session 44, call 7 (H100; carry .prebuilt/s44r = main, .prebuilt/s44q = main + the QK-norm node
# with one or two heads a subtile behind a uniform branch: no spill in its ovcoop kernel, 39th
# session). (1) Nsight Compute cycles (clocks left alone) of the QK-norm kernels on ovcoop and
# Pingpong 128 x 128 and their plain twins, 8B QKV shape, M = 16384, under both wheels: does the
# spill-free node close ovcoop's 6.6 % over its twin? (2) the QK-norm device tests on s44q;
# (3) the op tuner on s44q over the four QK-norm programs, 8B and Qwen3-8B, M = 16384, as the GPU
# comes (a row only where a pick confirms 2 % head to head).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
for w in s44r s44q; do
  python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/$w/coda-*.whl > /dev/null 2>&1 || exit 1
  for spec in linear_qknorm_rope:ovcoop linear_qknorm_rope_save_pre:ovcoop linear_qknorm_rope:128x128 linear_rmsnorm_qknorm_rope:128x128; do
    op=${spec%%:*}; only=${spec##*:}
    timeout 60 ncu --clock-control none --nvtx --nvtx-include "ncu/" --section SpeedOfLight \
      --export "$OUT/r/${w}_${op}_$only" python3 "$repo/bench/ncu_gemm_gap.py" --model 8B --m 16384 --op $op --only $only \
      > ncu_${w}_${op}_$only.log 2>&1
    echo "== $w $op $only rc=$? at $((SECONDS - t0)) s: $(grep -E 'kernel [0-9]' ncu_${w}_${op}_$only.log | tr -s ' ' | tr '\n' ';')"
    ncu --import ${w}_${op}_$only.ncu-rep --page details --print-units base 2>&1 | grep -E "SM Frequency|Elapsed Cycles|Duration" | tr -s ' ' | paste - - -
  done
done
tar -xJf "$repo/.prebuilt/s44q/tests.tar.xz" -C "$repo/.prebuilt/s44q" || exit 1
timeout 120 "$repo/.prebuilt/s44q/coda_device_tests" --gtest_filter='*QkNorm*:*qknorm*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
export CODA_COMMIT=$(cat "$repo/.prebuilt/s44q/COMMIT")
timeout $((580 - SECONDS + t0)) python3 -m coda.bench tune --ops linear_qknorm_rope,linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope,linear_rmsnorm_qknorm_rope_save_pre \
  --models 8B,Qwen3-8B --tokens 16384 --rounds 5 --seed 3407 --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$? at $((SECONDS - t0)) s"; grep -A14 "^| op" tune.log | tail -15; tail -2 tune.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
