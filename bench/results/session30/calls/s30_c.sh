#!/usr/bin/env bash
# Session 30, call 3 (H100). Carries .prebuilt/coda-*.whl + coda_device_tests of 808513b (the row
# pass one block per SM; an op's lowered along-M choice walks along N; the SwiGLU backward's fit
# bound 5 %) and .prebuilt/ab/old = the wheel of f82e091 (the CE first-chunk store, the old row pass
# and fit). 1. C++ device tests of cross-entropy, bad input, NaN, capture (new build). 2. Python GPU
# tests of cross-entropy (new). 3. The kernels of one CE fwd+bwd call (new; call 2 has the old).
# 4. CE fwd+bwd, coda / matmul / its three GEMMs, processes old new new old. 5. The op tuner on
# every op at two M the fit was not designed on (10700, 20000), 8B / 1B / Qwen3-8B: today = the
# new fit, the old fit's choice among the candidates (no rows merged).
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
    --variants coda,torch_matmul,torch_gemms --seed 31$i --rounds 5 --out "$OUT/r/ce_${i}_$w" > "ce_${i}_$w.log" 2>&1
  echo "ce $i $w rc=$? at $((SECONDS - t0)) s"; grep "^| linear_cross_entropy_fwd_bwd" "ce_${i}_$w.log" | cut -c1-80
done
install "$repo/.prebuilt/coda-*.whl"
timeout $((570 - SECONDS + t0)) python3 -m coda.bench tune --models 8B,1B,Qwen3-8B --tokens 10700,20000 \
  --seed 308 --out "$OUT/r/tune_oos" > tune_oos.log 2>&1
echo "tune oos rc=$? at $((SECONDS - t0)) s"; grep -E "within" tune_oos.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
