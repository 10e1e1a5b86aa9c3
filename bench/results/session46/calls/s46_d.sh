#!/usr/bin/env bash
# Session 46, call 4 (H100; carry .prebuilt/ab/s44f = b3d0b5f and .prebuilt/ab/s45p = 9b2f1ac,
# the register pre-norm store's second version, branch register-pre-store). The 45th session's
# prepared results/session45/calls/s45_next_a.sh, on the second version (s45p) instead of the first
# (s45r): both cost the head_dim-64 save-Pre kernels 1.12-1.15 x (45th call 5, 46th call 1). Nsight
# Compute, clocks left alone, one launch of each wheel's Pingpong 128 x 128 save-Pre kernel (and its plain twin) at
# 1B and at 8B widths (M = 16384): cycles, warp states and per-instruction stall samples, the SASS
# exported. The guess to test: at K = 2048 a Pingpong tile's mainloop is half the 8B one, and
# the store's shuffles and selects lengthen the epilogue past the other warp group's mainloop.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
for w in s44f s45p; do
  python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/ab/$w/coda-*.whl > /dev/null 2>&1 || exit 1
  for model in 1B 8B; do
    timeout 120 ncu --clock-control none --nvtx --nvtx-include "ncu/" --section SpeedOfLight \
      --section WarpStateStats --section SourceCounters --export "$OUT/r/${w}_$model" \
      python3 "$repo/bench/ncu_gemm_gap.py" --model $model --m 16384 --op linear_qknorm_rope_save_pre \
      --only pingpong_128x128 > ncu_${w}_$model.log 2>&1
    echo "$w $model ncu rc=$? at $((SECONDS - t0)) s"; grep -E "kernel [0-9]|ERROR|Error" ncu_${w}_$model.log | head -4
    ncu --import ${w}_$model.ncu-rep --page details --print-units base > ${w}_$model.details.txt 2>&1
    ncu --import ${w}_$model.ncu-rep --launch-skip 1 --launch-count 1 --page source --csv --print-source sass \
      > ${w}_$model.sass.csv 2>/dev/null
    grep -E "Elapsed Cycles|SM Frequency|Duration" ${w}_$model.details.txt | head -6
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
