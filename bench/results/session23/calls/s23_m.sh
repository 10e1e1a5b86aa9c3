#!/usr/bin/env bash
# Twenty-third session, call 14 (H100; .prebuilt/new3 + the working tree's Python, whose parity
# line also prints torch.compile's own gap): coda-train at Llama-3.2-1B widths (16 layers, vocab
# 32000, 2 x 2048 tokens a step) for 300 steps, so the curves leave the uniform loss.
set -u
repo=$PWD
mkdir -p "$OUT/r"
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new3/coda-*.whl > "$OUT/r/install.log" 2>&1 || exit 1
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
mkdir -p "$OUT/r/train1b" && cd "$OUT/r/train1b"
PYTHONPATH=/tmp/ov PYTHONUNBUFFERED=1 timeout 570 python3 -m coda.train --out "$OUT/r/train1b" --hidden 2048 --layers 16 \
  --heads 32 --kv-heads 8 --ffn 8192 --vocab 32000 --seq 2048 --batch 2 --steps 300 --timing-skip 10 > "$OUT/r/train1b.log" 2>&1
echo "train rc=$?"; grep -E "^(hf_|coda|variant|PASS|MISS|n/a)" "$OUT/r/train1b.log"
