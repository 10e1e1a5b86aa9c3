#!/usr/bin/env bash
# Session 29, call 4 (H100): the ops with a per-column partial re-tuned on the wheel with CODA's
# own node and the four rows merged from call 3 (their other rows were tuned when the Pingpong
# candidates paid for CUTLASS's local-memory column reduction). Bucket Ms for 1B and 8B, then
# 70B, Qwen3-8B at 12000 and 1B at 4686 (the rows that exist there). One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1
cd "$OUT/r"
OPS=linear_bias_gelu_bwd,linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv
run() {  # name, timeout, tuner arguments...
  local name=$1 limit=$2; shift 2
  timeout "$limit" python3 -m coda.bench tune --ops $OPS --seed 294 --out "$OUT/r/$name" "$@" > "$name.log" 2>&1
  echo "$name rc=$?"; grep -E "within" "$name.log"
}
run tune_1b8b_buckets 220 --models 1B,8B --tokens 4096,8192,32768
run tune_qwen_12000 50 --models Qwen3-8B --tokens 12000
run tune_1b_4686 30 --models 1B --tokens 4686
run tune_70b 200 --models 70B --tokens 16384,4096,8192
cat */op_table.inc
cd "$OUT" && tar -czf r.tgz r && rm -rf r
