#!/usr/bin/env bash
# Session 40, call 1 (H100). The CE forward+backward's dX GEMM on the plain GEMM's choice (stream-K
# where it picks it; .prebuilt/s40a = 46757ce) against 1cf0d79 (.prebuilt/s39a, data-parallel dX):
# (1) scripts/wheel-ab.sh, as the GPU comes, Qwen3-8B and 8B widths at M = 16384; (2) the C++
# device suite on the new build; (3) the Python GPU tests of cross-entropy.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
tar -xJf .prebuilt/s40a/tests.tar.xz -C .prebuilt/s40a || exit 1
export PYTHONUNBUFFERED=1
AB_STATES=boost AB_BUDGET_S=300 AB_LABEL=s40-dx-streamk OUT="$OUT/r" scripts/wheel-ab.sh .prebuilt/s39a .prebuilt/s40a \
  "Qwen3-8B linear_cross_entropy_fwd_bwd" "8B linear_cross_entropy_fwd_bwd"
cd "$OUT/r"
timeout 170 "$repo"/.prebuilt/s40a/coda_device_tests > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
CODA_REQUIRE_GPU=1 timeout $((585 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider -k "cross_entropy or ce_" "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$OUT" && tar -czf r.tgz r && rm -rf r
