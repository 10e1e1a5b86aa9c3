#!/usr/bin/env bash
# Session 37, call 2 (H100). (1) A/B of the evict-first L2 hint on the epilogue's tile loads:
# processes s e e s e s, same ops and harness as call 1 (s37_a.sh); s = .prebuilt/s37s (call 1's
# one-lane aux stores), e = .prebuilt/s37e (s + EVICT_FIRST on TileLoad's TMA loads).
# (2) The Python GPU suite on e (which holds both changes).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
ops=linear_swiglu_bwd,linear_residual_rms,linear_qknorm_rope_save_pre,linear_bias_gelu_save_pre,linear_bias_gelu_bwd,linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd,linear_rope,linear_qknorm_rope
for pass in s1 e1 e2 s2 e3 s3; do
  wheel=s37${pass%[123]}
  left=$((300 - SECONDS + t0)); [ $left -lt 30 ] && break
  python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/$wheel/coda-*.whl > /dev/null 2>&1 || exit 1
  CODA_COMMIT=07ebb94-$wheel timeout $left python3 -m coda.bench ops --models 1B,8B --ops "$ops" \
    --variants coda,torch_matmul,coda_gemm --tokens 16384,5958 --seed 3407 --rounds 5 \
    --out "$OUT/r/$pass" > "$pass.log" 2>&1
  echo "== $pass rc=$? at $((SECONDS - t0)) s"
done
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s37e/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout $((590 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$OUT" && tar -czf r.tgz r && rm -rf r
