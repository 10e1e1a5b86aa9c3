#!/usr/bin/env bash
# Session 29, call 1 (asked as nvidia-h200; adapts to the card that comes). Wheel of 49cbac1.
# H200: the op tuner at M = 16384 (1B, 8B) on the ops whose programs compile Pingpong 128x192, a
#   config the H200 table was never tuned with; then the main job at the README defaults; then the
#   Python GPU tests.
# H100: the 1B SwiGLU backward's DRAM bytes per raster x swizzle under ncu (session 28's
#   next_dram_vs_swizzle.sh), then the Python GPU tests at 49cbac1 (the fallback's M bound).
# One tarball back.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=index,name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
if grep -q H200 gpu.txt; then
  OPS=linear_swiglu_bwd,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_bias_gelu_save_pre,linear_bias_gelu_bwd,linear_rmsnorm_rope,linear_rope,linear_residual_rms,linear_rmsnorm,linear_cross_entropy
  timeout 270 python3 -m coda.bench tune --models 1B,8B --ops $OPS --tokens 16384 --seed 29 --out "$OUT/r/tune_1b8b" > tune_1b8b.log 2>&1
  echo "tune rc=$?"; grep -E "within" tune_1b8b.log; cat tune_1b8b/op_table.inc 2>/dev/null | head -40
  mkdir -p train && (cd train && timeout 200 python3 -m coda.train --out "$OUT/r/train" > "$OUT/r/train.log" 2>&1; echo "train rc=$?")
  grep -A6 "^variant" train.log; grep -E "PASS|MISS|Error" train.log | head -5
  CODA_REQUIRE_GPU=1 timeout 100 python3 -m pytest -q -x -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
  echo "pytest rc=$?"; tail -1 pytest.log
else
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | tail -1)
  timeout 200 "$ncu" --clock-control none --kernel-name-base demangled -k "regex:PairDot" \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum \
    python3 "$repo/bench/results/session28/calls/dram_by_swizzle.py" > ncu_dram.log 2>&1
  echo "ncu rc=$?"; grep -E "^launch|dram__bytes|lts__t_sector_hit|gpu__time" ncu_dram.log
  CODA_REQUIRE_GPU=1 timeout 220 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
  echo "pytest rc=$?"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
fi
cd "$OUT" && tar -czf r.tgz r && rm -rf r
