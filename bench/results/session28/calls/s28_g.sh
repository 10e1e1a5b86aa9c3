#!/usr/bin/env bash
# Session 28, call 7: the wheel of e6b339e (the H100 op table's 21 new rows). On an H200: the main
# job (none since c370e80) and that GPU's 8B rows at M = 25345, 32768. On an H100: the 8B fused ops
# in one process (all variants) at M = 8192, 16384, 25345 and a random M, and the Python GPU tests.
# One tarball back.
set -u
repo=$PWD
mkdir -p "$OUT/r"
gpu=$(nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt")
echo "$gpu"
whl=$(ls .prebuilt/coda-*.whl)
if [[ $gpu == *H200* ]]; then
  t0=$SECONDS
  CODA_WHEEL=$whl OUT=$OUT/r/train timeout 330 scripts/device-run.sh train > "$OUT/r/train.log" 2>&1
  echo "train rc=$? in $((SECONDS - t0)) s"; grep -A8 "^variant" "$OUT/r/train.log" | head -10; grep -E "PASS|MISS|Error" "$OUT/r/train.log" | head -8
  rm -f "$OUT"/r/*/0-all.tgz "$OUT"/r/*/install.log
  python3 -m pip install -q --no-deps --force-reinstall "$whl" > /dev/null 2>&1
  (cd "$OUT" && timeout 200 python3 -m coda.bench tune --models 8B \
    --ops linear_swiglu_bwd,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_rmsnorm_rope \
    --tokens 25345,32768 --seed 28 --out "$OUT/r/tune8b" > "$OUT/r/tune8b.log" 2>&1)
  echo "tune rc=$?"; grep -E "^\| linear_" "$OUT/r/tune8b.log" | tail -10; tail -2 "$OUT/r/tune8b.log"
  cat "$OUT/r/tune8b/op_table.inc" 2>/dev/null
else
  python3 -m pip install -q --no-deps --force-reinstall "$whl" > /dev/null 2>&1 || exit 1
  t0=$SECONDS
  (cd "$OUT/r" && PYTHONUNBUFFERED=1 timeout 380 python3 -m coda.bench ops --models 8B --tokens 8192,16384,25345 \
    --random-tokens --seed 2811 --rounds 5 --out "$OUT/r/ops8b" > ops8b.log 2>&1)
  echo "ops rc=$? in $((SECONDS - t0)) s"; grep -E "^\| linear_" "$OUT/r/ops8b.log" | head -90
  cd "$OUT/r"
  CODA_REQUIRE_GPU=1 timeout 170 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
  echo "pytest rc=$?"; tail -1 pytest.log; grep -E "^FAILED|^E " pytest.log | head -20
fi
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$OUT/r"
