#!/usr/bin/env bash
# Session 33, call 1 (H100). The submitted build (.prebuilt/coda-*.whl, code of 4f7dbac, table of
# 4039b0b): (1) the whole Python GPU suite, which last session ran only on the reverted stream-K
# build; (2) layer-tune on the gate/up dgrad's RMSNorm backward (linear_rmsnorm_bwd, long K) of the
# 1B and 8B layers at M = 10840 (batch 4 x 2710, next to the benchmark of record's random
# M = 10837, where this op loses to torch.compile) and at 16384: every candidate, Pingpong 128x192
# among them, timed inside the training step.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 300 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
for m in 10840 16384; do
  for size in 1B 8B; do
    left=$((585 - SECONDS + t0)); [ $left -lt 30 ] && break 2
    timeout $((left < 100 ? left : 100)) python3 -m coda.bench layer-tune --size $size --m $m --ops linear_rmsnorm_bwd \
      --out "$OUT/r/layer_tune_${size}_$m" > layer_tune_${size}_$m.log 2>&1
    echo "layer-tune $size $m rc=$? at $((SECONDS - t0)) s"; tail -4 layer_tune_${size}_$m.log
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
