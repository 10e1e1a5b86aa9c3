#!/usr/bin/env bash
# Twenty-fifth session, call 8 (H100): the main job at HEAD on one GPU (README defaults), the
# carried wheel (45ab8e0's kernels) under this tree's Python: after the ResidualState change.
set -u
CODA_WHEEL=$(ls .prebuilt/s24w/*.whl) CODA_PYTHON_OVERLAY=1 OUT=$OUT/train timeout 400 scripts/device-run.sh train > "$OUT/train.log" 2>&1
echo "rc=$?"; grep -A10 "^variant" "$OUT/train.log"; grep -E "FAILED|Error" "$OUT/train.log" | head -5
cat "$OUT/train/gpu.txt"; rm -f "$OUT"/train/0-all.tgz "$OUT"/train/install.log
