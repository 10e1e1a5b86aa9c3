#!/usr/bin/env bash
# Session 36, call 5 (H100). The benchmark of record on the new H100 table (.prebuilt/s36n: 1ddf404's
# kernels, the table rows of b3 below, this session's clock record): the fused ops of 8B, 1B and
# Qwen3-8B widths in one process, every variant, M = 16384 and the random M of seed 3407 (5958,
# as the 34th session's run). SUSTAINED=MS: every block after MS ms of GEMM load (the clock of a
# training step), into ops_sustained.
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=${CODA_COMMIT:-s36n}
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s36n/coda-*.whl > /dev/null 2>&1 || exit 1
name=ops; extra=()
[ -n "${SUSTAINED:-}" ] && { name=ops_sustained; extra=(--sustained "$SUSTAINED"); }
timeout $((585 - SECONDS + t0)) python3 -m coda.bench ops --models 8B,1B,Qwen3-8B --tokens 16384 --random-tokens \
  --seed 3407 --rounds 5 "${extra[@]}" --out "$OUT/r/$name" > $name.log 2>&1
echo "ops rc=$? at $((SECONDS - t0)) s"; grep -E "^random" $name.log
python3 "$repo"/scripts/issue13_bars.py "$OUT/r/$name/ops.json"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
