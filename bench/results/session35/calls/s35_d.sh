#!/usr/bin/env bash
# Session 35, call 4 (H100, call 3's machine if still held: /tmp/keep has its wheel, else the
# wheel carried in .prebuilt/s35). The Python op tuner (every candidate forced in the op
# benchmark's harness, with matmul and today's choice in the same rounds) on the ops whose programs
# compile ovcoop and whose rows miss issue 13's bars, M = 16384.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
whl=$(ls /tmp/keep/coda-*.whl 2>/dev/null || ls "$repo"/.prebuilt/s35/coda-*.whl)
echo "wheel: $whl"
export PYTHONUNBUFFERED=1 CODA_COMMIT=915e018
python3 -m pip install -q --no-deps --force-reinstall "$whl" > /dev/null 2>&1 || exit 1
cd "$OUT/r"; t0=$SECONDS
timeout 420 python3 -m coda.bench tune --models 8B,1B --ops linear_qknorm_rope,linear_rope,linear_swiglu \
  --tokens 16384 --rounds 5 --out "$OUT/r/tune" > tune.log 2>&1
echo "tune rc=$? at $((SECONDS - t0)) s"; tail -30 tune.log
cd "$OUT" && tar -czf r.tgz r && rm -rf r
