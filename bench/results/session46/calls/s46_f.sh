#!/usr/bin/env bash
# Session 46, call 6 (H100; carry .prebuilt/ab/s46r2 = branch reg-prefetch: the register pre-norm
# store + the L1 prefetch of the tile's RoPE frequencies). Call 4's Nsight Compute on the 1B
# register-store kernel again, with the prefetch (call 5: it changed nothing, 1.13-1.14 x): do the
# FMULs still wait on the frequency loads? If they do with the lines in L1, the loads queue behind
# something else in the L1TEX pipeline (the Pre stores, issued before them in visit), not on L2.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
for w in s46r2; do
  python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/ab/$w/coda-*.whl > /dev/null 2>&1 || exit 1
  for model in 1B; do
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
