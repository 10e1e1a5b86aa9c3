#!/usr/bin/env bash
# Session 37, call 1 (H100). A/B of two epilogue changes on the ops whose programs move extra M x N
# tiles (TileStore: SwiGLU-backward dZ, residual H, QK-norm / bias-GELU pre-activations, RMSNorm-
# backward normed; TileLoad: SwiGLU-backward Z, residual R, bias-GELU-backward pre, RMSNorm-backward
# X), processes b s e e s b on one machine, the op, matmul and CODA's plain GEMM in the same rounds
# (outputs checked against float64 first). Controls: linear_rope, linear_qknorm_rope (no tiles).
#   b = .prebuilt/s37b (07ebb94), s = .prebuilt/s37s (aux tile stores from one elected lane),
#   e = .prebuilt/s37e (s + evict-first L2 hint on the aux tile loads).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
ops=linear_swiglu_bwd,linear_residual_rms,linear_qknorm_rope_save_pre,linear_bias_gelu_save_pre,linear_bias_gelu_bwd,linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd,linear_rope,linear_qknorm_rope
for pass in b1 s1 e1 e2 s2 b2; do
  wheel=s37${pass%[12]}
  [ -d "$repo/.prebuilt/$wheel" ] || continue
  left=$((585 - SECONDS + t0)); [ $left -lt 40 ] && break
  python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/$wheel/coda-*.whl > /dev/null 2>&1 || exit 1
  CODA_COMMIT=07ebb94-$wheel timeout $left python3 -m coda.bench ops --models 1B,8B --ops "$ops" \
    --variants coda,torch_matmul,coda_gemm --tokens 16384,5958 --seed 3407 --rounds 5 \
    --out "$OUT/r/$pass" > "$pass.log" 2>&1
  echo "== $pass rc=$? at $((SECONDS - t0)) s"
  grep "^| linear" "$pass.log" | cut -d"|" -f2-7,13 | sed "s/^/$pass /"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
