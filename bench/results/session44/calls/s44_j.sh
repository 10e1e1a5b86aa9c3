#!/usr/bin/env bash
# Session 44, call 10 (H100; carry .prebuilt/s44f = b3d0b5f, main with the 16-byte RoPE backward,
# the one-head QK-norm path and the ovcoop QK-norm row). The whole C++ device suite and Python GPU
# suite on it.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
W=$repo/.prebuilt/s44f
python3 -m pip install -q --no-deps --force-reinstall "$W"/coda-*.whl > /dev/null 2>&1 || exit 1
tar -xJf "$W/tests.tar.xz" -C "$W" || exit 1
timeout 200 "$W/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
CODA_REQUIRE_GPU=1 timeout $((585 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
rm -rf .benchmarks; cd "$OUT" && tar -czf r.tgz r && rm -rf r
