#!/usr/bin/env bash
# Prepared in the 44th session for the next (H100 first, then an H200 with needs_h200; carry a
# wheel of main as .prebuilt/sNN and set WHEEL=.prebuilt/sNN). The benchmark of record on the
# 44th session's library (b3d0b5f and later: the 16-byte RoPE backward, the QK-norm node's one-head
# path, the H100's 8B / Qwen3-8B QK-norm RoPE row on ovcoop), as the 43rd session ran it
# (results/session43/calls/s43_a.sh): every op at 8B, 1B and Qwen3-8B widths, every variant,
# M = 16384 and the random M of seed 3407 (5958), as the GPU comes and sustained, then issue 13's
# bars against the 43rd session's record (`--against`). Expected from the A/Bs: the 8B / Qwen3-8B
# QK-norm RoPE rows ~0.89 x their time at 16384 on the H100 (1.05-1.06 x matmul), the 1B QK-norm
# rows 1.04-1.09 x theirs (both GPUs), the rest within noise.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
export PYTHONUNBUFFERED=1 CODA_COMMIT=$(cat "$repo/${WHEEL:?}/COMMIT")
python3 -m pip install -q --no-deps --force-reinstall "$repo/$WHEEL"/coda-*.whl > /dev/null 2>&1 || exit 1
for name in ops ops_sustained; do
  extra=""; [ $name = ops_sustained ] && extra="--sustained 20"
  old=ops_py.$gpu.json; [ $name = ops_sustained ] && old=ops_py_sustained.$gpu.json
  timeout $((590 - SECONDS + t0)) python3 -m coda.bench ops --models 8B,1B,Qwen3-8B --tokens 16384 --random-tokens \
    --seed 3407 --rounds 5 $extra --out "$OUT/r/$name" > $name.log 2>&1
  echo "$name rc=$? at $((SECONDS - t0)) s"; grep -E "^random" $name.log
  python3 "$repo"/scripts/issue13_bars.py "$OUT/r/$name/ops.json" --against "$repo/bench/results/$old"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
