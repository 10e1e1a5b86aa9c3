#!/usr/bin/env bash
# Twenty-seventh session, call 2 (2 GPUs): FSDP2 with fp32 master shards (--parallel fsdp
# --precision amp, README widths), the norm weights gathered between layers (A: the tree before
# this session's change, .prebuilt/s27_py_old) against all gathered before the first layer (B: this
# tree), A B A each with hf_compile and coda in one process (100 steps), then B with every variant
# (200 steps: the parity check), then the distributed and sharding tests on B. The carried wheel
# (HEAD's kernels) under each side's Python.
set -u
repo=$PWD
mkdir -p "$OUT"
whl=$(ls .prebuilt/coda-*.whl)
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/gpu.txt" 2>&1; cat "$OUT/gpu.txt"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1; head -5 "$OUT/topo.txt"
run() {  # name python_dir args...
  local name=$1 py=$2; shift 2
  rm -rf "$repo/python/coda" && cp -r "$py" "$repo/python/coda"
  local t0=$SECONDS
  CODA_WHEEL=$whl CODA_PYTHON_OVERLAY=1 TRAIN_GPUS=2 TRAIN_ARGS="--parallel fsdp --precision amp $*" OUT=$OUT/$name \
    timeout 300 scripts/device-run.sh train > "$OUT/$name.log" 2>&1
  echo "$name rc=$? in $((SECONDS - t0)) s"; grep -A6 "^variant" "$OUT/$name.log" | head -8
  rm -f "$OUT/$name"/0-all.tgz "$OUT/$name"/install.log
}
cp -r python/coda /tmp/py_new
short="--steps 100 --variants hf_compile,coda"
run A1 .prebuilt/s27_py_old/python/coda $short
run B1 /tmp/py_new $short
run A2 .prebuilt/s27_py_old/python/coda $short
run B_full /tmp/py_new
grep -E "PASS|MISS" "$OUT/B_full.log" | head -6
site=$(cd / && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r /tmp/py_new/. /tmp/ov/coda/
cd "$OUT" && PYTHONPATH=/tmp/ov CODA_REQUIRE_GPU=1 CODA_REQUIRE_GPUS=2 timeout 300 python3 -m pytest -q -p no:cacheprovider -rA \
  "$repo/tests/python/test_gpu_distributed.py" "$repo/tests/python/test_sharding_cpu.py" > pytest_dist.log 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|^E  " pytest_dist.log | head -20; tail -1 pytest_dist.log
