#!/usr/bin/env bash
# Session 35, call 3 (H100). main at this tree's commit (ovcoop's mainloop at K-block 32, the
# cross-entropy's at 64): the wheel and the C++ binaries built here in one build
# (CODA_BINARIES=1 scripts/build-wheel.sh, 16 cores; CUTLASS and GoogleTest from the carried
# tarballs), then the C++ device suite. The wheel and binaries stay in /tmp/w and .prebuilt
# on this machine for the next call.
set -u
repo=$PWD
mkdir -p "$OUT/r" third_party
t0=$SECONDS
tar -xJf .prebuilt/cutlass.tar.xz -C third_party || exit 1
tar -xJf .prebuilt/googletest.tar.xz -C third_party || exit 1
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
CODA_BINARIES=1 CODA_WHEEL_BUILD_DIR=/tmp/w CMAKE_BUILD_PARALLEL_LEVEL=16 scripts/build-wheel.sh python3 > "$OUT/r/wheel_build.log" 2>&1
echo "wheel+binaries rc=$? at $((SECONDS - t0)) s"; tail -3 "$OUT/r/wheel_build.log"
mkdir -p /tmp/keep && cp .prebuilt/coda-*.whl .prebuilt/coda_device_tests .prebuilt/coda-bench .prebuilt/COMMIT /tmp/keep/
cat /tmp/keep/COMMIT | tee "$OUT/r/commit.txt"
cp /tmp/keep/coda-*.whl "$OUT/"
cd "$OUT/r"
timeout $((580 - SECONDS + t0)) /tmp/keep/coda_device_tests --gtest_brief=1 > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED)|FAILED" device_tests.log | head -20
cd "$OUT" && tar -czf r.tgz r && rm -rf r
