#!/usr/bin/env bash
# Session 36, call 4 (H100). The op tuner at M = 11585 (the H100 table's row nearest M = 10837)
# for the 1B RoPE family, on the new table's wheel (.prebuilt/s36n): call 3 left 1B linear_rope
# at 10837 on that row's Pingpong 128 x 128 (1.12 x matmul) while RMSNorm-RoPE, looked up from the
# new 16384 row (Pingpong 128 x 192), ran 0.90 x its old time there.
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=s36n
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s36n/coda-*.whl > /dev/null 2>&1 || exit 1
timeout 400 python3 -m coda.bench tune --models 1B --tokens 11585 --rounds 5 --seed 3407 \
  --ops linear_rope,linear_rmsnorm_rope,linear_qknorm_rope,linear_rmsnorm_qknorm_rope --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$? at $((SECONDS - t0)) s"
grep -E "^\| linear|within|written" tune.log | cut -c1-200
cd "$OUT" && tar -czf r.tgz r && rm -rf r
