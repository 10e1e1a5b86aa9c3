#!/usr/bin/env bash
# Twenty-third session, call 13 (H100; .prebuilt/new3): coda-train at Llama-3.2-1B widths with the
# fp32 reference that ran out of memory at 4 x 2048 tokens and vocab 128256: vocab 32000, 2 x 2048
# tokens a step, 150 steps — the parity check at 1B widths.
set -u
repo=$PWD
mkdir -p "$OUT/r"
(OUT="$OUT/r/train1b" CODA_WHEEL=$(ls "$repo"/.prebuilt/new3/coda-*.whl) \
  TRAIN_ARGS="--hidden 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --vocab 32000 --seq 2048 --batch 2 --steps 150 --timing-skip 10" \
  timeout 560 scripts/device-run.sh train > "$OUT/r/train1b.log" 2>&1)
echo "train rc=$?"; grep -vE "it/s|s/it|\|" "$OUT/r/train1b.log" | tail -12
