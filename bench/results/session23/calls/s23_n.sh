#!/usr/bin/env bash
# Twenty-third session, call 15 (H100): the 1B-width run of call 14 with seeds 1 and 2, the bf16
# variants only: is CODA's loss above the others' again (a bias) or not (the curves' chaos)?
set -u
repo=$PWD
mkdir -p "$OUT/r"
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new3/coda-*.whl > "$OUT/r/install.log" 2>&1 || exit 1
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
for seed in 1 2; do
  mkdir -p "$OUT/r/seed$seed" && cd "$OUT/r/seed$seed"
  PYTHONPATH=/tmp/ov PYTHONUNBUFFERED=1 timeout 280 python3 -m coda.train --out "$OUT/r/seed$seed" --hidden 2048 --layers 16 \
    --heads 32 --kv-heads 8 --ffn 8192 --vocab 32000 --seq 2048 --batch 2 --steps 300 --timing-skip 10 --seed $seed \
    --variants hf_eager,hf_compile,coda > "$OUT/r/seed$seed.log" 2>&1
  echo "seed $seed rc=$?"; grep -E "^(hf_|coda|PASS|MISS)" "$OUT/r/seed$seed.log"
done
