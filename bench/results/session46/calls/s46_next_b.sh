#!/usr/bin/env bash
# Prepared in the 46th session for the next (H100, then an H200 with needs_h200). Branch
# gated-no-allocate (80d7e24 = main at a3e7fa6 + GatedPairStore's 8-byte stores as
# st.global.L1::no_allocate, the store and the bf16x2 pack shared with RegisterTileStore in
# epilogue/global_store.hpp; the 46th session's wheel s46s is 73d9e04, before the shared pack:
# build the branch head).
# The 46th session found the QK-norm's register-stored Pre evicting what its next loads needed from
# the little L1 that six mainloop stages leave (waits 18 % -> 6.5 % of the stall samples with
# no_allocate stores); the SwiGLU forward's gated output Y is stored from registers the same way.
# Carry OLD=.prebuilt/ab/<a wheel of main> and NEW=.prebuilt/ab/<a wheel of the branch>
# (CODA_BINARIES=1 scripts/build-wheel.sh, then scripts/pack-ab-wheel.sh NAME; the 46th session
# packed them as s46n, code-identical to main, and s46s, if .prebuilt survived). The SwiGLU and
# QK-norm device tests, then the A/B, processes old new new old, both clock states; RoPE and the
# QK-norm save-Pre (whose code only moved) as controls. Predicted: SwiGLU forward rows 0.97-1.00 x
# (its epilogue reads nothing after the stores but the next tile's operands, so less to gain than
# the QK-norm had); controls 1.00 x.
set -u
repo=$PWD; t0=$SECONDS
OLD=${OLD:?set OLD=.prebuilt/ab/<wheel of main>} NEW=${NEW:?set NEW=.prebuilt/ab/<wheel of the branch>}
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
tar -xJf "$repo/$NEW/tests.tar.xz" -C "$repo/$NEW" || exit 1
timeout 120 "$repo/$NEW/coda_device_tests" --gtest_filter='*SwiGlu*:*Swiglu*:*swiglu*:*QkNorm*:*Nan*:*BadInput*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -4
cd "$repo"
OUT=$OUT/ab AB_LABEL=gated-no-allocate AB_BUDGET_S=$((570 - SECONDS + t0)) scripts/wheel-ab.sh "$OLD" "$NEW" \
  "8B linear_swiglu,linear_rmsnorm_swiglu,linear_rope" \
  "1B linear_swiglu,linear_rmsnorm_swiglu" \
  "Qwen3-8B linear_rmsnorm_swiglu,linear_rmsnorm_qknorm_rope_save_pre"
cd "$OUT" && tar -czf r.tgz r ab && rm -rf r ab
