#!/usr/bin/env bash
# Session 36, call 7 (H200). The benchmark of record on an H200, on the same wheel as calls 5-6
# (.prebuilt/s36n = fb9ae51; the H200 table is 1ddf404's, unchanged), in the two clock states:
# as the GPU comes, then every block after 20 ms of GEMM load (--sustained 20). Same models, M
# and seed as calls 5-6.
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=fb9ae51
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s36n/coda-*.whl > /dev/null 2>&1 || exit 1
for name in ops ops_sustained; do
  extra=(); [ $name = ops_sustained ] && extra=(--sustained 20)
  timeout $((590 - SECONDS + t0)) python3 -m coda.bench ops --models 8B,1B,Qwen3-8B --tokens 16384 --random-tokens \
    --seed 3407 --rounds 5 "${extra[@]}" --out "$OUT/r/$name" > $name.log 2>&1
  echo "$name rc=$? at $((SECONDS - t0)) s"
  python3 "$repo"/scripts/issue13_bars.py "$OUT/r/$name/ops.json"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
