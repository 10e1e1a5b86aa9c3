#!/usr/bin/env bash
# Session 43, call 4 (H200, warm from call 3; carry .prebuilt/s43m): the README's main job,
# `python -m coda.train` with its defaults, on d083239 (the last H200 run is the 39th session's,
# 1cf0d79).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r/train"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s43m/coda-*.whl > /dev/null 2>&1 || exit 1
(cd train && CODA_COMMIT=d083239 timeout $((585 - SECONDS + t0)) python3 -m coda.train --out "$OUT/r/train" > train.log 2>&1)
echo "train rc=$? at $((SECONDS - t0)) s"; tail -9 train/train.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
