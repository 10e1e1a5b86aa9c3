#!/usr/bin/env bash
# Session 43, calls 1 (H100) and 3 (H200, needs_h200; carry .prebuilt/s43m). The benchmark of
# record on the submitted library (d083239: 28c390c's library + a naming mend that chooses the
# same kernels): the fused ops at 8B, 1B and Qwen3-8B widths, every variant, M = 16384 and the
# random M of seed 3407 (5958), as the GPU comes and sustained; issue 13's bars of each run. The
# last record is the 39th session's (1cf0d79); since then: the CE's 2 GiB chunks, the H200's
# M = 5793 / 11585 / 4096 / 8192 rows, the H100's 4096 / 8192 rows, the refitted rules.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=d083239
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s43m/coda-*.whl > /dev/null 2>&1 || exit 1
for name in ops ops_sustained; do
  extra=""; [ $name = ops_sustained ] && extra="--sustained 20"
  timeout $((590 - SECONDS + t0)) python3 -m coda.bench ops --models 8B,1B,Qwen3-8B --tokens 16384 --random-tokens \
    --seed 3407 --rounds 5 $extra --out "$OUT/r/$name" > $name.log 2>&1
  echo "$name rc=$? at $((SECONDS - t0)) s"; grep -E "^random" $name.log
  python3 "$repo"/scripts/issue13_bars.py "$OUT/r/$name/ops.json"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
