#!/usr/bin/env bash
# Session 30, call 2 (H100). Wheel of 0f50229 (the SwiGLU backward's 8 % swizzle fit; the CE
# fwd+bwd first-chunk store). 1. The op tuner (every candidate x matmul in the same rounds, no rows
# merged) on every op at the random M of last session's record, 13350, for 8B, 1B and Qwen3-8B:
# how far each fitted choice is from the best candidate. 2. The same for the SwiGLU backward over
# M = 4096 ... 32768 (the new fit as "today"). 3. The kernels of one CE fwd+bwd call (profiler).
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout 60 python3 "$repo/bench/results/session30/calls/ce_profile.py" > ce_profile.log 2>&1
echo "profile rc=$? at $((SECONDS - t0)) s"; grep "^==" ce_profile.log
timeout 150 python3 -m coda.bench tune --models 1B,8B,Qwen3-8B --ops linear_swiglu_bwd --tokens 4096,5194,8192,9000,13350,24000,32768 \
  --seed 306 --out "$OUT/r/tune_swiglu_bwd_sweep" > tune_swiglu_bwd_sweep.log 2>&1
echo "tune swiglu_bwd sweep rc=$? at $((SECONDS - t0)) s"; grep -E "within" tune_swiglu_bwd_sweep.log
timeout $((570 - SECONDS + t0)) python3 -m coda.bench tune --models 8B,1B,Qwen3-8B --tokens 13350 \
  --seed 307 --out "$OUT/r/tune_13350" > tune_13350.log 2>&1
echo "tune 13350 rc=$? at $((SECONDS - t0)) s"; grep -E "within" tune_13350.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
