#!/usr/bin/env bash
# Session 31, call 3 (H100, wheel of efbb226): the op tuner at M = 46341 (Qwen3-8B), 1448 and 65536,
# one (model, M) per process (46341 finishes call 2); rows it writes are candidates for the H100 table.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
for m in 46341 1448 65536; do
  for model in 1B 8B Qwen3-8B; do
    [ $m = 46341 ] && [ $model != Qwen3-8B ] && continue
    left=$((585 - SECONDS + t0)); [ $left -lt 40 ] && break 2
    timeout $left python3 -m coda.bench tune --models $model --tokens $m --seed 313 --out "$OUT/r/tune_${m}_$model" > tune_${m}_$model.log 2>&1
    echo "tune $model $m rc=$? at $((SECONDS - t0)) s"; grep -E "within|rows written" tune_${m}_$model.log
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
