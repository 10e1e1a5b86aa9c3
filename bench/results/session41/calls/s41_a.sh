#!/usr/bin/env bash
# Session 41, call 1 (H100). The CE forward + backward with its logits GEMM as the
# CrossEntropyPartials program and one read of each logits row (.prebuilt/s41a = 899d0e7, main
# ba6ffcf + branch exp-ce-lse-fold) against .prebuilt/s39a (1cf0d79, main's kernels):
# (1) scripts/wheel-ab.sh as the GPU comes, 3 widths at M = 16384; (2) the C++ device suite on
# the new build; (3) the Python GPU tests of cross-entropy and the plain GEMM by name.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
tar -xJf .prebuilt/s41a/tests.tar.xz -C .prebuilt/s41a || exit 1
export PYTHONUNBUFFERED=1
AB_STATES=boost AB_BUDGET_S=${AB_BUDGET_S:-290} AB_LABEL=s41-lse-fold OUT="$OUT/r" scripts/wheel-ab.sh .prebuilt/s39a .prebuilt/s41a \
  "Qwen3-8B linear_cross_entropy_fwd_bwd" "8B linear_cross_entropy_fwd_bwd,linear_rope" "1B linear_cross_entropy_fwd_bwd"
# wheel-ab.sh ends on the old wheel (passes old new new old): the tests need the new one.
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/s41a/coda-*.whl > /dev/null 2>&1 || exit 1
cd "$OUT/r"
timeout 170 "$repo"/.prebuilt/s41a/coda_device_tests > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
CODA_REQUIRE_GPU=1 timeout $((590 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider -k "cross_entropy or ce_ or gemm" "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$OUT" && tar -czf r.tgz r && rm -rf r
