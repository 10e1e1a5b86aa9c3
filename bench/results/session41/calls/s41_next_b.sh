#!/usr/bin/env bash
# Prepared in the 41st session for the next (H100; carry .prebuilt/s39a and .prebuilt/s41m).
# (1) The Python GPU suite on main's build (.prebuilt/s41m, d2eebe0: the plain GEMM by name through
# C.gemm has run only in call 2's benchmark). (2) The four H100 rows of the 41st session's call 3
# that its A/B did not reach, at the M `scripts/table_buckets.py --ab-m` names for them: 2900
# (1B bias-GELU save-Pre 4096, 8B RMSNorm-SwiGLU 4096) and 8500 (8B bias-GELU and save-Pre 8192);
# old = .prebuilt/s39a (1cf0d79: the H100 table before them), new = s41m; controls: RoPE.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s41m/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 230 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$repo"
AB_ROUNDS=10 AB_TOKENS=2900 AB_STATES=boost AB_BUDGET_S=160 AB_LABEL=s41-h100-rows-2900 OUT="$OUT/r/m2900" scripts/wheel-ab.sh .prebuilt/s39a .prebuilt/s41m \
  "8B linear_rmsnorm_swiglu,linear_rope" "1B linear_bias_gelu_save_pre,linear_rope"
AB_TOKENS=8500 AB_STATES=boost AB_BUDGET_S=$((585 - SECONDS + t0)) AB_LABEL=s41-h100-rows-8500 OUT="$OUT/r/m8500" scripts/wheel-ab.sh .prebuilt/s39a .prebuilt/s41m \
  "8B linear_bias_gelu,linear_bias_gelu_save_pre,linear_rope"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
