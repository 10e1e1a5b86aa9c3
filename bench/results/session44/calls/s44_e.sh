#!/usr/bin/env bash
# Session 44, call 5 (H200, needs_h200; carry .prebuilt/s43m = OLD and .prebuilt/s44r = NEW, main
# with the 16-byte RoPE backward). (1) The layer's kernels under OLD and NEW at 8B and 1B widths
# (the rope_bwd_kernel line); (2) the README's main job on NEW; (3) the op tuner on the
# RMSNorm backward at 8B and Qwen3-8B widths (the H200 row compile wins: Qwen3-8B at 16384), as
# the GPU comes, M = 16384 and 5958.
set -u
repo=$PWD; t0=$SECONDS
OLD=.prebuilt/s43m NEW=.prebuilt/s44r
mkdir -p "$OUT/r/train"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
for pass in o1 n1; do
  dir=$OLD; [ $pass = n1 ] && dir=$NEW
  python3 -m pip install -q --no-deps --force-reinstall "$repo/$dir"/coda-*.whl > /dev/null 2>&1 || exit 1
  for size in 8B 1B; do
    timeout 80 python3 -m coda.bench kernels --size $size --variants coda --iters 5 --m 16384 --top 40 \
      --out "$OUT/r/kernels_${pass}_$size" > kernels_${pass}_$size.log 2>&1
    echo "kernels $pass $size rc=$?: $(grep -E 'rope_bwd|SM clock' kernels_${pass}_$size.log | tr -s ' ' | tr '\n' ';')"
  done
done
(cd train && CODA_COMMIT=$(cat "$repo/$NEW/COMMIT") timeout 300 python3 -m coda.train --out "$OUT/r/train" > train.log 2>&1)
echo "train rc=$? at $((SECONDS - t0)) s"; tail -9 train/train.log
export CODA_COMMIT=$(cat "$repo/$NEW/COMMIT")
timeout $((585 - SECONDS + t0)) python3 -m coda.bench tune --ops linear_rmsnorm_bwd --models Qwen3-8B,8B \
  --tokens 16384,5958 --rounds 5 --seed 3407 --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$? at $((SECONDS - t0)) s"; tail -12 tune.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
