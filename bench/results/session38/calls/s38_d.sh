#!/usr/bin/env bash
# Session 38, call 4 (asked for an H200). A/B of the two H200 rows scripts/both_states_picks.py took
# from the 37th session's call 6 (1B QKV RMSNorm 16384x3072x2048 -> Pingpong 128x192 along N s4;
# 1B QK-norm RoPE -> Pingpong 128x128 along N s8), processes old new new old, as the GPU comes and
# sustained (--sustained 20), the op, matmul and CODA's GEMM in the same rounds (outputs checked).
# Control: the 1B RoPE (row unchanged). old = .prebuilt/s38n (a4054b8), new = .prebuilt/s38h
# (a4054b8 + the two H200 rows).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
for state in boost sustained; do
  extra=""; [ $state = sustained ] && extra="--sustained 20"
  for pass in o1 n1 n2 o2; do
    wheel=s38n; [ "${pass%[12]}" = n ] && wheel=s38h
    left=$((230 - SECONDS + t0)); [ $left -lt 15 ] && break 2
    python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/$wheel/coda-*.whl > /dev/null 2>&1 || exit 1
    CODA_COMMIT=a4054b8-$wheel timeout $left python3 -m coda.bench ops --models 1B \
      --ops linear_rmsnorm,linear_qknorm_rope,linear_rope \
      --variants coda,torch_matmul,coda_gemm --tokens 16384 --seed 3407 --rounds 5 $extra \
      --out "$OUT/r/${state}_$pass" > "${state}_$pass.log" 2>&1
    echo "== $state $pass rc=$? at $((SECONDS - t0)) s"
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
