#!/usr/bin/env bash
# Twenty-third session, call 3 (.prebuilt/new3 = e2f05ce's tables + the split QKV gradient, 35d…):
# the device suite; the Python package's GPU tests; the 8B layer's kernels.
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > gpu.txt 2>&1; cat gpu.txt; cat "$repo/.prebuilt/new3/COMMIT"
timeout 150 "$repo/.prebuilt/new3/coda_device_tests" --gtest_brief=1 > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - start)) s"; tail -2 device_tests.log; grep -E "FAILED" device_tests.log | head
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new3/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
export PYTHONPATH=/tmp/whl
CODA_REQUIRE_GPU=1 timeout 240 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - start)) s"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
tar czf "$OUT/0-all.tgz" . 2>/dev/null
PYTHONUNBUFFERED=1 timeout 60 python3 -m coda.bench kernels --size 8B --variants coda --out "$OUT/r/kernels8B" > kernels8B.log 2>&1
echo "kernels rc=$? at $((SECONDS - start)) s"; grep -E "ms of kernels|Cat|add|Memcpy|rope|wall|N192|N256|N128" kernels8B.log
tar czf "$OUT/0-all.tgz" . 2>/dev/null
