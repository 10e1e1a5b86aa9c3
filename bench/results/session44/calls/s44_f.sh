#!/usr/bin/env bash
# Session 44, call 6 (H100; carry .prebuilt/s44r). Which part of the QK-norm epilogue costs the
# overlapped Cooperative kernel its 6.6 % of cycles over its plain twin (calls 3-4): Nsight Compute
# (clocks left alone) on the plain twin and the fused kernel, Pingpong 128 x 192 and ovcoop, of
# RoPE alone (sincos and rotation, no norm, 64 x 32 subtiles), SwiGLU (gate/up width), and the
# QK-norm RoPE again, 8B widths, M = 16384.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s44r/coda-*.whl > /dev/null 2>&1 || exit 1
for op in linear_rope linear_qknorm_rope linear_swiglu linear_rmsnorm_rope; do
  for only in ovcoop 128x192; do
    timeout 120 ncu --clock-control none --nvtx --nvtx-include "ncu/" --section SpeedOfLight --section WarpStateStats \
      --export "$OUT/r/${op}_$only" python3 "$repo/bench/ncu_gemm_gap.py" --model 8B --m 16384 --op $op --only $only \
      > ncu_${op}_$only.log 2>&1
    echo "== $op $only rc=$? at $((SECONDS - t0)) s"; grep -E "kernel [0-9]|skipped" ncu_${op}_$only.log
    ncu --import ${op}_$only.ncu-rep --page details --print-units base 2>&1 | grep -E "SM Frequency|Elapsed Cycles|Duration" | tr -s ' ' | paste - - -
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
