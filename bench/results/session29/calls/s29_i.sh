#!/usr/bin/env bash
# Session 29, call 9 (H100): the submitted state (wheel of 80abb30): the fused ops of 8B, 1B and
# Qwen3-8B widths in one process, every variant, at M = 16384 and a new random M. One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
cd "$OUT/r"
t0=$SECONDS
PYTHONUNBUFFERED=1 timeout 540 python3 -m coda.bench ops --models 8B,1B,Qwen3-8B --tokens 16384 --random-tokens \
  --seed 2913 --rounds 5 --out "$OUT/r/ops" > ops.log 2>&1
echo "ops rc=$? in $((SECONDS - t0)) s"; grep -E "^random" ops.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
