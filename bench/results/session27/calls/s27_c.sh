#!/usr/bin/env bash
# Twenty-seventh session, call 3 (2 GPUs): the norm-weight gather A/B in one process
# (s27_ab_gather.py) at the README widths and at Llama-3.2-1B widths, on the carried wheel.
set -u
mkdir -p "$OUT"
python3 -m pip install --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader | head -2
for widths in "" "--hidden 2048 --layers 16 --heads 32 --kv-heads 8 --ffn 8192 --batch 4"; do
  (cd / && timeout 240 python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
    "$OLDPWD/.prebuilt/s27_ab_gather.py" $widths) 2>&1 | grep -v Warning | tail -3
done | tee "$OUT/ab_gather.log"
