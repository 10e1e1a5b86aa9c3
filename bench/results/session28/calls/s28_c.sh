#!/usr/bin/env bash
# Session 28, call 3 (asks for an H200): the main job as the README runs it on the carried wheel
# of main's device code (none ran on an H200 since c370e80), then the 8B rows the H100 re-tune of
# call 2 moved, tuned on this GPU (M = 16384, the random 25345, 32768). Everything comes back as
# one tarball (a call returns at most 8 files).
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
whl=$(ls .prebuilt/coda-*.whl)
t0=$SECONDS
CODA_WHEEL=$whl OUT=$OUT/r/train timeout 330 scripts/device-run.sh train > "$OUT/r/train.log" 2>&1
echo "train rc=$? in $((SECONDS - t0)) s"; grep -A8 "^variant" "$OUT/r/train.log" | head -10; grep -E "PASS|MISS|Error" "$OUT/r/train.log" | head -8
rm -f "$OUT"/r/*/0-all.tgz "$OUT"/r/*/install.log
python3 -m pip install -q --no-deps --force-reinstall "$whl" > /dev/null 2>&1
(cd "$OUT" && timeout 200 python3 -m coda.bench tune --models 8B \
  --ops linear_swiglu_bwd,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_rmsnorm_rope \
  --tokens 16384,25345,32768 --seed 28 --out "$OUT/r/tune8b" > "$OUT/r/tune8b.log" 2>&1)
echo "tune rc=$?"; grep -E "^\| linear_" "$OUT/r/tune8b.log" | tail -15; tail -2 "$OUT/r/tune8b.log"
cat "$OUT/r/tune8b/op_table.inc" 2>/dev/null
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$OUT/r"
