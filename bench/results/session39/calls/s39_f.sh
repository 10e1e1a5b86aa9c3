#!/usr/bin/env bash
# Session 39, call 7 (H100). The QK-norm node with one head a subtile compiled apart from two (a
# uniform branch on head_dim; .prebuilt/s39b = main + that change) against 1cf0d79 (.prebuilt/s39a):
# (1) scripts/wheel-ab.sh on the four QK-norm programs at 8B (head_dim 128) and 1B (64) widths,
# control the 8B RoPE; (2) the C++ device suite (float64 contract, both head sizes, every config)
# and (3) the Python GPU suite on the new build.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
tar -xJf .prebuilt/s39b/tests.tar.xz -C .prebuilt/s39b || exit 1
export PYTHONUNBUFFERED=1
q=linear_qknorm_rope,linear_rmsnorm_qknorm_rope,linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope_save_pre
AB_BUDGET_S=330 AB_LABEL=s39-onehead OUT="$OUT/r" scripts/wheel-ab.sh .prebuilt/s39a .prebuilt/s39b "8B $q,linear_rope" "1B $q"
cd "$OUT/r"
timeout 150 "$repo"/.prebuilt/s39b/coda_device_tests > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
CODA_REQUIRE_GPU=1 timeout $((590 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$OUT" && tar -czf r.tgz r && rm -rf r
