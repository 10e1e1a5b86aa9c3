#!/usr/bin/env bash
# For the next session (not run in the twenty-seventh): one H100 call that decides branch
# s27-row-partials-unchecked. Carry .prebuilt/s27_branch (its wheel, coda_device_tests and
# coda-bench, built from the branch) and a wheel of main's HEAD as .prebuilt/coda-*.whl (rebuild it
# if main's device code moved: scripts/build-wheel.sh python3.12). Then:
#   1. the branch's device suite (ragged M and N: every op test), and its op tests with the
#      autotuner on, as scripts/device-run.sh runs them;
#   2. the three ops it changes (four cases), 1B and 8B, M = 16384 and a random M, in processes
#      A B B A (A = main's wheel, B = the branch's): each process times the op, PyTorch's matmul
#      and eager PyTorch on the same operands, outputs checked (torch.compile left out for time);
#      compare each process's op / matmul ratio.
set -u
mkdir -p "$OUT"
./.prebuilt/s27_branch/coda_device_tests --gtest_brief=1 > "$OUT/device_tests_branch.log" 2>&1
echo "device tests rc=$?"; tail -3 "$OUT/device_tests_branch.log"
CODA_TUNE=1 CODA_TUNE_CACHE=$(mktemp -d) ./.prebuilt/s27_branch/coda_device_tests --gtest_brief=1 \
  --gtest_filter='ForwardOps.*:BackwardOps.*' > "$OUT/device_tests_branch_tuned.log" 2>&1
echo "device tests (tuned) rc=$?"; tail -2 "$OUT/device_tests_branch_tuned.log"
side() {  # name wheel
  python3 -m pip install -q --no-deps --force-reinstall "$2" > /dev/null 2>&1 || exit 1
  (cd "$OUT" && python3 -m coda.bench ops --models 1B,8B --variants coda,torch_matmul,eager --ops linear_swiglu_bwd,linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv,linear_bias_gelu_bwd \
    --tokens 16384 --random-tokens --seed 27 --rounds 7 --out "$OUT/$1" > "$OUT/$1.log" 2>&1)
  echo "== $1"; grep -E "^\| linear_" "$OUT/$1.log" | tail -16
}
main_whl=$(ls .prebuilt/coda-*.whl) branch_whl=$(ls .prebuilt/s27_branch/coda-*.whl)
side A1 "$main_whl"; side B1 "$branch_whl"; side B2 "$branch_whl"; side A2 "$main_whl"
