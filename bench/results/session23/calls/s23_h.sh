#!/usr/bin/env bash
# Twenty-third session, call 8 (the H200 of call 7, warm; .prebuilt/new3): the device suite on the
# H200 (first since the seventeenth session), then the 8B layer's kernels (coda, floor).
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name --format=csv > gpu.txt 2>&1; cat gpu.txt
timeout 150 "$repo/.prebuilt/new3/coda_device_tests" --gtest_brief=1 > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - start)) s"; tail -2 device_tests.log; grep -E "FAILED" device_tests.log | head
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new3/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
PYTHONPATH=/tmp/whl PYTHONUNBUFFERED=1 timeout 90 python3 -m coda.bench kernels --size 8B --variants coda,floor --out "$OUT/r/kernels8B" > kernels8B.log 2>&1
echo "kernels rc=$? at $((SECONDS - start)) s"; grep -vE "Warning|warn" kernels8B.log | head -50
tar czf "$OUT/0-all.tgz" . 2>/dev/null
