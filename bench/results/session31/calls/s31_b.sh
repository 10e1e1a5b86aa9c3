#!/usr/bin/env bash
# Session 31, call 2 (H100, wheel of efbb226). The op tuner on every op at the log-midpoints of the
# table's M buckets: 5793 (4096..8192), 23170 (16384..32768), 46341 (32768..65536), and 2896
# (2048..4096), one (model, M) per process; rows it writes are candidates for the H100 table.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
for m in 5793 23170 2896 46341; do
  for model in 1B 8B Qwen3-8B; do
    left=$((585 - SECONDS + t0)); [ $left -lt 40 ] && break 2
    timeout $left python3 -m coda.bench tune --models $model --tokens $m --seed 312 --out "$OUT/r/tune_${m}_$model" > tune_${m}_$model.log 2>&1
    echo "tune $model $m rc=$? at $((SECONDS - t0)) s"; grep -E "within|rows written" tune_${m}_$model.log
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
