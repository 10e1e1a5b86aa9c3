#!/usr/bin/env bash
# Session 34, call 4 (H100). overlap-coop at this tree's commit: (1) its Python wheel built here on
# 16 cores (scripts/build-wheel.sh; CUTLASS from the carried .prebuilt/cutlass.tar.xz), returned in
# $OUT for the next calls; (2) the C++ device suite on the binaries built on the CPU machine
# (.prebuilt/ovpack: the tests and tables of 9833cc4, the same kernels).
set -u
mkdir -p "$OUT/r" third_party
tar -xJf .prebuilt/cutlass.tar.xz -C third_party || exit 1
tar -xJf .prebuilt/ovpack/ovbin.tar.xz -C .prebuilt || exit 1
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/ovbin/COMMIT | tee "$OUT/r/commit.txt"
t0=$SECONDS
CODA_WHEEL_BUILD_DIR=/tmp/ovw CMAKE_BUILD_PARALLEL_LEVEL=16 scripts/build-wheel.sh python3 > "$OUT/r/wheel_build.log" 2>&1
echo "wheel rc=$? at $((SECONDS - t0)) s"; tail -3 "$OUT/r/wheel_build.log"
cp .prebuilt/coda-*.whl "$OUT/" 2>/dev/null
(cd "$OUT/r" && timeout 200 "$OLDPWD/.prebuilt/ovbin/coda_device_tests" --gtest_brief=1 > device_tests.log 2>&1)
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED)|tests ran" "$OUT/r/device_tests.log" | head -20
cd "$OUT" && tar -czf r.tgz r && rm -rf r
