#!/usr/bin/env bash
# Twenty-seventh session, call 5 (4 GPUs): coda-train through torchrun on four GPUs — DDP at the
# README defaults with every variant (the parity check: 2 sequences a rank), then FSDP2 with fp32
# master shards at Llama-3.2-1B widths (8 sequences a step, 2 a rank; speed and memory) — on the
# carried wheel (HEAD's Python and kernels).
set -u
mkdir -p "$OUT"
whl=$(ls .prebuilt/coda-*.whl)
nvidia-smi --query-gpu=name --format=csv,noheader
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
t0=$SECONDS
CODA_WHEEL=$whl TRAIN_GPUS=4 OUT=$OUT/ddp TRAIN_ARGS="--parallel ddp" \
  timeout 240 scripts/device-run.sh train > "$OUT/train_ddp_4gpu.log" 2>&1
echo "ddp rc=$? in $((SECONDS - t0)) s"; grep -A7 "^variant" "$OUT/train_ddp_4gpu.log" | head -8
grep -E "MISS|PASS|Error" "$OUT/train_ddp_4gpu.log" | head -4
t0=$SECONDS
CODA_WHEEL=$whl TRAIN_GPUS=4 OUT=$OUT/fsdp TRAIN_ARGS="--parallel fsdp --precision amp --hidden 2048 --layers 16 \
  --heads 32 --kv-heads 8 --ffn 8192 --batch 8 --steps 60 --variants hf_eager,hf_compile,coda" \
  timeout 240 scripts/device-run.sh train > "$OUT/train_fsdp_amp_1b_4gpu.log" 2>&1
echo "fsdp rc=$? in $((SECONDS - t0)) s"; grep -A5 "^variant" "$OUT/train_fsdp_amp_1b_4gpu.log" | head -6
grep -E "MISS|PASS|Error" "$OUT/train_fsdp_amp_1b_4gpu.log" | head -4
rm -f "$OUT"/*/0-all.tgz "$OUT"/*/install.log "$OUT"/fsdp/train.png
