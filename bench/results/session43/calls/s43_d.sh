#!/usr/bin/env bash
# Session 43, call 5 (H100; carry .prebuilt/s43m): the main job at Llama-3.2-1B widths with the
# real vocabulary (hidden 2048, 16 layers, 32 / 8 heads, FFN 8192, vocab 128256, 4 x 2048 tokens a
# step, 120 steps, the first 10 untimed, as then; hf_fp32 left out: it ran out of the H100's 80 GB in the 23rd session), the
# question a 1B user asks, on d083239. The last run of it was the 23rd session's (1f25262:
# 62,376 tokens/s, 1.151 x compile, 1.401 x eager).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r/train_1b"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s43m/coda-*.whl > /dev/null 2>&1 || exit 1
(cd train_1b && CODA_COMMIT=d083239 timeout $((585 - SECONDS + t0)) python3 -m coda.train --hidden 2048 --layers 16 \
  --heads 32 --kv-heads 8 --ffn 8192 --vocab 128256 --seq 2048 --batch 4 --steps 120 --timing-skip 10 \
  --variants hf_eager,hf_compile,coda --out "$OUT/r/train_1b" > train.log 2>&1)
echo "train rc=$? at $((SECONDS - t0)) s"; tail -8 train_1b/train.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
