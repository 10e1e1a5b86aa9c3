#!/usr/bin/env bash
# Session 28, call 10 (H100): the end state of this session's op tables (wheel of 994d945): the
# fused ops of 1B and 8B in one process, every variant, at M = 16384, call 7's 4686 and a new random
# M; each row names the kernel it ran. One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
cd "$OUT/r"
t0=$SECONDS
PYTHONUNBUFFERED=1 timeout 520 python3 -m coda.bench ops --models 8B,1B --tokens 16384,4686 --random-tokens --seed 2812 \
  --rounds 5 --out "$OUT/r/ops" > ops.log 2>&1
echo "ops rc=$? in $((SECONDS - t0)) s"; grep -E "^random|^\| linear_" ops.log | head -130
cd "$OUT" && tar -czf r.tgz r && rm -rf r
