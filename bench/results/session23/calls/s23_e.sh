#!/usr/bin/env bash
# Twenty-third session, call 5, asked of an H200 (.prebuilt/new3): the device suite; the forward ops
# ranked inside the layer (8B, 1B) for the H200's table; the README's main job.
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > gpu.txt 2>&1; cat gpu.txt; cat "$repo/.prebuilt/new3/COMMIT"
timeout 150 "$repo/.prebuilt/new3/coda_device_tests" --gtest_brief=1 > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - start)) s"; tail -2 device_tests.log; grep -E "FAILED" device_tests.log | head
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new3/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
for size in 8B 1B; do
  PYTHONPATH=/tmp/whl PYTHONUNBUFFERED=1 timeout 120 python3 -m coda.bench layer-tune --size $size \
    --ops linear_rmsnorm_swiglu,linear_rmsnorm_rope,linear_residual_rms --rounds 7 --out "$OUT/r/lt$size" > lt$size.log 2>&1
  echo "layer-tune $size rc=$? at $((SECONDS - start)) s"; grep -E "^\| linear|written|rror" lt$size.log | head
  tar czf "$OUT/0-all.tgz" . 2>/dev/null
done
cd "$repo"
(OUT="$OUT/r/train" CODA_WHEEL=$(ls "$repo"/.prebuilt/new3/coda-*.whl) timeout 300 scripts/device-run.sh train > "$OUT/r/train.log" 2>&1)
echo "train rc=$? at $((SECONDS - start)) s"; tail -9 "$OUT/r/train.log"
cd "$OUT/r" && tar czf "$OUT/0-all.tgz" . 2>/dev/null
