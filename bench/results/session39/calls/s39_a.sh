#!/usr/bin/env bash
# Session 39, call 1 (H100). (1) The Python GPU suite and the C++ device suite on HEAD's build
# (.prebuilt/s38m: e0afc28's code = ddcea5b's, the 38th session's submitted library, never GPU-run).
# (2) Branch exp-pp192x128 at 157268f (.prebuilt/exp192c/coda-bench): tune-ops --epilogue-cost on
# the two QK-norm programs, 8B and 1B at M = 16384, 5 rounds: every candidate (Pingpong 128 x 128,
# 192 x 128 with 2 x 1 and 1 x 2 clusters, Cooperative, ovcoop) against cuBLAS and its plain twin.
set -u
repo=$PWD; t0=$SECONDS
tar -xJf .prebuilt/c39/bins.tar.xz -C .prebuilt || exit 1   # s38m/coda_device_tests, exp192c/coda-bench
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/c39/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 220 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
for size in 8B 1B; do
  timeout 90 "$repo"/.prebuilt/exp192c/coda-bench tune-ops --models $size \
    --ops linear_qknorm_rope,linear_rmsnorm_qknorm_rope --rounds 5 --epilogue-cost > tune_ops_$size.log 2>&1
  echo "tune-ops $size rc=$? at $((SECONDS - t0)) s"
done
left=$((585 - SECONDS + t0))
timeout $left "$repo"/.prebuilt/s38m/coda_device_tests > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "PASSED|FAILED|tests ran" device_tests.log | tail -5
cd "$OUT" && tar -czf r.tgz r && rm -rf r
