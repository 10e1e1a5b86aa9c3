#!/usr/bin/env bash
# Session 32, call 4 (H100). The QKV dgrad's RMSNorm-backward rows of 4039b0b (layer-tune's
# picks: 8B Pingpong 128x192 along N s2, 1B Pingpong 128x128 along N s4, at 16384; the tuner's 1B
# row at 10837) against the table of 555159d: (1) every-variant A/B in the op benchmark,
# processes old new new old, QKV rows (changed) and MLP rows (control) of 1B and 8B at M = 10837 and
# 16384; (2) layer-tune on the new build, the QKV call of the 8B and 1B layers at M = 16384 and
# 10837: is today's choice now the best inside the training step?
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
  i=$((i + 1)); left=$((585 - SECONDS + t0)); [ $left -lt 30 ] && break
  install $w
  timeout $((left < 120 ? left : 120)) python3 -m coda.bench ops --ops linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd --models 1B,8B \
    --tokens 10837,16384 --seed 324$i --rounds 5 --out "$OUT/r/ab_${i}_$w" > "ab_${i}_$w.log" 2>&1
  echo "ab $i $w rc=$? at $((SECONDS - t0)) s"
done
install new
for m in 16384 10837; do
  for size in 8B 1B; do
    left=$((585 - SECONDS + t0)); [ $left -lt 30 ] && break 2
    timeout $((left < 90 ? left : 90)) python3 -m coda.bench layer-tune --size $size --m $m --ops linear_rmsnorm_bwd_add_ \
      --out "$OUT/r/layer_tune_${size}_$m" > layer_tune_${size}_$m.log 2>&1
    echo "layer-tune $size $m rc=$? at $((SECONDS - t0)) s"; tail -3 layer_tune_${size}_$m.log | head -1
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
