#!/usr/bin/env bash
# Session 33, call 4 (asked for an H200, as call 3). The H200 rows of the QKV dgrad's RMSNorm
# backward that layer-tune picked in call 3 (8B Pingpong 128x128 along N s4, 1B along N s2, at
# M = 16384) against the submitted table: (1) every-variant A/B in the op benchmark, processes
# old new new old, QKV rows (changed at 16384, and at 10837 where the nearest row now is one of
# them) and the gate/up rows (control) of 1B and 8B; (2) layer-tune on the new build, the QKV call
# at 16384: is today's choice now the best inside the training step?
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
install() { python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab/$1/"coda-*.whl > /dev/null 2>&1 || exit 1; }
i=0
for w in old new new old; do
  i=$((i + 1)); left=$((500 - SECONDS + t0)); [ $left -lt 30 ] && break
  install $w
  timeout $((left < 110 ? left : 110)) python3 -m coda.bench ops --ops linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd --models 1B,8B \
    --tokens 10837,16384 --seed 334$i --rounds 5 --out "$OUT/r/ab_${i}_$w" > "ab_${i}_$w.log" 2>&1
  echo "ab $i $w rc=$? at $((SECONDS - t0)) s"
done
install new
for size in 8B 1B; do
  left=$((585 - SECONDS + t0)); [ $left -lt 30 ] && break
  timeout $((left < 60 ? left : 60)) python3 -m coda.bench layer-tune --size $size --m 16384 --ops linear_rmsnorm_bwd_add_ \
    --out "$OUT/r/layer_tune_$size" > layer_tune_$size.log 2>&1
  echo "layer-tune $size rc=$? at $((SECONDS - t0)) s"; tail -3 layer_tune_$size.log | head -1
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
