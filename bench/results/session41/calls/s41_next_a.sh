#!/usr/bin/env bash
# Prepared in the 41st session for the next (H100; carry .prebuilt/s41m and .prebuilt/s41c).
# The CE forward + backward in the fewest equal chunks of <= ~2 GiB of logits (branch
# exp-ce-chunk2g-balanced, a2b2ce5 = .prebuilt/s41c) against main (d2eebe0 = .prebuilt/s41m):
# at Qwen3-8B widths, M = 16384, 3 chunks of 5504 rows instead of 5 (two fp32 dW reduce-adds,
# 10 GB, fewer). Predicted 2-5 % of the op at Qwen3-8B / 8B, ~0 at 1B (V = 128256, H = 2048: 1 GB
# less). At the benchmark of record's random M = 5958 a single chunk holds every row at Qwen3-8B and
# 8B widths (was two): no dW reduce-add at all; the bar there (<= 1.10 x its GEMMs) is met on 0 of 3
# rows on both GPUs (39th session). (1) scripts/wheel-ab.sh as the GPU comes at 16384 and 5958;
# (2) the C++ device tests of cross-entropy on the branch; (3) the Python cross-entropy tests on the
# branch's wheel (wheel-ab.sh leaves it installed).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
tar -xJf .prebuilt/s41c/tests.tar.xz -C .prebuilt/s41c || exit 1
export PYTHONUNBUFFERED=1
AB_STATES=boost AB_BUDGET_S=250 AB_LABEL=s41-ce-chunks OUT="$OUT/r/m16384" scripts/wheel-ab.sh .prebuilt/s41m .prebuilt/s41c \
  "Qwen3-8B linear_cross_entropy_fwd_bwd" "8B linear_cross_entropy_fwd_bwd,linear_rope" "1B linear_cross_entropy_fwd_bwd"
AB_TOKENS=5958 AB_STATES=boost AB_BUDGET_S=170 AB_LABEL=s41-ce-chunks-5958 OUT="$OUT/r/m5958" scripts/wheel-ab.sh .prebuilt/s41m .prebuilt/s41c \
  "Qwen3-8B linear_cross_entropy_fwd_bwd" "8B linear_cross_entropy_fwd_bwd,linear_rope"
cd "$OUT/r"
timeout 100 "$repo"/.prebuilt/s41c/coda_device_tests --gtest_filter='*CrossEntropy*:*cross_entropy*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
CODA_REQUIRE_GPU=1 timeout $((590 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider -k "cross_entropy or ce_" "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$OUT" && tar -czf r.tgz r && rm -rf r
