#!/usr/bin/env bash
# Twenty-third session, call 12 (H100; .prebuilt/new3): coda-train at Llama-3.2-1B widths (hidden
# 2048, 16 layers, 32/8 heads, FFN 8192, vocab 128256; 4 x 2048 tokens a step), 120 steps.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee "$OUT/r/gpu.txt"
(OUT="$OUT/r/train1b" CODA_WHEEL=$(ls "$repo"/.prebuilt/new3/coda-*.whl) \
  TRAIN_ARGS="--hidden 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --vocab 128256 --seq 2048 --batch 4 --steps 120 --timing-skip 10" \
  timeout 540 scripts/device-run.sh train > "$OUT/r/train1b.log" 2>&1)
echo "train rc=$?"; grep -vE "it/s|s/it|\|" "$OUT/r/train1b.log" | tail -14
