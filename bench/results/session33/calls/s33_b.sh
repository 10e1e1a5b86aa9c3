#!/usr/bin/env bash
# Session 33, call 2 (H100). fill_last_wave_of: a Cooperative 128x256 choice made for another
# shape whose tiles fill < 90 % of their waves runs Pingpong 128x128 along N s2. Every-variant A/B
# in the op benchmark, processes old new new old, on rows whose kernel it changes: the RMSNorm
# backward (gate/up and QKV dgrads) of 1B at M = 7000 and 10837, of 8B at 3500 and 6163, and the
# 8B O projection (linear_residual_rms) at 3500 and 6163; then layer-tune on the new build (1B
# gate/up dgrad at M = 10840: is the rule's kernel the best inside the step?).
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
  i=$((i + 1)); left=$((560 - SECONDS + t0)); [ $left -lt 40 ] && break
  install $w
  timeout $((left < 70 ? left : 70)) python3 -m coda.bench ops --ops linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv --models 1B \
    --tokens 7000,10837 --seed 331$i --rounds 5 --out "$OUT/r/ab_${i}_${w}_1B" > "ab_${i}_${w}_1B.log" 2>&1
  echo "ab $i $w 1B rc=$? at $((SECONDS - t0)) s"
  left=$((560 - SECONDS + t0)); [ $left -lt 40 ] && break
  timeout $((left < 70 ? left : 70)) python3 -m coda.bench ops --ops linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv,linear_residual_rms --models 8B \
    --tokens 3500,6163 --seed 332$i --rounds 5 --out "$OUT/r/ab_${i}_${w}_8B" > "ab_${i}_${w}_8B.log" 2>&1
  echo "ab $i $w 8B rc=$? at $((SECONDS - t0)) s"
done
install new
left=$((585 - SECONDS + t0))
[ $left -gt 40 ] && timeout $((left - 10)) python3 -m coda.bench layer-tune --size 1B --m 10840 --ops linear_rmsnorm_bwd \
  --out "$OUT/r/layer_tune_1B_10840" > layer_tune_1B_10840.log 2>&1
echo "layer-tune rc=$? at $((SECONDS - t0)) s"; tail -4 layer_tune_1B_10840.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
