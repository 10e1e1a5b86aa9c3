#!/usr/bin/env bash
# Session 32, call 1 (H100). The build with the RMSNorm backward compiled stream-K (.prebuilt/COMMIT):
# the whole C++ device suite (every op's forced configs, the stream-K one among them; the launchers'
# new scratch check on every program), the Python GPU tests, then the op tuner on the two RMSNorm
# backward rows (MLP down: long K; QKV) of 1B / 8B / Qwen3-8B at M = 10837 (the benchmark of
# record's random M), 11585, 5793 and 16384: every candidate, the stream-K ones among them,
# against torch.matmul in the same rounds.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout 180 "$repo/.prebuilt/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  FAILED|tests from .* ran|^\[  PASSED" device_tests.log | tail -8
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 150 python3 -m pytest -q -p no:cacheprovider -x "$repo/tests/python" -k "rmsnorm or bwd or backward or block or autotune" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
for tokens in 10837 11585 5793 16384; do
  for model in 1B 8B Qwen3-8B; do
    left=$((580 - SECONDS + t0)); [ $left -lt 30 ] && break 2
    timeout $left python3 -m coda.bench tune --models $model --ops linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv --tokens $tokens --seed 321 --out "$OUT/r/tune_${tokens}_$model" > tune_${tokens}_$model.log 2>&1
    echo "tune $tokens $model rc=$? at $((SECONDS - t0)) s"
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
