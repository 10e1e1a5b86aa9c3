#!/usr/bin/env bash
# Prepared in the 43rd session for the next (H100; carry OLD and NEW wheel folders, e.g.
# OLD=.prebuilt/sNNm NEW=.prebuilt/sNNr). The RoPE backward with 16-byte accesses
# (results/session43/rope_bwd_16byte.diff: four pairs a lane access instead of one, the few past the
# last 8-column group one at a time, and QkvGradBlocks::at by selects, which drops the kernel's
# 56-byte stack frame; ptxas: 0 B stack, 52 registers, no spills). Written and compiled in the 43rd
# session, never GPU-run. Build NEW from main with the diff applied (git apply, then
# CODA_BINARIES=1 scripts/build-wheel.sh, tests.tar.xz as usual), then here:
# (1) the device tests that run rope_bwd (BackwardOps, NaN, capture, bad input) and the Python
#     layer and op tests under NEW;
# (2) the layer's kernels under OLD and NEW, 8B and 1B widths: the rope_bwd_kernel line. Predicted:
#     8B 0.295 -> ~0.20 ms (603 MB at ~3 TB/s), 1B 0.152 -> ~0.10 ms; every other kernel unchanged.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
tar -xJf "$repo/${NEW:?}/tests.tar.xz" -C "$repo/$NEW" || exit 1
timeout 150 "$repo/$NEW/coda_device_tests" --gtest_filter='*Rope*:*rope*:*BackwardOps*:*Nan*:*Capture*:*BadInput*' \
  > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
python3 -m pip install -q --no-deps --force-reinstall "$repo/$NEW"/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 200 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python/test_gpu_layer_parity.py" \
  "$repo/tests/python/test_gpu_ops.py" -k "rope or layer" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log
for pass in o1 n1; do
  dir=${OLD:?}; [ $pass = n1 ] && dir=$NEW
  python3 -m pip install -q --no-deps --force-reinstall "$repo/$dir"/coda-*.whl > /dev/null 2>&1 || exit 1
  for size in 8B 1B; do
    timeout 100 python3 -m coda.bench kernels --size $size --variants coda --iters 5 --m 16384 --top 40 \
      --out "$OUT/r/kernels_${pass}_$size" > kernels_${pass}_$size.log 2>&1
    echo "kernels $pass $size rc=$?: $(grep -E 'rope_bwd|SM clock' kernels_${pass}_$size.log | tr -s ' ' | tr '\n' ';')"
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
