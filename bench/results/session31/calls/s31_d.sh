#!/usr/bin/env bash
# Session 31, call 4 (asked as nvidia-h200; adapts). Wheel of efbb226. The op tuner, every op of
# 1B / 8B / Qwen3-8B, at M the rule and table work of this session was not designed on: 1024, 2200,
# 3500 and 9500 (out-of-sample candidates for pricing a kernel choice offline with
# scripts/op_choice_replay.py: the candidates' times do not depend on the choice). On an H200
# first the op tuner at M = 16384 (1B, 8B) on every op (no H200 row has seen this build).
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
if grep -q H200 gpu.txt; then
  for model in 8B 1B; do
    timeout 200 python3 -m coda.bench tune --models $model --tokens 16384 --seed 314 --out "$OUT/r/tune_h200_16384_$model" > tune_h200_16384_$model.log 2>&1
    echo "tune h200 $model rc=$? at $((SECONDS - t0)) s"; grep -E "within|rows written" tune_h200_16384_$model.log
  done
fi
for m in 1024 2200 3500 9500; do
  for model in 1B 8B Qwen3-8B; do
    left=$((585 - SECONDS + t0)); [ $left -lt 30 ] && break 2
    timeout $left python3 -m coda.bench tune --models $model --tokens $m --seed 314 --out "$OUT/r/tune_${m}_$model" > tune_${m}_$model.log 2>&1
    echo "tune $model $m rc=$? at $((SECONDS - t0)) s"; grep -E "within|rows written" tune_${m}_$model.log
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
