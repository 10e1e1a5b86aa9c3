#!/usr/bin/env bash
# Session 42, call 5 (H100; carry .prebuilt/s42f). The submitted library's build (28c390c: the CE's
# 2 GiB chunks, the refitted backward rules, the H200 table's dropped rows) through the C++ device
# suite and the Python GPU tests of cross-entropy, within the session's last device minutes.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
tar -xJf "$repo"/.prebuilt/s42f/tests.tar.xz -C "$repo"/.prebuilt/s42f || exit 1
timeout 150 "$repo"/.prebuilt/s42f/coda_device_tests > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s42f/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout $((200 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider -k "cross_entropy or ce_" "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$OUT" && tar -czf r.tgz r && rm -rf r
