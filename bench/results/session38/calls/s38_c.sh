#!/usr/bin/env bash
# Session 38, call 3 (H100). (1) A/B of the three H100 rows of a4054b8 (1B: loss-only cross-entropy
# 16384x128256x2048, RMSNorm backward 16384x2048x16384, bias-GELU backward 16384x8192x2048), processes
# old new new old, as the GPU comes and sustained (--sustained 20), the op, matmul and CODA's GEMM in
# the same rounds (outputs checked). Control: the 1B SwiGLU backward (row unchanged).
# old = .prebuilt/s37t (5c1f23e's kernels and tables), new = .prebuilt/s38n (a4054b8).
# (2) The README's main job, coda-train with its defaults, on the new wheel.
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
ops=linear_cross_entropy,linear_cross_entropy_fwd_bwd,linear_rmsnorm_bwd,linear_bias_gelu_bwd,linear_swiglu_bwd
for state in boost sustained; do
  extra=""; [ $state = sustained ] && extra="--sustained 20"
  for pass in o1 n1 n2 o2; do
    wheel=s37t; [ "${pass%[12]}" = n ] && wheel=s38n
    left=$((300 - SECONDS + t0)); [ $left -lt 20 ] && break 2
    python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/$wheel/coda-*.whl > /dev/null 2>&1 || exit 1
    CODA_COMMIT=a4054b8-$wheel timeout $left python3 -m coda.bench ops --models 1B --ops "$ops" \
      --variants coda,torch_matmul,coda_gemm --tokens 16384 --seed 3407 --rounds 5 $extra \
      --out "$OUT/r/${state}_$pass" > "${state}_$pass.log" 2>&1
    echo "== $state $pass rc=$? at $((SECONDS - t0)) s"
  done
done
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s38n/coda-*.whl > /dev/null 2>&1 || exit 1
mkdir -p train
(cd train && CODA_COMMIT=a4054b8 timeout $((585 - SECONDS + t0)) python3 -m coda.train --out "$OUT/r/train" > train.log 2>&1)
echo "train rc=$? at $((SECONDS - t0)) s"; tail -25 train/train.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
