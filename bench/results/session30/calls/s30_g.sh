#!/usr/bin/env bash
# Session 30, call 7 (H100). Wheel + device tests of 14c6788 (the CE fwd+bwd's automatic chunks of
# equal rows) against .prebuilt/ab/old = the wheel of aabedb0. 1. C++ device tests of
# cross-entropy, bad input, NaN, capture. 2. Python GPU tests of cross-entropy. 3. CE fwd+bwd,
# coda / matmul / its three GEMMs, processes old new new old, 1B and 8B at M = 16384 (one chunk
# size either way), 13350 and 27317.
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
i=0
for w in old new new old; do
  i=$((i + 1))
  if [ $w = old ]; then install "$repo/.prebuilt/ab/old/coda-*.whl"; else install "$repo/.prebuilt/coda-*.whl"; fi
  timeout 90 python3 -m coda.bench ops --ops linear_cross_entropy_fwd_bwd --models 1B,8B --tokens 16384,13350,27317 \
    --variants coda,torch_matmul,torch_gemms --seed 33$i --rounds 5 --out "$OUT/r/ce_${i}_$w" > "ce_${i}_$w.log" 2>&1
  echo "ce $i $w rc=$? at $((SECONDS - t0)) s"; grep "^| linear_cross_entropy_fwd_bwd" "ce_${i}_$w.log" | sort -u | cut -c1-80
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
