#!/usr/bin/env bash
# Twenty-seventh session, call 4 (2 GPUs): FSDP2 with activation checkpointing — the new
# distributed test case (a unit per layer, each layer's chain recomputed in its backward), then
# coda-train --parallel fsdp --precision amp --checkpointing at Llama-3.2-1B widths (speed and
# memory), on the carried wheel (HEAD's Python and kernels).
set -u
repo=$PWD
mkdir -p "$OUT"
whl=$(ls .prebuilt/coda-*.whl)
python3 -m pip install --no-deps --force-reinstall "$whl" > /dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader | head -2
(cd "$OUT" && CODA_REQUIRE_GPU=1 CODA_REQUIRE_GPUS=2 timeout 200 python3 -m pytest -q -p no:cacheprovider -rA \
  -k checkpointing "$repo/tests/python/test_gpu_distributed.py" > pytest_dist_ckpt.log 2>&1)
echo "pytest rc=$?"; grep -E "^(PASSED|FAILED|ERROR)|^E  " "$OUT/pytest_dist_ckpt.log" | head -20; tail -1 "$OUT/pytest_dist_ckpt.log"
t0=$SECONDS
CODA_WHEEL=$whl TRAIN_GPUS=2 OUT=$OUT/ckpt TRAIN_ARGS="--parallel fsdp --precision amp --checkpointing --hidden 2048 \
  --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --batch 4 --steps 60 --variants hf_eager,hf_compile,coda" \
  timeout 300 scripts/device-run.sh train > "$OUT/train_fsdp_amp_ckpt_1b.log" 2>&1
echo "train rc=$? in $((SECONDS - t0)) s"; grep -A5 "^variant" "$OUT/train_fsdp_amp_ckpt_1b.log" | head -6
grep -E "MISS|PASS|Error" "$OUT/train_fsdp_amp_ckpt_1b.log" | head -4
rm -f "$OUT"/ckpt/0-all.tgz "$OUT"/ckpt/install.log "$OUT"/ckpt/train.png
