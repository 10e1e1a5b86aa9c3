#!/usr/bin/env bash
# Session 43, call 2 (H100; carry .prebuilt/s43m). The submitted library (d083239: the 42nd
# session's backward rules and CE chunks, whose full Python GPU suite and coda-train never ran)
# through (1) the C++ device suite, (2) the Python GPU suite, (3) the README's main job,
# `python -m coda.train` with its defaults.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r/train"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
tar -xJf "$repo"/.prebuilt/s43m/tests.tar.xz -C "$repo"/.prebuilt/s43m || exit 1
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s43m/coda-*.whl > /dev/null 2>&1 || exit 1
timeout 170 "$repo"/.prebuilt/s43m/coda_device_tests > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
CODA_REQUIRE_GPU=1 timeout 170 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
(cd train && CODA_COMMIT=d083239 timeout $((590 - SECONDS + t0)) python3 -m coda.train --out "$OUT/r/train" > train.log 2>&1)
echo "train rc=$? at $((SECONDS - t0)) s"; tail -9 train/train.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
