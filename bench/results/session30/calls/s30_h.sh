#!/usr/bin/env bash
# Session 30, call 8 (H100). Wheel + device tests of 62ac933 (the CE row pass through one
# for_each_access; the contract floors through one meets_contract_floored): the C++ device tests of
# the epilogue programs, the backward ops, cross-entropy, bad input, NaN, capture; the Python GPU
# tests of cross-entropy; the kernels of one CE fwd+bwd call (call 4 has 1eb3c3b's).
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout 150 "$repo/.prebuilt/coda_device_tests" --gtest_filter='EpiloguePrograms.*:BackwardOps.*:*Entropy*:*entropy*:*BadInput*:*Nan*:*NaN*:*Capture*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  FAILED|tests from .* ran|^\[  PASSED" device_tests.log | tail -6
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 100 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" -k "entropy" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
timeout 60 python3 "$repo/bench/results/session30/calls/ce_profile.py" > ce_profile.log 2>&1
echo "profile rc=$? at $((SECONDS - t0)) s"; awk '/^==/{printf "\n%s", $0} /cross_entropy_rows/{printf "  row %s", $1}' ce_profile.log; echo
cd "$OUT" && tar -czf r.tgz r && rm -rf r
