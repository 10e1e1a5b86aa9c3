#!/usr/bin/env bash
# Session 29, call 12 (H100): the main job at the README defaults (python3 -m coda.train) on the
# wheel of cf75144 (the submitted table and device code). One tarball back.
set -u
mkdir -p "$OUT/r/train"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
cd "$OUT/r/train" && PYTHONUNBUFFERED=1 timeout 300 python3 -m coda.train --out "$OUT/r/train" > "$OUT/r/train.log" 2>&1
echo "train rc=$?"; cd "$OUT/r"; grep -A6 "^variant" train.log; grep -E "PASS|MISS|Error" train.log | head -5
cd "$OUT" && tar -czf r.tgz r && rm -rf r
