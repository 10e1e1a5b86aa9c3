#!/usr/bin/env bash
# Session 28, call 9 (two H200s, asked as nvidia-h200-x2): two independent single-GPU jobs side by
# side. GPU 0: the op tuner at M = 16384 on the ops whose programs compile Pingpong 128x192, a
# config the H200 tables were never tuned with (1B, 8B, then 70B as time allows). GPU 1: the main
# job at the README defaults (none on an H200 since c370e80), then the Python GPU tests.
# One tarball back.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=index,name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
OPS=linear_swiglu_bwd,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_bias_gelu_save_pre,linear_bias_gelu_bwd,linear_rmsnorm_rope,linear_rope,linear_residual_rms,linear_rmsnorm,linear_cross_entropy
(
  cd "$OUT/r" && export CUDA_VISIBLE_DEVICES=0 PYTHONUNBUFFERED=1
  timeout 300 python3 -m coda.bench tune --models 1B,8B --ops $OPS --tokens 16384 --seed 28 --out "$OUT/r/tune_1b8b" > tune_1b8b.log 2>&1
  echo "tune 1B,8B rc=$?" > tune_rc.txt
  timeout 230 python3 -m coda.bench tune --models 70B --ops $OPS --tokens 16384 --seed 28 --out "$OUT/r/tune_70b" > tune_70b.log 2>&1
  echo "tune 70B rc=$?" >> tune_rc.txt
) &
(
  mkdir -p "$OUT/r/train" && cd "$OUT/r/train" && export CUDA_VISIBLE_DEVICES=1 PYTHONUNBUFFERED=1
  timeout 330 python3 -m coda.train --out "$OUT/r/train" > "$OUT/r/train.log" 2>&1
  echo "train rc=$?" > "$OUT/r/train_rc.txt"
  cd "$OUT/r" && CODA_REQUIRE_GPU=1 timeout 190 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
  echo "pytest rc=$?" >> "$OUT/r/train_rc.txt"
) &
wait
cat "$OUT/r/tune_rc.txt" "$OUT/r/train_rc.txt"
grep -A8 "^variant" "$OUT/r/train.log" | head -10; grep -E "PASS|MISS|Error" "$OUT/r/train.log" | head -5
tail -1 "$OUT/r/pytest.log"; grep -E "^FAILED" "$OUT/r/pytest.log" | head
for t in tune_1b8b tune_70b; do grep -E "within" "$OUT/r/$t.log"; cat "$OUT/r/$t/op_table.inc" 2>/dev/null; done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
