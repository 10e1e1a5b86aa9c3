#!/usr/bin/env bash
# Session 42, call 1 (H100; carry .prebuilt/s42m). HEAD's build (995de3b, the 41st session's
# submitted library: its LM-head glue and refitted rules never GPU-run) through (1) the C++ device
# suite, (2) the Python GPU suite, (3) the README's main job, `python -m coda.train` with its defaults.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r/train"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
tar -xJf "$repo"/.prebuilt/s42m/tests.tar.xz -C "$repo"/.prebuilt/s42m || exit 1
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s42m/coda-*.whl > /dev/null 2>&1 || exit 1
timeout 170 "$repo"/.prebuilt/s42m/coda_device_tests > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
CODA_REQUIRE_GPU=1 timeout 170 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
(cd train && CODA_COMMIT=995de3b timeout $((590 - SECONDS + t0)) python3 -m coda.train --out "$OUT/r/train" > train.log 2>&1)
echo "train rc=$? at $((SECONDS - t0)) s"; tail -9 train/train.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
