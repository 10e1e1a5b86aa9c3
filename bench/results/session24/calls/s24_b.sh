#!/usr/bin/env bash
# Twenty-fourth session, call 2 (H100; .prebuilt/s24 + the working tree's Python): coda-train with
# fp32 master weights under bf16 autocast (--precision amp), README defaults; the contract margin
# against HF bf16 and HF AMP over 12 seeds per model and precision.
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > gpu.txt 2>&1
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/s24/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
export PYTHONPATH=/tmp/ov
timeout 200 python3 "$repo"/.prebuilt/s24_margin.py "$repo/tests/python" 12 > margin12.log 2>&1
echo "margin rc=$? at $((SECONDS - start)) s"; grep -v Warn margin12.log | tail -4
tar czf "$OUT/0-all.tgz" . 2>/dev/null
mkdir -p "$OUT/r/train_amp" && cd "$OUT/r/train_amp"
PYTHONUNBUFFERED=1 timeout $((580 - (SECONDS - start))) python3 -m coda.train --precision amp --out "$OUT/r/train_amp" > "$OUT/r/train_amp.log" 2>&1
echo "train rc=$? at $((SECONDS - start)) s"; grep -E "^(hf_|coda|variant|PASS|MISS|n/a|model)" "$OUT/r/train_amp.log"
cd "$OUT/r"; tar czf "$OUT/0-all.tgz" . 2>/dev/null
