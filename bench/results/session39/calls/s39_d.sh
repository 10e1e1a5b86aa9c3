#!/usr/bin/env bash
# Session 39, call 5 (H200): the README's main job, coda-train with its defaults, on 1cf0d79
# (wheel .prebuilt/s39a); the last H200 run of it was the 2026-11-22 one (87c9996).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r/train"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s39a/coda-*.whl > /dev/null 2>&1 || exit 1
(cd train && CODA_COMMIT=1cf0d79 timeout $((585 - SECONDS + t0)) python3 -m coda.train --out "$OUT/r/train" > train.log 2>&1)
echo "train rc=$? at $((SECONDS - t0)) s"; tail -25 train/train.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
