#!/usr/bin/env bash
# Session 44, call 4 (H100; carry .prebuilt/s44r). (1) Where the overlapped Cooperative kernel's
# QK-norm RoPE loses 7 % of cycles to its plain twin (call 3): Nsight Compute's per-instruction
# stall samples (SourceCounters) of the two ovcoop kernels, 8B QKV shape, M = 16384, clocks left
# alone; the SASS with its samples exported as CSV. (2) The README's main job, `python -m
# coda.train` with its defaults, on s44r (the 16-byte RoPE backward).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r/train"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
W=$repo/.prebuilt/s44r
python3 -m pip install -q --no-deps --force-reinstall "$W"/coda-*.whl > /dev/null 2>&1 || exit 1
timeout 150 ncu --clock-control none --nvtx --nvtx-include "ncu/" --section SpeedOfLight --section WarpStateStats \
  --section SourceCounters --export "$OUT/r/ovcoop_src" \
  python3 "$repo/bench/ncu_gemm_gap.py" --model 8B --m 16384 --op linear_qknorm_rope --only ovcoop > ncu_run.log 2>&1
echo "ncu rc=$? at $((SECONDS - t0)) s"; grep -E "kernel [0-9]|skipped|ERROR|Error" ncu_run.log | head
for k in 0 1; do
  ncu --import ovcoop_src.ncu-rep --launch-skip $k --launch-count 1 --page source --csv --print-source sass \
    > ovcoop_src_k$k.sass.csv 2> ovcoop_src_k$k.err
  echo "source page k$k rc=$? $(wc -l < ovcoop_src_k$k.sass.csv) lines; $(head -c 300 ovcoop_src_k$k.err)"
done
ncu --import ovcoop_src.ncu-rep --page details --print-units base > ovcoop_src.details.txt 2>&1
(cd train && CODA_COMMIT=$(cat "$W/COMMIT") timeout $((590 - SECONDS + t0)) python3 -m coda.train --out "$OUT/r/train" > train.log 2>&1)
echo "train rc=$? at $((SECONDS - t0)) s"; tail -9 train/train.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
