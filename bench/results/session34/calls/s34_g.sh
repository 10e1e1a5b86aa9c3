#!/usr/bin/env bash
# Session 34, call 7 (H100). The benchmark of record on the H100 (last run in session 31), on the
# merged main's wheel (c8d87a7 = b4f3bf1 but for one test): the fused ops of 8B, 1B and Qwen3-8B
# widths in one process, every variant, M = 16384 and a random M.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/ab/new/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1 CODA_COMMIT=c8d87a7
t0=$SECONDS
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/ab/new/coda-*.whl > /dev/null 2>&1 || exit 1
cd "$OUT/r"
timeout $((585 - SECONDS + t0)) python3 -m coda.bench ops --models 8B,1B,Qwen3-8B --tokens 16384 --random-tokens \
  --seed 3407 --rounds 5 --out "$OUT/r/ops" > ops.log 2>&1
echo "ops rc=$? at $((SECONDS - t0)) s"; grep -E "^random" ops.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
