#!/usr/bin/env bash
# Twenty-fourth session, call 7 (H100; .prebuilt/s24w + the working tree's Python): the GPU model
# tests incl. activation checkpointing; coda-train with --checkpointing at Llama-3.2-1B widths,
# bf16 and amp (speed and memory; 4 x 2048 tokens a step).
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > gpu.txt 2>&1; cat gpu.txt
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/s24w/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
export PYTHONPATH=/tmp/ov
CODA_REQUIRE_GPU=1 timeout 200 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python/test_gpu_model.py" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - start)) s"; tail -1 pytest.log; grep -E "^FAILED|^E " pytest.log | head -20
tar czf "$OUT/0-all.tgz" . 2>/dev/null
for prec in bf16 amp; do
  mkdir -p "$OUT/r/ckpt_$prec" && cd "$OUT/r/ckpt_$prec"
  PYTHONUNBUFFERED=1 timeout 170 python3 -m coda.train --checkpointing --precision $prec --out "$OUT/r/ckpt_$prec" --hidden 2048 --layers 16 \
    --heads 32 --kv-heads 8 --ffn 8192 --vocab 32000 --seq 2048 --batch 4 --steps 60 --timing-skip 10 \
    --variants hf_eager,hf_compile,coda > "$OUT/r/ckpt_$prec.log" 2>&1
  echo "train $prec rc=$? at $((SECONDS - start)) s"; grep -E "^(hf_|coda|variant|PASS|MISS|model)" "$OUT/r/ckpt_$prec.log"
  cd "$OUT/r"; tar czf "$OUT/0-all.tgz" . 2>/dev/null
done
