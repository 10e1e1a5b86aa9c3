#!/usr/bin/env bash
# Twenty-fifth session, call 2 (H100, right after call 1 on the warm machine): with the build of
# this tree that call 1 installed, the device suite, then the Python GPU tests and the layer
# parity tests again with the autotuner on (scripts/device-run.sh pytest's two passes).
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"
t0=$SECONDS
if [ -x /tmp/b_new/tests/coda_device_tests ] && (cd / && python3 -c "import coda._C"); then
  echo "warm: call 1's build and install are here"
else
  echo "cold machine: installing the carried wheel (45ab8e0's kernels) with this tree's Python"
  CODA_WHEEL=$(ls .prebuilt/s24w/*.whl) CODA_PYTHON_OVERLAY=1 OUT=$OUT/r scripts/device-run.sh pytest
  exit $?
fi
timeout 200 /tmp/b_new/tests/coda_device_tests --gtest_brief=1 > "$OUT/r/device_tests.log" 2>&1
echo "device tests rc=$? in $((SECONDS - t0)) s"; tail -3 "$OUT/r/device_tests.log"
cd "$OUT/r"
CODA_REQUIRE_GPU=1 timeout 230 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$?"; tail -1 pytest.log; grep -E "^FAILED|^E " pytest.log | head -20
CODA_TUNE=1 CODA_TUNE_CACHE=$(mktemp -d) CODA_REQUIRE_GPU=1 timeout 120 python3 -m pytest -q -p no:cacheprovider \
  "$repo/tests/python/test_gpu_layer_parity.py" > pytest_tuned.log 2>&1
echo "pytest CODA_TUNE=1 layer parity rc=$?"; tail -1 pytest_tuned.log
echo "total $((SECONDS - t0)) s"
