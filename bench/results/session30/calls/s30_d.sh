#!/usr/bin/env bash
# Session 30, call 4 (H100). Steps 1-4 of call 3 (s30_c.sh) on the wheel and device tests of
# 1eb3c3b (the CE row pass's per-logit loops hold only the softmax); old = the wheel of f82e091
# (.prebuilt/ab/old: the first-chunk store, the old row pass). 1. C++ device tests of
# cross-entropy, bad input, NaN, capture. 2. Python GPU tests of cross-entropy. 3. The kernels of
# one CE fwd+bwd call. 4. CE fwd+bwd, coda / matmul / its three GEMMs, processes old new new old.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout 120 "$repo/.prebuilt/coda_device_tests" --gtest_filter='*Entropy*:*entropy*:*BadInput*:*Nan*:*NaN*:*Capture*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  FAILED|tests from .* ran|^\[  PASSED" device_tests.log | tail -6
install() { python3 -m pip install -q --no-deps --force-reinstall $1 > /dev/null 2>&1 || exit 1; }
install "$repo/.prebuilt/coda-*.whl"
CODA_REQUIRE_GPU=1 timeout 100 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" -k "entropy" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
timeout 60 python3 "$repo/bench/results/session30/calls/ce_profile.py" > ce_profile.log 2>&1
echo "profile rc=$? at $((SECONDS - t0)) s"; grep "^==" ce_profile.log; grep -A3 "M 16384" ce_profile.log | grep row
i=0
for w in old new new old; do
  i=$((i + 1))
  if [ $w = old ]; then install "$repo/.prebuilt/ab/old/coda-*.whl"; else install "$repo/.prebuilt/coda-*.whl"; fi
  timeout 60 python3 -m coda.bench ops --ops linear_cross_entropy_fwd_bwd --models 1B,8B --tokens 16384,13350 \
    --variants coda,torch_matmul,torch_gemms --seed 32$i --rounds 5 --out "$OUT/r/ce_${i}_$w" > "ce_${i}_$w.log" 2>&1
  echo "ce $i $w rc=$? at $((SECONDS - t0)) s"; grep "^| linear_cross_entropy_fwd_bwd" "ce_${i}_$w.log" | cut -c1-80
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
