#!/usr/bin/env bash
# Twenty-fourth session, call 3 (H100): coda-train at Llama-3.2-1B widths with fp32 master weights
# under bf16 autocast (--precision amp), 300 steps, all four variants: parity against the fp32
# curve when every bf16 variant keeps fp32 masters.
set -u
repo=$PWD
mkdir -p "$OUT/r"
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/s24/coda-*.whl > "$OUT/r/install.log" 2>&1 || exit 1
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
mkdir -p "$OUT/r/train1b_amp" && cd "$OUT/r/train1b_amp"
PYTHONPATH=/tmp/ov PYTHONUNBUFFERED=1 timeout 580 python3 -m coda.train --precision amp --out "$OUT/r/train1b_amp" --hidden 2048 --layers 16 \
  --heads 32 --kv-heads 8 --ffn 8192 --vocab 32000 --seq 2048 --batch 2 --steps 300 --timing-skip 10 > "$OUT/r/train1b_amp.log" 2>&1
echo "train rc=$?"; grep -E "^(hf_|coda|variant|PASS|MISS|n/a)" "$OUT/r/train1b_amp.log"
