#!/usr/bin/env bash
# Session 31, call 5 (H100). .prebuilt/ab/old = wheel of efbb226 (last session's submitted state);
# .prebuilt/ab/new = wheel of 024e048 (the few-token rule + 66 table rows at M = 5793-65536) and
# .prebuilt/coda_device_tests of 024e048.
# 1. The whole C++ device suite and the whole Python GPU suite on 024e048 (the choice moved at
#    small M, so the device tests' small shapes run other kernels now).
# 2. A/B of the choice where it moved at the benchmark's M (16384, and 27317 = last session's random
#    M): the ops whose choice differs (coda-bench choose), processes old new new old, coda and
#    torch.matmul in the same rounds, outputs checked.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout 170 "$repo/.prebuilt/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  FAILED|tests from .* ran|^\[  PASSED" device_tests.log | tail -6
install() { python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab/$1/"coda-*.whl > /dev/null 2>&1 || exit 1; }
install new
CODA_REQUIRE_GPU=1 timeout 200 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
OPS=linear_rmsnorm_bwd_qkv,linear_qknorm_rope_save_pre,linear_bias_gelu_save_pre,linear_qknorm_rope,linear_rmsnorm,linear_rope,linear_rmsnorm_swiglu
i=0
for w in old new new old; do
  i=$((i + 1)); left=$((585 - SECONDS + t0)); [ $left -lt 30 ] && break
  install $w
  timeout $((left < 110 ? left : 110)) python3 -m coda.bench ops --ops $OPS --models 1B,8B,Qwen3-8B --tokens 16384,27317 \
    --variants coda,torch_matmul --seed 315$i --rounds 5 --out "$OUT/r/ab_${i}_$w" > "ab_${i}_$w.log" 2>&1
  echo "ab $i $w rc=$? at $((SECONDS - t0)) s"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
