#!/usr/bin/env bash
# Twenty-sixth session, call 4 (2 GPUs): coda-train under torchrun with FSDP2 (a unit per decoder
# layer) and fp32 master weights through FSDP2's MixedPrecisionPolicy (--precision amp, 6b5846a),
# README defaults otherwise; the carried wheel (45ab8e0's kernels) under this tree's Python.
set -u
mkdir -p "$OUT"
whl=$(ls .prebuilt/s24w/*.whl)
t0=$SECONDS
CODA_WHEEL=$whl CODA_PYTHON_OVERLAY=1 TRAIN_GPUS=2 TRAIN_ARGS="--parallel fsdp --precision amp" OUT=$OUT/fsdp_amp \
  timeout 420 scripts/device-run.sh train > "$OUT/train_fsdp_amp.log" 2>&1
echo "fsdp amp rc=$? in $((SECONDS - t0)) s"; grep -A12 "^variant" "$OUT/train_fsdp_amp.log"; grep -E "FAILED|Error|PASS|MISS" "$OUT/train_fsdp_amp.log" | head -10
rm -f "$OUT"/*/0-all.tgz "$OUT"/*/install.log
