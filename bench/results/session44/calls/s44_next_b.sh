#!/usr/bin/env bash
# Prepared in the 44th session for the next (H100, then an H200 with needs_h200). The QK-norm
# programs compiled once per head_dim (results/session44/qknorm_per_head_dim.diff: each kernel holds
# only its own path; compiled and host-tested in the 44th session, never GPU-run). Build NEW from
# main with the diff applied (git apply; CODA_BINARIES=1 scripts/build-wheel.sh; tests.tar.xz as
# usual), OLD from main, carry both (wheel folders: OLD=.prebuilt/sNNm NEW=.prebuilt/sNNd), then
# here: (1) the device tests of the QK-norm ops under NEW (both head_dims); (2) the Python QK-norm
# and layer tests; (3) the op-level A/B, processes old new new old, both clock states. Expected:
# 1B (head_dim 64) back to the 43rd session's time, 0.92-0.96 x main's (main's single kernel ran
# it 1.04-1.09 x slower); 8B / Qwen3-8B (head_dim 128) unchanged; the 8B RoPE control ~1.00.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
tar -xJf "$repo/${NEW:?}/tests.tar.xz" -C "$repo/$NEW" || exit 1
timeout 120 "$repo/$NEW/coda_device_tests" --gtest_filter='*QkNorm*:*qknorm*:*BadInput*:*Nan*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
python3 -m pip install -q --no-deps --force-reinstall "$repo/$NEW"/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 150 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python/test_gpu_layer_parity.py" \
  "$repo/tests/python/test_gpu_ops.py" -k "qknorm or qk_norm or layer" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$repo"
AB_LABEL=qknorm-per-head-dim AB_BUDGET_S=$((570 - SECONDS + t0)) scripts/wheel-ab.sh "${OLD:?}" "$NEW" \
  "1B linear_qknorm_rope,linear_rmsnorm_qknorm_rope,linear_qknorm_rope_save_pre" \
  "8B linear_qknorm_rope,linear_rmsnorm_qknorm_rope,linear_rope"
cd "$OUT" && tar -czf r.tgz r ab && rm -rf r ab
