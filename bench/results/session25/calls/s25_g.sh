#!/usr/bin/env bash
# Twenty-fifth session, call 7 (2 GPUs): coda-train under FSDP2 (a unit per decoder layer) at
# Llama-3.2-1B widths, speed and memory only (no fp32 reference), 2 x 2048 tokens a rank.
set -u
mkdir -p "$OUT"
whl=$(ls .prebuilt/s24w/*.whl)
t0=$SECONDS
CODA_WHEEL=$whl CODA_PYTHON_OVERLAY=1 TRAIN_GPUS=2 OUT=$OUT/fsdp1b TRAIN_ARGS="--parallel fsdp --hidden 2048 \
--layers 16 --heads 32 --kv-heads 8 --ffn 8192 --batch 4 --steps 60 --variants hf_eager,hf_compile,coda" \
  timeout 330 scripts/device-run.sh train > "$OUT/train_fsdp_1b.log" 2>&1
echo "rc=$? in $((SECONDS - t0)) s"; grep -B2 -A8 "^variant" "$OUT/train_fsdp_1b.log"; grep -E "FAILED|Error" "$OUT/train_fsdp_1b.log" | head -5
rm -f "$OUT"/fsdp1b/0-all.tgz "$OUT"/fsdp1b/install.log
