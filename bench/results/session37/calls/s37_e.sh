#!/usr/bin/env bash
# Session 37, call 5 (H100). A/B of the five H100 op-table rows scripts/both_states_picks.py took from
# calls 3 and 4 (8B QKV RMSNorm and RoPE, 8B o-projection residual RMSNorm: Pingpong 128 x 128 ->
# 128 x 192; 1B bias-GELU and its save-pre: the same), processes old new new old, as the GPU comes
# and then sustained (--sustained 20), the op, matmul, CODA's GEMM and eager PyTorch in the same
# rounds (outputs checked). Controls: 8B RMSNorm-RoPE, 1B RoPE (rows unchanged).
# old = .prebuilt/s37s (9ced8dc's tables), new = .prebuilt/s37t (the five rows merged).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
for state in boost sustained; do
  extra=""; [ $state = sustained ] && extra="--sustained 20"
  for pass in o1 n1 n2 o2; do
    wheel=s37s; [ "${pass%[12]}" = n ] && wheel=s37t
    left=$((590 - SECONDS + t0)); [ $left -lt 20 ] && break 2
    python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/$wheel/coda-*.whl > /dev/null 2>&1 || exit 1
    for spec in "8B linear_rmsnorm,linear_rope,linear_residual_rms,linear_rmsnorm_rope" \
                "Qwen3-8B linear_rope,linear_residual_rms" "1B linear_bias_gelu,linear_bias_gelu_save_pre,linear_rope"; do
      read -r model ops <<< "$spec"
      CODA_COMMIT=9ced8dc-$wheel timeout $((590 - SECONDS + t0)) python3 -m coda.bench ops --models "$model" \
        --ops "$ops" --variants coda,torch_matmul,coda_gemm,eager --tokens 16384 --seed 3407 --rounds 5 $extra \
        --out "$OUT/r/${state}_${pass}_$model" > "${state}_${pass}_$model.log" 2>&1
    done
    echo "== $state $pass done at $((SECONDS - t0)) s"
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
