#!/usr/bin/env bash
# Session 33, call 6 (asked for an H200). The benchmark of record on the H200, wheel of 1c03be1
# (its H200 table with call 3's QKV rows): the fused ops of 8B, 1B and Qwen3-8B widths in one
# process, every variant, M = 16384 and a random M.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/COMMIT | tee "$OUT/r/commit.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout $((560 - SECONDS + t0)) python3 -m coda.bench ops --models 8B,1B,Qwen3-8B --tokens 16384 --random-tokens \
  --seed 3306 --rounds 5 --out "$OUT/r/ops" > ops.log 2>&1
echo "ops rc=$? at $((SECONDS - t0)) s"; grep -E "^random" ops.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
