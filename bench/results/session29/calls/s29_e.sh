#!/usr/bin/env bash
# Session 29, call 5 (asked as nvidia-h200; adapts). Wheel of a2b92ff (own per-column node, H100
# rows re-tuned). H200: the op tuner at M = 16384 (1B, 8B) on the ops with Pingpong 128x192 or a
# per-column partial (none of the H200 rows saw either), then the main job. H100: the main job,
# the Python GPU tests, then the fused ops of 1B at M = 16384 and a random M. One tarball back.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=index,name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
train() {
  mkdir -p train && (cd train && timeout "$1" python3 -m coda.train --out "$OUT/r/train" > "$OUT/r/train.log" 2>&1; echo "train rc=$?")
  grep -A6 "^variant" train.log; grep -E "PASS|MISS|Error" train.log | head -5
}
if grep -q H200 gpu.txt; then
  OPS=linear_swiglu_bwd,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_bias_gelu_save_pre,linear_bias_gelu_bwd,linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv,linear_rmsnorm_rope,linear_rope,linear_residual_rms,linear_rmsnorm,linear_cross_entropy
  timeout 330 python3 -m coda.bench tune --models 1B,8B --ops $OPS --tokens 16384 --seed 295 --out "$OUT/r/tune_1b8b" > tune_1b8b.log 2>&1
  echo "tune rc=$?"; grep -E "within" tune_1b8b.log; cat tune_1b8b/op_table.inc 2>/dev/null
  train 220
else
  train 220
  CODA_REQUIRE_GPU=1 timeout 170 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
  echo "pytest rc=$?"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
  timeout 150 python3 -m coda.bench ops --models 1B --tokens 16384 --random-tokens --seed 2951 --rounds 5 --out "$OUT/r/ops_1b" > ops_1b.log 2>&1
  echo "ops rc=$?"; grep -E "^random" ops_1b.log
fi
cd "$OUT" && tar -czf r.tgz r && rm -rf r
