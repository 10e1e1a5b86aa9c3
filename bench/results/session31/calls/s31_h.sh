#!/usr/bin/env bash
# Session 31, call 8 (H100, wheel of 024e048). The op tuner on every op of 1B widths at M = 4096 and
# 8192 (the table's buckets): call 6 put the 1B's 4096 rows behind efbb226's where the new 7000 rows
# had become the nearest (RMSNorm-RoPE 1.27 x, RoPE 1.07 x); rows it writes anchor the buckets.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/ab/new/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
for m in 4096 8192; do
  timeout 200 python3 -m coda.bench tune --models 1B --tokens $m --seed 318 --out "$OUT/r/tune_${m}_1B" > tune_${m}_1B.log 2>&1
  echo "tune 1B $m rc=$? at $((SECONDS - t0)) s"; grep -E "within|rows written" tune_${m}_1B.log
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
