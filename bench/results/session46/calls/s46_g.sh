#!/usr/bin/env bash
# Session 46, call 7 (H100; carry .prebuilt/ab/s44f = b3d0b5f, main's library, and
# .prebuilt/ab/s46n = branch reg-no-allocate: the register pre-norm store (8-byte) + the L1
# prefetch of the tile's RoPE frequencies + the Pre stores marked st.global.L1::no_allocate).
# The guess after calls 4-6: with six mainloop stages in shared memory the L1 left is small, and
# the register store's 16 KB of Pre a subtile, allocating in L1, evicts the frequencies and gamma
# the head_dim-64 rewrite then waits on (the TMA store never touches L1). The QK-norm, NaN and
# bad-input device tests, Nsight Compute on the 1B save-Pre kernel, then the A/B against main,
# processes old new new old, both clock states. Predicted: 1B save-Pre back to ~1.00 x or below
# (not 1.12-1.15 x); Qwen3-8B 0.95-0.99 x as before; RoPE control 1.00 x.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
W=$repo/.prebuilt/ab/s46n
tar -xJf "$W/tests.tar.xz" -C "$W" || exit 1
timeout 90 "$W/coda_device_tests" --gtest_filter='*QkNorm*:*qknorm*:*Nan*:*BadInput*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -4
python3 -m pip install -q --no-deps --force-reinstall "$W"/coda-*.whl > /dev/null 2>&1 || exit 1
timeout 100 ncu --clock-control none --nvtx --nvtx-include "ncu/" --section SpeedOfLight \
  --section WarpStateStats --section SourceCounters --export "$OUT/r/s46n_1B" \
  python3 "$repo/bench/ncu_gemm_gap.py" --model 1B --m 16384 --op linear_qknorm_rope_save_pre \
  --only pingpong_128x128 > ncu_s46n_1B.log 2>&1
echo "ncu rc=$? at $((SECONDS - t0)) s"
ncu --import s46n_1B.ncu-rep --page details --print-units base > s46n_1B.details.txt 2>&1
ncu --import s46n_1B.ncu-rep --launch-skip 1 --launch-count 1 --page source --csv --print-source sass \
  > s46n_1B.sass.csv 2>/dev/null
grep -E "Elapsed Cycles" s46n_1B.details.txt | head -2
rm -f s46n_1B.ncu-rep; gzip -9 s46n_1B.sass.csv
cd "$repo"
OUT=$OUT/ab AB_LABEL=register-store-no-allocate AB_BUDGET_S=$((560 - SECONDS + t0)) scripts/wheel-ab.sh .prebuilt/ab/s44f .prebuilt/ab/s46n \
  "1B linear_rmsnorm_qknorm_rope_save_pre,linear_qknorm_rope_save_pre" "Qwen3-8B linear_rmsnorm_qknorm_rope_save_pre,linear_rope"
cd "$OUT" && tar -czf r.tgz r ab && rm -rf r ab
