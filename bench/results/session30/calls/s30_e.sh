#!/usr/bin/env bash
# Session 30, call 5 (H100). The wheel and device tests of the submitted state's device code and
# table (see .prebuilt/COMMIT): the C++ device suite, the Python GPU tests, then the main job
# (python3 -m coda.train at the README defaults). One tarball back.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout 150 "$repo/.prebuilt/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  FAILED|tests from .* ran|^\[  PASSED" device_tests.log | tail -6
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 190 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
mkdir -p train && (cd train && timeout 230 python3 -m coda.train --out "$OUT/r/train" > "$OUT/r/train.log" 2>&1; echo "train rc=$? at $((SECONDS - t0)) s")
grep -A6 "^variant" train.log; grep -E "PASS|MISS|Error" train.log | head -5
cd "$OUT" && tar -czf r.tgz r && rm -rf r
