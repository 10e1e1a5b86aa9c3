#!/usr/bin/env bash
# Session 33, call 3 (asked for an H200). The submitted build (.prebuilt/coda-*.whl, code and
# table of 4f7dbac): the RMSNorm backward's two dgrad calls (QKV: linear_rmsnorm_bwd_add_, and
# gate/up: linear_rmsnorm_bwd) ranked inside the training step (layer-tune) for the 8B and 1B
# layers at M = 16384, where the H200 table keeps Cooperative 128x256 and the H100's QKV rows moved
# to Pingpong; then the op tuner on the same rows (every candidate beside torch.matmul).
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
for size in 8B 1B; do
  left=$((560 - SECONDS + t0)); [ $left -lt 60 ] && break
  timeout $((left < 150 ? left : 150)) python3 -m coda.bench layer-tune --size $size --m 16384 \
    --ops linear_rmsnorm_bwd_add_,linear_rmsnorm_bwd --out "$OUT/r/layer_tune_${size}" > layer_tune_${size}.log 2>&1
  echo "layer-tune $size rc=$? at $((SECONDS - t0)) s"; tail -5 layer_tune_${size}.log
done
left=$((585 - SECONDS + t0))
[ $left -gt 60 ] && timeout $((left - 10)) python3 -m coda.bench tune --models 8B,1B --ops linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv \
  --tokens 16384 --seed 333 --out "$OUT/r/tune_16384" > tune_16384.log 2>&1
echo "tune rc=$? at $((SECONDS - t0)) s"; tail -8 tune_16384.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
