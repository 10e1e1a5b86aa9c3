#!/usr/bin/env bash
# Twenty-fifth session, call 6 (2 GPUs): coda-train data-parallel over both GPUs through torchrun
# (scripts/device-run.sh train with TRAIN_GPUS=2), README defaults: FSDP2 with a unit per decoder
# layer, then DDP; the carried wheel (45ab8e0's kernels) under this tree's Python.
set -u
mkdir -p "$OUT"
whl=$(ls .prebuilt/s24w/*.whl)
t0=$SECONDS
CODA_WHEEL=$whl CODA_PYTHON_OVERLAY=1 TRAIN_GPUS=2 TRAIN_ARGS="--parallel fsdp" OUT=$OUT/fsdp \
  timeout 330 scripts/device-run.sh train > "$OUT/train_fsdp.log" 2>&1
echo "fsdp rc=$? in $((SECONDS - t0)) s"; grep -A12 "^variant" "$OUT/train_fsdp.log"; grep -E "FAILED|Error" "$OUT/train_fsdp.log" | head -5
left=$((540 - (SECONDS - t0)))
echo "$left s left for ddp"
[ $left -gt 150 ] && { CODA_WHEEL=$whl CODA_PYTHON_OVERLAY=1 TRAIN_GPUS=2 TRAIN_ARGS="--parallel ddp" OUT=$OUT/ddp \
  timeout $left scripts/device-run.sh train > "$OUT/train_ddp.log" 2>&1; echo "ddp rc=$?";
  grep -A12 "^variant" "$OUT/train_ddp.log"; grep -E "FAILED|Error" "$OUT/train_ddp.log" | head -5; }
rm -f "$OUT"/*/0-all.tgz
