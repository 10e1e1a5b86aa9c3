#!/usr/bin/env bash
# Session 30, call 1 (H100). Carries .prebuilt/ab/{old,new}: old = the wheel of 933717e (last
# session's submitted state), new = the same with the cross-entropy fwd+bwd's first chunk storing
# dW (no memset, no reduce-add read of zeros) + that build's coda_device_tests.
# 1. The C++ device tests of the cross-entropy ops, bad input, NaN and capture (new build).
# 2. The Python GPU tests of cross-entropy (new wheel).
# 3. The benchmark of record for linear_cross_entropy_fwd_bwd, every variant, processes
#    old new new old, 1B / 8B / Qwen3-8B at M = 16384 and 13350.
# 4. The op tuner on the SwiGLU backward (1B, 8B, Qwen3-8B) at M = 12000, 13350, 14000: every
#    candidate x matmul in the same rounds (the swizzle fit's cliff; nothing merged from it here).
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout 120 "$repo/.prebuilt/ab/new/coda_device_tests" --gtest_filter='*Entropy*:*entropy*:*BadInput*:*Nan*:*NaN*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests from .* ran" device_tests.log | tail -8
install() { python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab/$1/"coda-*.whl > /dev/null 2>&1 || exit 1; }
install new
CODA_REQUIRE_GPU=1 timeout 150 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" -k "entropy or bad_input" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
i=0
for w in old new new old; do
  i=$((i + 1)); install $w
  timeout 100 python3 -m coda.bench ops --ops linear_cross_entropy_fwd_bwd --models 1B,8B,Qwen3-8B --tokens 16384,13350 \
    --seed 30$i --rounds 5 --out "$OUT/r/ce_${i}_$w" > "ce_${i}_$w.log" 2>&1
  echo "ce $i $w rc=$? at $((SECONDS - t0)) s"
done
timeout $((580 - SECONDS + t0)) python3 -m coda.bench tune --models 1B,8B,Qwen3-8B --ops linear_swiglu_bwd --tokens 12000,13350,14000 \
  --seed 305 --out "$OUT/r/tune_swiglu_bwd" > tune_swiglu_bwd.log 2>&1
echo "tune swiglu_bwd rc=$? at $((SECONDS - t0)) s"; grep -E "within" tune_swiglu_bwd.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
