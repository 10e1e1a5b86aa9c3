#!/usr/bin/env bash
# Twenty-sixth session, call 5 (2 GPUs): coda-train with FSDP2 (a unit per decoder layer) and fp32
# master weights through its MixedPrecisionPolicy at Llama-3.2-1B widths (as the 25th session's
# call 7 in bf16), speed and memory only; the carried wheel (45ab8e0's kernels), this tree's Python.
set -u
mkdir -p "$OUT"
whl=$(ls .prebuilt/s24w/*.whl)
t0=$SECONDS
CODA_WHEEL=$whl CODA_PYTHON_OVERLAY=1 TRAIN_GPUS=2 OUT=$OUT/fsdp_amp_1b \
  TRAIN_ARGS="--parallel fsdp --precision amp --hidden 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --batch 4 --steps 60 --variants hf_eager,hf_compile,coda" \
  timeout 500 scripts/device-run.sh train > "$OUT/train_fsdp_amp_1b.log" 2>&1
echo "rc=$? in $((SECONDS - t0)) s"; grep -A8 "^variant" "$OUT/train_fsdp_amp_1b.log"; grep -E "FAILED|Error|PASS|MISS" "$OUT/train_fsdp_amp_1b.log" | head -6
rm -f "$OUT"/*/0-all.tgz "$OUT"/*/install.log
