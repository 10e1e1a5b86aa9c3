#!/usr/bin/env bash
# Session 43, call 6 (H100; carry .prebuilt/s43m): the layer benchmark (one decoder layer forward,
# backward, forward + backward against its floor, the layer's GEMMs and SDPA alone, and against
# eager, compiled and Liger PyTorch) at 8B and 1B widths, M = 16384, on d083239. The last run of
# it is the 27th session's (c8d87a7, results/layer_1b_8b.h100.json): coda 1.014 x floor at 8B,
# 1.089 at 1B (compile 1.005 / 1.204).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=d083239
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s43m/coda-*.whl > /dev/null 2>&1 || exit 1
timeout $((560 - SECONDS + t0)) python3 -m coda.bench layer --out "$OUT/r/layer" --sizes 8B,1B --rounds 3 --iters 3 > layer.log 2>&1
echo "layer rc=$? at $((SECONDS - t0)) s"; grep -vE "it/s|s/it" layer.log | tail -12
cd "$OUT" && tar -czf r.tgz r && rm -rf r
